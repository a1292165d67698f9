// Typed arrays inside panel data, across the two ways data reaches the browser code: VS Code's
// postMessage (which may deliver a typed array, a plain array or an index-keyed object depending
// on the version) and the JSON embedded in a standalone report (base64 of little-endian float64).
import type { MatrixView, PanelData, VariantsAnswer } from '../protocol';

/** Id of the <script type="application/json"> that carries a standalone report's data. */
export const REPORT_DATA_ID = 'attention-lens-data';

interface EncodedArray {
  float64: string; // base64
}

function toBase64(bytes: Uint8Array): string {
  let binary = '';
  const chunk = 0x8000;
  for (let i = 0; i < bytes.length; i += chunk) binary += String.fromCharCode(...bytes.subarray(i, i + chunk));
  return btoa(binary);
}

function fromBase64(text: string): Uint8Array {
  const binary = atob(text);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

const isMatrixView = (value: unknown): value is MatrixView =>
  typeof value === 'object' && value !== null && 'rowBlock' in value && 'data' in value;

/** Deep copy of `value` with every MatrixView's data passed through `convert`. */
function mapMatrixData(value: unknown, convert: (data: unknown) => unknown): unknown {
  if (Array.isArray(value)) return value.map((item) => mapMatrixData(item, convert));
  if (typeof value !== 'object' || value === null) return value;
  if (isMatrixView(value)) return { ...value, data: convert(value.data) };
  return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, mapMatrixData(item, convert)]));
}

/** JSON-safe text of panel data (typed arrays as base64, so -inf and NaN survive exactly). */
export function encodePanelData(data: PanelData[]): string {
  const encoded = mapMatrixData(data, (array): EncodedArray => {
    const float64 = Float64Array.from(array as ArrayLike<number>);
    return { float64: toBase64(new Uint8Array(float64.buffer)) };
  });
  return JSON.stringify(encoded);
}

export function decodePanelData(text: string): PanelData[] {
  return mapMatrixData(JSON.parse(text), (array) =>
    new Float64Array(fromBase64((array as EncodedArray).float64).buffer),
  ) as PanelData[];
}

/** Data as delivered by postMessage (typed array, plain array or index-keyed object) as numbers. */
function toNumbers(array: unknown): Float64Array | Float32Array {
  if (array instanceof Float64Array || array instanceof Float32Array) return array;
  if (Array.isArray(array)) return Float64Array.from(array as number[]);
  const indexed = array as Record<string, number>;
  return Float64Array.from({ length: Object.keys(indexed).length }, (_, i) => indexed[i] ?? NaN);
}

/** Panel data as posted by the host, with every matrix's data a typed array again. */
export function normalizePanelData(data: PanelData): PanelData {
  return mapMatrixData(data, toNumbers) as PanelData;
}

/** An answer about a larger result (VariantsAnswer), with its views' data typed arrays again. */
export function normalizeVariantsAnswer(answer: VariantsAnswer): VariantsAnswer {
  return mapMatrixData(answer, toNumbers) as VariantsAnswer;
}

export function normalizeMatrixView(view: MatrixView): MatrixView {
  return { ...view, data: toNumbers(view.data) };
}
