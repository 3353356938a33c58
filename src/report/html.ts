import { escapeHtml as esc, renderHtmlTable, type RenderableTable } from '../tables/render.js';
import type { RenderedChart } from './charts.js';
import { type ComparisonTable, renderComparison } from './comparison.js';

/** Everything the page shows, already computed. */
export interface ReportPage {
  title: string;
  generatedAt: string;
  plensVersion: string;
  warehouse: string;
  summary: Array<{ label: string; value: string }>;
  /** A row per model, shown first. */
  comparisons?: ComparisonTable[];
  charts: RenderedChart[];
  /** The result tables. */
  tables: RenderableTable[];
  /** Tables that describe the data (the dataset, its construction): after the results. */
  datasetTables?: RenderableTable[];
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
  const comparisons = page.comparisons ?? [];
  const dataset = page.datasetTables ?? [];
  const toc = [
    ...(comparisons.length ? [['comparison', 'Models compared']] : []),
    ['summary', 'Summary'],
    ...(page.charts.length ? [['charts', 'Charts']] : []),
    ...(page.tables.length ? [['tables', 'Result tables']] : []),
    ...(dataset.length ? [['data-tables', 'Dataset tables']] : []),
    ['metadata', 'Run metadata'],
    ...(page.skipped.length || page.warnings.length ? [['notes', 'Notes']] : []),
  ];
  const body: string[] = [];
  body.push(`<header><h1>${esc(page.title)}</h1>`);
  body.push(`<p class="sub">Generated ${esc(page.generatedAt)} by plens ${esc(page.plensVersion)} from <code>${esc(page.warehouse)}</code></p>`);
  body.push(`<nav>${toc.map(([id, label]) => `<a href="#${id}">${esc(label!)}</a>`).join(' ')}</nav></header>`);

  // Results first: the models compared, then the charts and the result tables; the data's own tables after them.
  if (comparisons.length) {
    body.push('<section id="comparison"><h2>Models compared</h2>');
    for (const c of comparisons) body.push(renderComparison(c, { preview: TABLE_PREVIEW_ROWS }));
    body.push('</section>');
  }

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

  const tableSection = (id: string, title: string, tables: RenderableTable[]) => {
    if (tables.length === 0) return;
    body.push(`<section id="${id}"><h2>${esc(title)}</h2>`);
    body.push(`<p class="toc">${tables.map((t) => `<a href="#table-${esc(t.name)}">${esc(t.title ?? t.name)}</a>`).join('<br>')}</p>`);
    for (const t of tables) body.push(fitTable(renderHtmlTable(t, { preview: TABLE_PREVIEW_ROWS })));
    body.push('</section>');
  };
  tableSection('tables', 'Result tables', page.tables);
  tableSection('data-tables', 'Dataset tables', dataset);

  body.push('<section id="metadata"><h2>Run metadata</h2>');
  if (page.metadata.length === 0) body.push('<p class="note">No run metadata in the warehouse (no dialogues or judgments yet).</p>');
  for (const t of page.metadata) body.push(fitTable(renderHtmlTable(t, { preview: TABLE_PREVIEW_ROWS })));
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

/**
 * A cell "2.13 [2.01, 2.25]" shows its interval on a line of its own under the value: a table of
 * estimates is then about half as wide, and fits the page.
 */
export function intervalsBelow(html: string): string {
  return html.replace(/<td class="num">([^<[]+?) (\[[^\]<]*\])<\/td>/g, '<td class="num">$1<span class="ci">$2</span></td>');
}

/** Columns from which a table is set smaller (class `wide`). */
export const WIDE_TABLE_COLUMNS = 13;

/** A rendered table made to fit the page: intervals under their values, and a table of many columns set smaller. */
export function fitTable(html: string): string {
  const head = /<thead>([\s\S]*?)<\/thead>/.exec(html)?.[1] ?? '';
  const columns = head.split('<th').length - 1;
  const fitted = intervalsBelow(html);
  return columns >= WIDE_TABLE_COLUMNS ? fitted.replace('<div class="table"', '<div class="table wide"') : fitted;
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
/* Charts are drawn to fit the page (src/report/charts.ts) and shown at their natural size: never scaled
   down below their text size. In a narrow window a chart scrolls sideways instead. */
.svg { overflow-x: auto; }
.svg svg { display: block; max-width: none; }
.caption { color: #444; font-size: 0.9rem; margin: 0.3rem 0; max-width: 70rem; }
.note { color: #7a5b00; font-size: 0.9rem; }
.warning { color: #7a5b00; }
.scroll { overflow-x: auto; }
table { border-collapse: collapse; font-size: 0.85rem; }
th, td { padding: 0.2rem 0.5rem; border-bottom: 1px solid #e4e4e4; text-align: left; vertical-align: top; }
thead th { border-bottom: 2px solid #999; background: #fafafa; position: sticky; top: 0; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
td.num { white-space: nowrap; }
/* A table of many columns is set a little smaller (12 px) so that it fits the page. */
.table.wide table { font-size: 0.75rem; }
.table.wide th, .table.wide td { padding: 0.2rem 0.35rem; }
.ci { display: block; color: #555; font-size: 0.8rem; }
.comparison tbody th { text-align: left; font-weight: 600; overflow-wrap: anywhere; }
.comparison tbody th[scope="row"] { min-width: 11rem; }
.comparison td.num .ci { white-space: normal; }
.comparison tr.block th { background: #f0f3f7; text-align: left; padding-top: 0.4rem; }
.comparison .pub { background: #fbf7ea; color: #5a4a00; font-style: italic; border-left: 1px dashed #d8c98a; }
.comparison td.protocol { font-size: 0.8rem; color: #555; max-width: 18rem; }
tbody tr:hover { background: #f6f9fc; }
.toc { font-size: 0.9rem; }
details.more { margin: 0.3rem 0 0.6rem; }
details.more > summary { cursor: pointer; color: #2a5d9f; font-size: 0.9rem; }
details.more[open] > summary { margin-bottom: 0.4rem; }
@media print { nav, .toc, details.more { display: none; } h2 { break-before: page; } figure.chart, .table { break-inside: avoid; } }
`;
