// The part of plotly.js's API the panel uses (the package ships no types).
declare module 'plotly.js-dist-min' {
  export interface PlotlyHTMLElement extends HTMLElement {
    on(event: 'plotly_hover' | 'plotly_click', handler: (event: PlotMouseEvent) => void): void;
    on(event: 'plotly_unhover', handler: () => void): void;
    on(event: 'plotly_relayout', handler: (event: Record<string, unknown>) => void): void;
    on(event: 'plotly_afterplot', handler: () => void): void;
  }
  export interface PlotMouseEvent {
    points: { x: number; y: number; pointNumber: [number, number] }[];
    event: MouseEvent;
  }
  const Plotly: {
    newPlot(root: HTMLElement, data: object[], layout: object, config: object): Promise<PlotlyHTMLElement>;
    /** Draws like newPlot the first time; after that updates the plot in place (no rebuild). */
    react(root: HTMLElement, data: object[], layout: object, config: object): Promise<PlotlyHTMLElement>;
    relayout(root: HTMLElement, update: object): Promise<PlotlyHTMLElement>;
    toImage(root: HTMLElement, options: { format: 'png' | 'svg'; width?: number; height?: number; scale?: number }): Promise<string>;
    purge(root: HTMLElement): void;
    Plots: { resize(root: HTMLElement): void };
  };
  export default Plotly;
}
