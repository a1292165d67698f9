// One self-contained HTML file with the panel's views of some problems: the panel's own script
// and CSS inlined, the data embedded as JSON (matrices over 512×512 as their max-pooled
// overview), under the same CSP as the panel (scripts only with this file's nonce). Opens
// offline in any browser. Used by `attention-lens render` and by the Export command.
import type { AttentionResult, Problem } from '../core/types';
import { encodePanelData, REPORT_DATA_ID } from '../views/codec';
import { contentSecurityPolicy, htmlPage, inlineSafe, newNonce } from '../views/html';
import { panelDataOf } from '../views/model';

export interface ReportAssets {
  /** dist/webview.js */
  script: string;
  /** media/panel.css */
  css: string;
}

export function renderReportHtml(runs: { problem: Problem; result: AttentionResult }[], assets: ReportAssets): string {
  // The report numbers its problems 0…n−1 (a subset of a file's problems keeps its names).
  const problems = runs.map((run, index) => ({ ...run.problem, index }));
  const data = runs.map((run, index) =>
    panelDataOf({ uri: '', fileName: 'Attention Lens report', problems, problemIndex: index, result: run.result }),
  );
  const nonce = newNonce();
  const title = problems.length === 1 ? problems[0].name ?? 'Attention' : `Attention: ${problems.length} problems`;
  // JSON inside <script type="application/json"> is never executed; `<` is escaped so that no
  // token text can end the element.
  const json = encodePanelData(data).replace(/</g, '\\u003c');
  return htmlPage({
    csp: contentSecurityPolicy({ nonce }),
    title,
    head: `<meta name="generator" content="Attention Lens">\n<style>\n${inlineSafe(assets.css, 'style')}\n</style>`,
    bodyAttributes: 'data-mode="panel" data-standalone',
    body: `<script type="application/json" id="${REPORT_DATA_ID}">${json}</script>
<script type="module" nonce="${nonce}">
${inlineSafe(assets.script, 'script')}
</script>`,
  });
}
