import { PlensError, usageError } from '../core/errors.js';
import { Database } from '../db/database.js';
import { requireWarehouse } from '../warehouse/build.js';

/** What a side of a comparison may be selected by, and the paired_scores column each key filters. */
export const CELL_KEYS: Record<string, string> = {
  assistant: 'assistant_model',
  setting: 'setting',
  user: 'user_model',
  judge: 'judge_model',
  run: 'run',
  kind: 'kind',
};

export type CellFilter = Array<{ key: string; column: string; value: string }>;

/** Parses "assistant=openai:a,setting=base" (values may contain '=' and ':'; no commas). */
export function parseCell(text: string, what: string): CellFilter {
  const out: CellFilter = [];
  for (const part of text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    const eq = part.indexOf('=');
    const key = eq > 0 ? part.slice(0, eq).trim() : '';
    const column = CELL_KEYS[key];
    if (!column)
      throw usageError(
        `${what}: "${part}" is not key=value with a known key`,
        `keys: ${Object.keys(CELL_KEYS).join(', ')}; e.g. "assistant=openai:gpt-4o,setting=base"`,
      );
    out.push({ key, column, value: part.slice(eq + 1).trim() });
  }
  return out;
}

export interface CompareOptions {
  dbPath: string;
  a: CellFilter;
  b: CellFilter;
  /** Applies to both sides (e.g. kind=SD). */
  where?: CellFilter;
  replicate?: number;
}

export interface DimensionVerdict {
  dimension: string;
  n: number;
  n_users: number;
  mean_a: number | null;
  mean_b: number | null;
  diff: number | null;
  diff_lo: number | null;
  diff_hi: number | null;
  test: string;
  p: number | null;
  p_mid: number | null;
  p_holm: number | null;
  p_bh: number | null;
  mde: number | null;
  reason: string | null;
  verdict: string;
}

export interface CompareResult {
  a: string;
  b: string;
  cell_a: Record<string, string>;
  cell_b: Record<string, string>;
  dimensions: DimensionVerdict[];
}

const SIDE_COLUMNS = ['judge_model', 'judge_config', 'dialogue_config', 'run', 'assistant_model', 'setting'];

function where(filter: CellFilter, params: Array<string | number>): string {
  return filter
    .map((f) => {
      params.push(f.value);
      return `${f.column} = ?`;
    })
    .join(' AND ');
}

/**
 * Compares two cells on the scenarios both scored, for every dialogue-level dimension: the mean
 * difference b - a with a clustered bootstrap interval over users, McNemar (TC) or Wilcoxon (pratt), p
 * corrected by Holm and BH over the dimensions, and the MDE (paired_stats in warehouse/personalens/70_paired.sql).
 */
