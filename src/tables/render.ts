import Table from 'cli-table3';
import { stringify } from 'csv-stringify/sync';
import { markdownTable } from 'markdown-table';

export const TABLE_FORMATS = ['table', 'md', 'csv', 'tex', 'json'] as const;
export type TableFormat = (typeof TABLE_FORMATS)[number];

export type ColumnFormat = 'text' | 'int' | 'float2' | 'float3' | 'float4' | 'percent2' | 'yesno' | 'auto';

export interface ColumnSpec {
  key: string;
  label: string;
  format?: ColumnFormat;
  /** Blank a value that repeats the row above (grouped attributes), in md/tex/table only. */
  group?: boolean;
  /** Printed for NULL, e.g. "-" for a count that does not apply. */
  nullText?: string;
  /** Columns holding this mean's 95% interval: shown as "m [lo, hi]" for people, kept as columns in CSV/JSON. */
  ci?: [string, string];
}

export interface RenderableTable {
  name: string;
  title?: string;
  caption?: string;
  columns: ColumnSpec[];
  rows: Record<string, unknown>[];
  notes?: string[];
}

/** Columns for an arbitrary query result: numbers right-aligned, formatted automatically. */
export function columnsOf(names: string[]): ColumnSpec[] {
  return names.map((key) => ({ key, label: key, format: 'auto' }));
}

export function renderTable(table: RenderableTable, format: TableFormat): string {
  switch (format) {
    case 'json':
      return JSON.stringify(
        { name: table.name, title: table.title, columns: table.columns.flatMap((c) => [c.key, ...(c.ci ?? [])]), rows: table.rows, notes: table.notes ?? [] },
        null,
        2,
      );
    case 'csv': {
      // CSV carries raw values (intervals as their own columns) for other tools, to 12 significant digits: beyond
      // that, DuckDB's parallel summation order makes the last digits differ from run to run.
      const keys = table.columns.flatMap((c) => [c.key, ...(c.ci ?? [])]);
      return stringify(
        table.rows.map((r) => keys.map((k) => csvValue(r[k]))),
        { header: true, columns: keys },
      ).trimEnd();
    }
    case 'md':
      return renderMarkdown(table);
    case 'tex':
      return renderLatex(table);
    case 'table':
      return renderTerminal(table);
  }
}

function isNumeric(spec: ColumnSpec, rows: Record<string, unknown>[]): boolean {
  if (spec.format && spec.format !== 'auto' && spec.format !== 'text' && spec.format !== 'yesno') return true;
  if (spec.format === 'auto')
    return rows.some((r) => typeof r[spec.key] === 'number') && rows.every((r) => r[spec.key] === null || typeof r[spec.key] === 'number');
  return false;
}

export function formatCell(value: unknown, spec: ColumnSpec, thousands: string): string {
  if (value === null || value === undefined) return spec.nullText ?? '';
  const fmt = spec.format ?? 'auto';
  if (fmt === 'yesno') return value === true ? 'Yes' : value === false ? 'No' : String(value);
  if (typeof value === 'number') {
    switch (fmt) {
      case 'int':
        return groupThousands(Math.round(value).toString(), thousands);
      case 'float2':
      case 'percent2':
        return value.toFixed(2);
      case 'float3':
        return value.toFixed(3);
      case 'float4':
        return value.toFixed(4);
      default:
        return Number.isInteger(value) ? String(value) : String(Number(value.toPrecision(6)));
    }
  }
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

function groupThousands(digits: string, sep: string): string {
  if (!sep) return digits;
  return digits.replace(/\B(?=(\d{3})+(?!\d))/g, sep);
}

function csvValue(value: unknown): unknown {
  if (value === null || value === undefined) return '';
  if (typeof value === 'object') return JSON.stringify(value);
  if (typeof value === 'number' && !Number.isInteger(value)) return Number(value.toPrecision(12));
  return value;
}

/** Cells as displayed, with grouped columns blanked where they repeat. */
function displayRows(table: RenderableTable, thousands: string, escapeText: (s: string) => string = (s) => s): string[][] {
  const previous: Record<string, unknown> = {};
  return table.rows.map((row) =>
    table.columns.map((c) => {
      const value = row[c.key];
      const repeat = c.group && previous[c.key] === value;
      previous[c.key] = value;
      if (repeat) return '';
      let text = formatCell(value, c, thousands);
      if (c.ci && value !== null && value !== undefined && row[c.ci[0]] !== null && row[c.ci[0]] !== undefined) {
        text += ` [${formatCell(row[c.ci[0]], c, thousands)}, ${formatCell(row[c.ci[1]], c, thousands)}]`;
      }
      // Numbers carry markup of their own (e.g. TeX's {,} separator): escape only text.
      return typeof value === 'number' ? text : escapeText(text);
    }),
  );
}

const HTML_SPECIAL: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Escapes text for HTML content and quoted attribute values alike. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (ch) => HTML_SPECIAL[ch]!);
}

/**
 * A long table's first rows, and under them the whole table in a closed <details> (`shown` and
 * `all` are each a table's HTML lines; the counts are the rows the summary names).
 */
export function shownThenAll(shown: string[], all: string[], counts: { total: number; shown: number }): string[] {
  return [...shown, `<details class="more"><summary>All ${counts.total} rows (the first ${counts.shown} are shown above)</summary>`, ...all, '</details>'];
}

