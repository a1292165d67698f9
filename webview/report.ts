// Entry of the single-file bundle the standalone HTML report inlines (dist/webview.js): plotly
// and the toolkit's elements are part of it and in place before the panel's code starts, so the
// report, offline and from one file, fetches nothing.
import './reportGlobals';
import './toolkitElements';
import './main';
