import { escapeHtml as esc, renderHtmlTable, type RenderableTable } from '../tables/render.js';
import type { RenderedChart } from './charts.js';

/** Everything the page shows, already computed. */
export interface ReportPage {
  title: string;
  generatedAt: string;
  plensVersion: string;
  warehouse: string;
  summary: Array<{ label: string; value: string }>;
  charts: RenderedChart[];
  tables: RenderableTable[];
  metadata: RenderableTable[];
  /** Sections left out, and why (missing or empty views). */
  skipped: string[];
  /** Warnings from the chart libraries. */
  warnings: string[];
}

/** Rows a long table shows before the rest collapses into <details>. */
export const TABLE_PREVIEW_ROWS = 10;

/**
 * One self-contained HTML page: inline CSS and inline SVG, no script, no external resource. The
 * Content-Security-Policy makes a browser refuse any fetch, so "works offline" is enforced, not hoped.
 */
export function renderPage(page: ReportPage): string {
  const toc = [
    ['summary', 'Summary'],
    ...(page.charts.length ? [['charts', 'Charts']] : []),
    ...(page.tables.length ? [['tables', 'Tables']] : []),
    ['metadata', 'Run metadata'],
    ...(page.skipped.length || page.warnings.length ? [['notes', 'Notes']] : []),
  ];
  const body: string[] = [];
  body.push(`<header><h1>${esc(page.title)}</h1>`);
  body.push(`<p class="sub">Generated ${esc(page.generatedAt)} by plens ${esc(page.plensVersion)} from <code>${esc(page.warehouse)}</code></p>`);
  body.push(`<nav>${toc.map(([id, label]) => `<a href="#${id}">${esc(label!)}</a>`).join(' ')}</nav></header>`);

  body.push('<section id="summary"><h2>Summary</h2>');
  if (page.summary.length) {
    body.push('<dl class="summary">');
    for (const s of page.summary) body.push(`<div><dt>${esc(s.label)}</dt><dd>${esc(s.value)}</dd></div>`);
    body.push('</dl>');
  } else {
    body.push('<p class="note">The warehouse has no counts to show.</p>');
  }
  body.push('</section>');

  if (page.charts.length) {
    body.push('<section id="charts"><h2>Charts</h2>');
    for (const c of page.charts) {
      body.push(`<figure class="chart" id="chart-${esc(c.id)}"><figcaption><h3>${esc(c.title)}</h3><p class="caption">${esc(c.caption)}</p></figcaption>`);
      // The SVG comes from Vega's renderer, which escapes the data it writes as text and attributes.
      body.push(`<div class="svg">${c.svg}</div></figure>`);
    }
    body.push('</section>');
  }

  if (page.tables.length) {
    body.push('<section id="tables"><h2>Tables</h2>');
    body.push(`<p class="toc">${page.tables.map((t) => `<a href="#table-${esc(t.name)}">${esc(t.title ?? t.name)}</a>`).join('<br>')}</p>`);
    for (const t of page.tables) body.push(renderHtmlTable(t, { preview: TABLE_PREVIEW_ROWS }));
    body.push('</section>');
  }

  body.push('<section id="metadata"><h2>Run metadata</h2>');
  if (page.metadata.length === 0) body.push('<p class="note">No run metadata in the warehouse (no dialogues or judgments yet).</p>');
  for (const t of page.metadata) body.push(renderHtmlTable(t, { preview: TABLE_PREVIEW_ROWS }));
  body.push('</section>');

  if (page.skipped.length || page.warnings.length) {
    body.push('<section id="notes"><h2>Notes</h2><ul>');
    for (const s of page.skipped) body.push(`<li>${esc(s)}</li>`);
    for (const w of page.warnings) body.push(`<li class="warning">chart warning: ${esc(w)}</li>`);
    body.push('</ul></section>');
  }

  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
<meta name="generator" content="plens ${esc(page.plensVersion)}">
<title>${esc(page.title)}</title>
<style>
${STYLE}
</style>
</head>
<body>
${body.join('\n')}
</body>
</html>
`;
}

const STYLE = `
:root { color-scheme: light; }
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; margin: 0 auto; padding: 1rem 2rem 4rem; max-width: 1400px; color: #222; background: #fff; line-height: 1.4; }
h1 { margin: 0.5rem 0 0.2rem; font-size: 1.7rem; }
h2 { margin-top: 2.5rem; border-bottom: 2px solid #555; padding-bottom: 0.2rem; }
h3 { margin: 1.6rem 0 0.4rem; font-size: 1.05rem; }
.sub { color: #555; margin: 0 0 0.5rem; }
nav a { margin-right: 1rem; }
a { color: #2a5d9f; }
code { font-size: 0.9em; background: #f4f4f4; padding: 0 0.2em; }
dl.summary { display: grid; grid-template-columns: repeat(auto-fill, minmax(230px, 1fr)); gap: 0.6rem; margin: 0; }
dl.summary div { border: 1px solid #ddd; border-radius: 6px; padding: 0.5rem 0.7rem; }
dl.summary dt { font-size: 0.8rem; color: #555; }
dl.summary dd { margin: 0.1rem 0 0; font-size: 1.1rem; font-weight: 600; overflow-wrap: anywhere; }
figure.chart { margin: 1rem 0 2rem; }
.svg { overflow-x: auto; }
.svg svg { max-width: 100%; height: auto; }
.caption { color: #444; font-size: 0.9rem; margin: 0.3rem 0; max-width: 70rem; }
.note { color: #7a5b00; font-size: 0.9rem; }
.warning { color: #7a5b00; }
.scroll { overflow-x: auto; }
table { border-collapse: collapse; font-size: 0.85rem; }
th, td { padding: 0.2rem 0.6rem; border-bottom: 1px solid #e4e4e4; text-align: left; vertical-align: top; }
thead th { border-bottom: 2px solid #999; background: #fafafa; position: sticky; top: 0; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
tbody tr:hover { background: #f6f9fc; }
.toc { font-size: 0.9rem; }
details.more { margin: 0.3rem 0 0.6rem; }
details.more > summary { cursor: pointer; color: #2a5d9f; font-size: 0.9rem; }
details.more[open] > summary { margin-bottom: 0.4rem; }
@media print { nav, .toc, details.more { display: none; } h2 { break-before: page; } figure.chart, .table { break-inside: avoid; } }
`;
