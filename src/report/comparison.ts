import { escapeHtml as esc, shownThenAll } from '../tables/render.js';

/**
 * The table a report opens with: one row per model, its estimates with their 95% intervals, and,
 * beside them, a published value where the run follows the publication's protocol. A benchmark
 * builds it from its views (MetadataPart.comparison); this file lays it out.
 */

type Row = Record<string, unknown>;

/** An estimate: its value, 95% interval (NULL: none, e.g. a single observation) and n. */
export interface Estimate {
  value: number | null;
  lo: number | null;
  hi: number | null;
}

/** A measure column: its key in a row's cells, its heading and the decimals it shows. */
export interface ComparisonMeasure {
  key: string;
  label: string;
  digits: number;
}

/** A block of rows under a heading (e.g. single-domain tasks), each with its estimates. */
export interface ComparisonBlock {
  label: string;
  rows: ComparisonRow[];
}

export interface ComparisonRow {
  /** The model (and the run, when a warehouse holds several). */
  label: string;
  n: number | null;
  cells: Record<string, Estimate | undefined>;
  /** The published values by measure key: only for a run that follows the publication's protocol. */
  published?: Record<string, number | null>;
  /** Why a model the publication reports has no published values here (what differs from its protocol). */
  differs?: string;
}

export interface ComparisonTable {
  id: string;
  title: string;
  caption: string;
  measures: ComparisonMeasure[];
  blocks: ComparisonBlock[];
  /** The publication: its column heading, its citation and the rule for when its values are shown. */
  source?: { label: string; citation: string; rule: string };
  notes?: string[];
}

/** A benchmark's comparison table: the view whose rows it reads (the report reads each once) and its builder. */
export interface ComparisonSource {
  view: string;
  /** Other relations `query` reads; without them the table is built with no published values. */
  requires?: readonly string[];
  build(rows: Row[], query: ((sql: string) => Promise<Row[]>) | null): Promise<ComparisonTable | null>;
}

const fixed = (v: number | null, digits: number) => (v === null ? '' : v.toFixed(digits));

/**
 * The table as HTML: a heading row per block, each estimate with its interval under it, published
 * values in their own column. With `preview`, a table of more than preview + 5 rows (block
 * headings included) shows its first whole blocks within `preview` rows (the first block's first
 * rows when it alone is longer) and keeps the whole table in a closed <details>, as the result
 * tables do: a grid of many models stays readable at the top of the page.
 */
export function renderComparison(t: ComparisonTable, options: { preview?: number } = {}): string {
  const anyPublished = t.blocks.some((b) => b.rows.some((r) => r.published));
  const anyPaperModel = anyPublished || t.blocks.some((b) => b.rows.some((r) => r.differs));
  const pub = t.source && anyPublished;
  const head = [
    '<th>Model</th>',
    '<th class="num">n</th>',
    ...t.measures.flatMap((m) => [
      `<th class="num">${esc(m.label)}</th>`,
      ...(pub ? [`<th class="num pub" title="${esc(t.source!.citation)}">${esc(t.source!.label)}</th>`] : []),
    ]),
    ...(t.source && anyPaperModel ? [`<th>${esc(t.source.label)}'s protocol</th>`] : []),
  ];
  const width = head.length;
  const body: string[] = [];
  /** Where each block's heading row is in body. */
  const blockStarts: number[] = [];
  for (const block of t.blocks) {
    if (block.rows.length === 0) continue;
    blockStarts.push(body.length);
    body.push(`<tr class="block"><th colspan="${width}" scope="colgroup">${esc(block.label)}</th></tr>`);
    for (const r of block.rows) {
      const cells = [`<th scope="row">${esc(r.label)}</th>`, `<td class="num">${r.n === null ? '' : r.n.toLocaleString('en-US')}</td>`];
      for (const m of t.measures) {
        const e = r.cells[m.key];
        const ci = e && e.lo !== null && e.hi !== null ? `<span class="ci">[${fixed(e.lo, m.digits)}, ${fixed(e.hi, m.digits)}]</span>` : '';
        cells.push(`<td class="num">${e ? fixed(e.value, m.digits) : ''}${ci}</td>`);
        if (pub) {
          const v = r.published?.[m.key];
          cells.push(`<td class="num pub">${v === undefined || v === null ? '-' : fixed(v, m.digits)}</td>`);
        }
      }
      if (t.source && anyPaperModel) cells.push(`<td class="protocol">${r.published ? 'followed' : r.differs ? esc(r.differs) : ''}</td>`);
      body.push(`<tr>${cells.join('')}</tr>`);
    }
  }
  const lines = [`<div class="table comparison" id="${esc(`comparison-${t.id}`)}">`, `<h3>${esc(t.title)}</h3>`];
  const grid = (rows: string[]) => [
    '<div class="scroll"><table>',
    `<thead><tr>${head.join('')}</tr></thead>`,
    `<tbody>\n${rows.join('\n')}\n</tbody>`,
    '</table></div>',
  ];
  const preview = options.preview;
  if (preview !== undefined && body.length > preview + 5) {
    // Whole blocks while they fit; the first block cut short when it alone does not.
    const fits = [...blockStarts.slice(1), body.length].filter((end) => end <= preview);
    const shown = fits.length ? fits[fits.length - 1]! : preview;
    const models = (rows: string[]) => rows.filter((r) => !r.startsWith('<tr class="block">')).length;
    lines.push(...shownThenAll(grid(body.slice(0, shown)), grid(body), { total: models(body), shown: models(body.slice(0, shown)) }));
  } else {
    lines.push(...grid(body));
  }
  lines.push(`<p class="caption">${esc(t.caption)}</p>`);
  if (t.source) lines.push(`<p class="caption">${esc(t.source.rule)} Source: ${esc(t.source.citation)}.</p>`);
  for (const n of t.notes ?? []) lines.push(`<p class="note">${esc(n)}</p>`);
  lines.push('</div>');
  return lines.join('\n');
}
