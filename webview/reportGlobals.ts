// plotly in place before the panel's code runs, as after its classic script has loaded: the
// report's bundle imports this first (webview/report.ts).
import Plotly from 'plotly.js-dist-min';
import { providePlotly } from './plotlyLoader';

providePlotly(Plotly);