/** An HTML table (title, caption and notes around it); every piece of data is escaped. */
/**
 * A table as HTML. With `preview`, a table longer than preview + 5 rows shows its first `preview` rows
 * and keeps the whole table in a closed <details>: long tables (Figure 5 has hundreds of rows) stay
 * one click away instead of making the page tens of thousands of pixels tall.
 */
export function renderHtmlTable(table: RenderableTable, options: { preview?: number } = {}): string {
  const numeric = table.columns.map((c) => isNumeric(c, table.rows));
  const cls = (i: number) => (numeric[i] ? ' class="num"' : '');
  const head = `<thead><tr>${table.columns.map((c, i) => `<th${cls(i)}>${escapeHtml(c.label)}</th>`).join('')}</tr></thead>`;
  // displayRows escapes every text cell; numbers come out as digits, separators and brackets only.
  const rows = displayRows(table, ',', escapeHtml).map((cells) => `<tr>${cells.map((cell, i) => `<td${cls(i)}>${cell}</td>`).join('')}</tr>`);
  const grid = (body: string[]) => ['<div class="scroll"><table>', head, `<tbody>\n${body.join('\n')}\n</tbody>`, '</table></div>'];
  const lines = [`<div class="table" id="${escapeHtml(`table-${table.name}`)}">`];
  if (table.title) lines.push(`<h3>${escapeHtml(table.title)}</h3>`);
  const preview = options.preview;
  if (preview !== undefined && rows.length > preview + 5) {
    lines.push(...shownThenAll(grid(rows.slice(0, preview)), grid(rows), { total: rows.length, shown: preview }));
  } else {
    lines.push(...grid(rows));
  }
  if (table.rows.length === 0) lines.push('<p class="note">No rows.</p>');
  if (table.caption) lines.push(`<p class="caption">${escapeHtml(table.caption)}</p>`);
  for (const n of table.notes ?? []) lines.push(`<p class="note">${escapeHtml(n)}</p>`);
  lines.push('</div>');
  return lines.join('\n');
}

function renderMarkdown(table: RenderableTable): string {
  const align = table.columns.map((c) => (isNumeric(c, table.rows) ? 'r' : 'l'));
  const escapePipes = (s: string) => s.replace(/\|/g, '\\|');
  const body = markdownTable([table.columns.map((c) => escapePipes(c.label)), ...displayRows(table, ',', escapePipes)], { align });
  const head = table.title ? `### ${table.title}\n\n` : '';
  const notes = (table.notes ?? []).map((n) => `\n> ${n}`).join('');
  const caption = table.caption ? `\n\n${table.caption}` : '';
  return `${head}${body}${caption}${notes ? '\n' + notes : ''}`;
}

const TEX_SPECIAL: Record<string, string> = {
  '\\': '\\textbackslash{}',
  '&': '\\&',
  '%': '\\%',
  $: '\\$',
  '#': '\\#',
  _: '\\_',
  '{': '\\{',
  '}': '\\}',
  '~': '\\textasciitilde{}',
  '^': '\\textasciicircum{}',
};

export function escapeLatex(text: string): string {
  return text.replace(/[\\&%$#_{}~^]/g, (ch) => TEX_SPECIAL[ch]!);
}

function renderLatex(table: RenderableTable): string {
  const spec = table.columns.map((c) => (isNumeric(c, table.rows) ? 'r' : 'l')).join('');
  const lines = [`% ${table.name}: generated by plens; needs \\usepackage{booktabs}`, '\\begin{table}[t]', '\\centering', '\\small'];
  if (table.title) lines.push(`\\caption{${escapeLatex(table.caption ? `${table.title}. ${table.caption}` : table.title)}}`);
  lines.push(`\\label{tab:${table.name.replace(/_/g, '-')}}`);
  lines.push(`\\begin{tabular}{${spec}}`, '\\toprule');
  lines.push(table.columns.map((c) => escapeLatex(c.label)).join(' & ') + ' \\\\', '\\midrule');
  const previousGroup: { value?: unknown } = {};
  const groupKey = table.columns.find((c) => c.group)?.key;
  displayRows(table, '{,}', escapeLatex).forEach((cells, i) => {
    if (groupKey !== undefined) {
      const value = table.rows[i]![groupKey];
      if (i > 0 && value !== previousGroup.value) lines.push('\\midrule');
      previousGroup.value = value;
    }
    lines.push(cells.join(' & ') + ' \\\\');
  });
  lines.push('\\bottomrule', '\\end{tabular}', '\\end{table}');
  for (const n of table.notes ?? []) lines.push(`% note: ${n}`);
  return lines.join('\n');
}

function renderTerminal(table: RenderableTable): string {
  const t = new Table({
    head: table.columns.map((c) => c.label),
    colAligns: table.columns.map((c) => (isNumeric(c, table.rows) ? 'right' : 'left')),
    style: { head: [], border: [] },
    // No rule between rows: compact, like a database shell.
    chars: { mid: '', 'left-mid': '', 'mid-mid': '', 'right-mid': '' },
  });
  for (const row of displayRows(table, ',')) t.push(row);
  const head = table.title ? `${table.title}\n` : '';
  const notes = (table.notes ?? []).map((n) => `\nnote: ${n}`).join('');
  return `${head}${t.toString()}\n(${table.rows.length} row${table.rows.length === 1 ? '' : 's'})${notes}`;
}
