// Text of numbers and labels as the panel prints them.

/** Four significant decimals for tooltips, −∞ for blocked cells. */
export function num(value: number, digits = 4): string {
  if (value === -Infinity) return '−∞';
  if (value === Infinity) return '∞';
  if (Number.isNaN(value)) return 'NaN';
  if (value !== 0 && (Math.abs(value) >= 1e5 || Math.abs(value) < 1e-3)) return value.toExponential(digits - 1);
  return value.toFixed(digits).replace(/\.?0+$/, '') || '0';
}

/** Shorter text printed inside a heatmap cell. */
export function cellText(value: number): string {
  if (value === -Infinity) return '−∞';
  if (!Number.isFinite(value)) return num(value);
  return Math.abs(value) >= 100 || (value !== 0 && Math.abs(value) < 0.01) ? value.toExponential(1) : value.toFixed(2);
}

export function percent(value: number): string {
  return `${Math.round(value * 100)}%`;
}

const SI = ['', 'K', 'M', 'G', 'T', 'P', 'E'];

export function flops(value: number): string {
  const power = Math.min(SI.length - 1, Math.max(0, Math.floor(Math.log10(Math.max(value, 1)) / 3)));
  return `${(value / 1000 ** power).toPrecision(3)} ${SI[power]}FLOP`;
}

export { formatBytes as bytes } from '../src/core/words';

/** "query 2 (am)" or "query 2" when there is no token. */
export function named(kind: string, index: number, tokens?: string[]): string {
  const token = tokens?.[index];
  return token === undefined ? `${kind} ${index + 1}` : `${kind} ${index + 1} (${token})`;
}
