// Colours from VS Code's theme variables (set on <body> by VS Code; the standalone report and the
// tests define the same variables), so heatmaps follow light, dark and high-contrast themes.
import type { PanelState } from '../src/protocol';

export interface ThemeColors {
  foreground: string;
  background: string;
  muted: string;
  grid: string;
  accent: string;
  blocked: string;
  fontFamily: string;
  highContrast: boolean;
}

function cssVariable(name: string, fallback: string): string {
  return getComputedStyle(document.body).getPropertyValue(name).trim() || fallback;
}

export function themeColors(): ThemeColors {
  return {
    foreground: cssVariable('--vscode-editor-foreground', '#333333'),
    background: cssVariable('--vscode-editor-background', '#ffffff'),
    muted: cssVariable('--vscode-descriptionForeground', '#717171'),
    grid: cssVariable('--vscode-panel-border', '#80808059'),
    accent: cssVariable('--vscode-charts-blue', '#1a85ff'),
    blocked: cssVariable('--vscode-charts-red', '#e51400'),
    fontFamily: cssVariable('--vscode-font-family', 'system-ui, sans-serif'),
    highContrast: document.body.classList.contains('vscode-high-contrast') ||
      document.body.classList.contains('vscode-high-contrast-light'),
  };
}

export type ColorScale = string | [number, string][];

/** A plotly colour scale: a named perceptual one, or background → accent of the current theme. */
export function colorScaleOf(name: PanelState['colorScale'], colors: ThemeColors): ColorScale {
  return name === 'Theme' ? [[0, colors.background], [1, colors.accent]] : name;
}

/** Calls `onChange` when VS Code switches theme (it swaps the body's classes). */
export function watchTheme(onChange: () => void): void {
  let previous = document.body.className;
  new MutationObserver(() => {
    if (document.body.className === previous) return;
    previous = document.body.className;
    onChange();
  }).observe(document.body, { attributes: true, attributeFilter: ['class'] });
}
