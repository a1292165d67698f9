// The panel's heavy parts — plotly.js (4.8 MB) and the toolkit's elements — load after the first
// paint as classic scripts from dist/panel/ (the page's <body data-assets>, an asWebviewUri), each
// with the page's nonce: the CSP allows nothing else. The standalone report has them inline
// already (webview/report.ts), and nothing is fetched.
export type Plotly = (typeof import('plotly.js-dist-min'))['default'];

/** Where plotly's classic script puts itself (plotly's package types declare it otherwise). */
const page = window as unknown as { Plotly?: Plotly };

/** For the report's bundle, which has plotly inside (webview/reportGlobals.ts). */
export function providePlotly(plotly: Plotly): void {
  page.Plotly = plotly;
}

/** Loads `dist/panel/<name>` once, as a script carrying this page's nonce. */
const loads = new Map<string, Promise<void>>();
function loadScript(name: string): Promise<void> {
  let loading = loads.get(name);
  if (!loading) {
    loading = new Promise<void>((resolve, reject) => {
      const script = document.createElement('script');
      script.nonce = document.querySelector<HTMLScriptElement>('script[nonce]')?.nonce ?? '';
      script.src = new URL(name, document.body.dataset.assets ?? document.baseURI).href;
      script.onload = () => resolve();
      script.onerror = () => reject(new Error(`could not load ${name}`));
      document.head.append(script);
    });
    loads.set(name, loading);
  }
  return loading;
}

/** plotly once the toolkit has come: in code-server both travel one websocket, and the
 * toolkit's 0.1 MB of controls arrived behind plotly's 4.8 MB, ~0.5 s late. (A toolkit that does
 * not load leaves the controls plain; plotly still comes.) */
export async function loadPlotly(): Promise<Plotly> {
  if (!page.Plotly) {
    await loadToolkit().catch(() => undefined);
    await loadScript('plotly.min.js');
  }
  return page.Plotly!;
}

/** plotly when it has loaded already (for cleanup that need not wait for it). */
export function plotlyIfLoaded(): Plotly | undefined {
  return page.Plotly;
}

async function loadToolkit(): Promise<void> {
  if (!customElements.get('vscode-button')) await loadScript('toolkit.js');
}
