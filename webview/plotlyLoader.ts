// plotly.js, loaded after the first paint: its 4.8 MB would otherwise be fetched, parsed and run
// before the panel can show anything. In the panel's split bundle the import below is its own
// chunk, fetched from dist/panel/ with the page's nonce (module imports inherit it); in the
// single-file report it is inlined and only evaluated when first asked for.
import type PlotlyApi from 'plotly.js-dist-min';

export type Plotly = typeof PlotlyApi;

let loading: Promise<Plotly> | undefined;
let loaded: Plotly | undefined;

export function loadPlotly(): Promise<Plotly> {
  loading ??= import('plotly.js-dist-min').then((module) => (loaded = module.default));
  return loading;
}

/** plotly when it has loaded already (for cleanup that need not wait for it). */
export function plotlyIfLoaded(): Plotly | undefined {
  return loaded;
}