export async function compareCells(options: CompareOptions): Promise<CompareResult> {
  requireWarehouse(options.dbPath);
  if (options.a.length === 0 || options.b.length === 0)
    throw usageError('each side needs at least one key=value', 'e.g. plens compare setting=base setting=base+all');
  const db = await Database.open(options.dbPath, { readOnly: true });
  try {
    const views = new Set((await db.all<{ name: string }>(`SELECT table_name AS name FROM information_schema.tables`)).map((r) => r.name));
    if (!views.has('paired_scores'))
      throw new PlensError('E_PREREQUISITE', 'the warehouse has no judged dialogues (paired_scores)', { hint: 'run plens judge, then plens warehouse' });
    const common = options.where ?? [];
    const side = (f: CellFilter, params: Array<string | number>) => {
      params.push(Math.trunc(options.replicate ?? 0));
      return `SELECT * FROM paired_scores WHERE replicate = ? AND score IS NOT NULL AND ${where([...f, ...common], params)}`;
    };
    const cells: Array<Record<string, string>> = [];
    for (const [name, f] of [
      ['A', options.a],
      ['B', options.b],
    ] as const) {
      const params: Array<string | number> = [];
      const found = await db.all<Record<string, string>>(
        `SELECT DISTINCT ${SIDE_COLUMNS.join(', ')} FROM (${side(f, params)}) ORDER BY ALL`,
        undefined,
        params,
      );
      if (found.length === 0)
        throw usageError(
          `${name} (${describe(f)}) matches no judged dialogue`,
          'see plens tables --only judgment_status, or plens sql "select distinct run, assistant_model, setting from paired_scores"',
        );
      if (found.length > 1) {
        throw usageError(
          `${name} (${describe(f)}) matches ${found.length} cells; add keys to pick one`,
          found
            .slice(0, 8)
            .map((c) => `run=${c['run']} judge=${c['judge_model']} assistant=${c['assistant_model']} setting=${c['setting']}`)
            .join('\n'),
        );
      }
      cells.push(found[0]!);
    }
    if (JSON.stringify(cells[0]) === JSON.stringify(cells[1])) throw usageError('A and B are the same cell');
    const params: Array<string | number> = [];
    const sql = `
      WITH a AS (${side(options.a, params)}), b AS (${side(options.b, params)}),
      pairs AS (SELECT a.position, a.dimension, a.user_id, a.score AS sa, b.score AS sb FROM a JOIN b USING (scenario_id, position)),
      means AS (SELECT position, any_value(dimension) AS dimension, avg(sa) AS mean_a, avg(sb) AS mean_b FROM pairs GROUP BY position),
      x AS (SELECT position AS cid, 'compare' AS family, user_id, sb - sa AS d, CASE WHEN dimension = 'TC' THEN 'mcnemar' ELSE 'wilcoxon' END AS test FROM pairs)
      SELECT m.dimension, s.n, s.n_users, m.mean_a, m.mean_b, s.diff, s.diff_lo, s.diff_hi, s.test, s.p, s.p_mid, s.p_holm, s.p_bh, s.mde, s.reason
      FROM means m JOIN paired_stats(x) s ON s.cid = m.position ORDER BY m.position`;
    const rows = await db.all<Omit<DimensionVerdict, 'verdict'>>(sql, undefined, params);
    return {
      a: describe(options.a),
      b: describe(options.b),
      cell_a: cells[0]!,
      cell_b: cells[1]!,
      dimensions: rows.map((r) => ({ ...r, n: Number(r.n), n_users: Number(r.n_users), verdict: verdictOf(r) })),
    };
  } finally {
    db.close();
  }
}

function describe(f: CellFilter): string {
  return f.map((x) => `${x.key}=${x.value}`).join(',');
}

/** One sentence a reader can act on: a difference only where the Holm-corrected p is below 0.05. */
export function verdictOf(r: Omit<DimensionVerdict, 'verdict'>): string {
  const unit = r.dimension === 'TC' ? ' points' : '';
  const f = (x: number | null) => (x === null ? '-' : x.toFixed(2));
  if (r.diff === null || r.p === null) return `not testable: ${r.reason ?? 'no pairs'}`;
  if (r.p_holm !== null && r.p_holm < 0.05) {
    return `B is ${r.diff > 0 ? 'higher' : 'lower'} by ${f(Math.abs(r.diff))}${unit} [${f(r.diff_lo)}, ${f(r.diff_hi)}] (Holm p = ${r.p_holm.toPrecision(2)})`;
  }
  return `no significant difference (${f(r.diff)}${unit}, Holm p = ${r.p_holm === null ? '-' : r.p_holm.toPrecision(2)}); this sample detects about ±${f(r.mde)}${unit} with 80% power`;
}

export function formatCompare(r: CompareResult): string {
  const f = (x: number | null, d = 2) => (x === null ? '-' : x.toFixed(d));
  const p = (x: number | null) => (x === null ? '-' : x < 0.001 ? x.toExponential(1) : x.toFixed(3));
  const cell = (c: Record<string, string>) => `${c['assistant_model']} | ${c['setting']}  (run ${c['run']}, judge ${c['judge_model']})`;
  const lines = [`A: ${cell(r.cell_a)}`, `B: ${cell(r.cell_b)}`, ''];
  const header = ['Dimension', 'n', 'Users', 'A', 'B', 'B - A', '95% CI (users)', 'Test', 'p', 'p Holm', 'p BH', 'MDE'];
  const rows = r.dimensions.map((d) => [
    d.dimension,
    String(d.n),
    String(d.n_users),
    f(d.mean_a),
    f(d.mean_b),
    f(d.diff),
    d.diff_lo === null ? '-' : `[${f(d.diff_lo)}, ${f(d.diff_hi)}]`,
    d.test,
    p(d.p),
    p(d.p_holm),
    p(d.p_bh),
    f(d.mde),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === 0 || i === 7 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  lines.push(line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line), '');
  for (const d of r.dimensions) lines.push(`${d.dimension}: ${d.verdict}`);
  lines.push('', 'TC in percentage points. Pairs: scenarios both cells scored; interval: seeded bootstrap over users; p corrected over the dimensions.');
  return lines.join('\n');
}
