import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { allocate } from '../../../../src/benchmarks/personalens/annotation/export.js';
import { CsvError, parseCsv } from '../../../../src/benchmarks/personalens/annotation/import.js';
import { runCli, runCliJson, sampleDir, tempDir } from '../../../helpers/cli.js';

/*
 * The human-annotation round trip through the real CLI, on the bundled sample: import, scenarios
 * (users 0-2: 62 SD + 8 MD scenarios), dialogues with two offline simulated assistants in two
 * settings (8 strata: 4 of 62 SD dialogues, 4 of 8 MD ones; 280 in all), the simulated judge,
 * warehouse, then `annotate export`, three annotators' sheets, `annotate import` and Table 5.
 */

const LABELS = ['task_completion', 'personalization', 'naturalness_user', 'coherence_user', 'naturalness_assistant', 'coherence_assistant'] as const;
type Label = (typeof LABELS)[number];
const SCORE_OF: Record<Label, keyof JudgeScores> = {
  task_completion: 'tc',
  personalization: 'p',
  naturalness_user: 'nat_u',
  coherence_user: 'coh_u',
  naturalness_assistant: 'nat_a',
  coherence_assistant: 'coh_a',
};
const CATEGORIES: Record<Label, number[]> = {
  task_completion: [0, 1],
  personalization: [1, 2, 3, 4],
  naturalness_user: [1, 2, 3, 4, 5],
  coherence_user: [1, 2, 3, 4, 5],
  naturalness_assistant: [1, 2, 3, 4, 5],
  coherence_assistant: [1, 2, 3, 4, 5],
};
// Table 5's rows, in the paper's order.
const PAPER_ORDER: Array<[string, Label]> = [
  ['TC', 'task_completion'],
  ['P', 'personalization'],
  ['Nat (U)', 'naturalness_user'],
  ['Nat (A)', 'naturalness_assistant'],
  ['Coh (U)', 'coherence_user'],
  ['Coh (A)', 'coherence_assistant'],
];
const HEADER = ['item', 'dialogue_id', ...LABELS, 'notes'];

interface JudgeScores {
  dialogue_id: string;
  tc: number;
  p: number;
  nat_u: number;
  coh_u: number;
  nat_a: number;
  coh_a: number;
}

/** Cohen's kappa from its definition: (p_o - p_e) / (1 - p_e), p_e from the two raters' marginals. */
function cohen(pairs: Array<[number, number]>, categories: number[]): number | null {
  const n = pairs.length;
  const po = pairs.filter(([a, b]) => a === b).length / n;
  const pe = categories.reduce((s, c) => s + (pairs.filter(([a]) => a === c).length / n) * (pairs.filter(([, b]) => b === c).length / n), 0);
  return pe === 1 ? null : (po - pe) / (1 - pe);
}

/** Fleiss' kappa from its definition: P_i = (sum_j n_ij^2 - n) / (n (n - 1)), P_e = sum_j p_j^2. */
function fleiss(subjects: number[][], categories: number[]): number | null {
  const n = subjects[0]!.length;
  const all = subjects.flat();
  const pBar =
    subjects.map((s) => (categories.reduce((acc, c) => acc + s.filter((x) => x === c).length ** 2, 0) - n) / (n * (n - 1))).reduce((a, b) => a + b, 0) /
    subjects.length;
  const pe = categories.reduce((acc, c) => acc + (all.filter((x) => x === c).length / all.length) ** 2, 0);
  return pe === 1 ? null : (pBar - pe) / (1 - pe);
}

/** A score that is always different from v, within 1..max. */
const other = (v: number, max: number) => (v % max) + 1;

/** HTML-escaped text, as the page must show it. */
const esc = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');

function writeSheet(file: string, rows: string[][], eol = '\n'): void {
  writeFileSync(file, rows.map((r) => r.join(',')).join(eol) + eol);
}

describe('plens annotate: sample, sheets, labels and Table 5', () => {
  const root = tempDir('plens-annotate-');
  const ws = join(root, 'out');
  const db = join(root, 'w.duckdb');
  const sheets = join(root, 'sheets');
  const labelsFile = join(ws, 'annotation', 'labels.parquet');
  const sampleDirOf = (name: string) => join(ws, 'annotation', name);
  let run: string;
  let ids: string[];
  let judge: Map<string, JudgeScores>;

  const sql = async <T = Record<string, unknown>>(query: string, database = db) => {
    const r = await runCliJson<T[]>(['sql', query, '--db', database]);
    expect(r.code, r.stderr).toBe(0);
    return r.json;
  };
  const ok = async (args: string[]) => {
    const r = await runCli(args);
    expect(r.code, `${args.join(' ')}\n${r.stdout}\n${r.stderr}`).toBe(0);
    return r;
  };

  beforeAll(async () => {
    mkdirSync(sheets, { recursive: true });
    await ok(['import', '--from', sampleDir, '-w', ws]);
    await ok(['scenarios', '-w', ws, '--users', '0-2']);
    await ok(['dialogues', '-w', ws, '--assistant', 'sim:default', 'sim:alt', '--setting', 'base', 'base+all', '--no-progress']);
    await ok(['judge', '-w', ws, '--judge', 'sim:default', '--no-progress']);
    await ok(['warehouse', '-w', ws, '--db', db]);
  });

  it('export draws a proportional stratified sample and writes a blind sheet, a readable page and sample.json', async () => {
    const strata = await sql<{ kind: string; assistant_model: string; setting: string; n: number }>(
      'select kind, assistant_model, setting, count(*)::INT as n from dialogue_scores group by all order by all',
    );
    // The hand computation below rests on these sizes: 62 SD and 8 MD dialogues per cell, 280 in all.
    expect(strata.map((s) => s.n)).toEqual([8, 8, 8, 8, 62, 62, 62, 62]);

    const r = await runCliJson<{ ok: boolean; run: string; dialogue_ids: string[]; eligible: number }>([
      'annotate',
      'export',
      '--n',
      '10',
      '--seed',
      '7',
      '-w',
      ws,
      '--db',
      db,
    ]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.json.eligible).toBe(280);
    run = r.json.run;
    const dir = sampleDirOf('sample-7-10');
    const manifest = JSON.parse(readFileSync(join(dir, 'sample.json'), 'utf8'));
    ids = manifest.dialogue_ids;
    expect(ids).toEqual(r.json.dialogue_ids);
    expect(manifest).toMatchObject({ name: 'sample-7-10', seed: '7', n: 10, run, judge_model: 'sim:default', eligible: 280 });
    expect(typeof manifest.created_at).toBe('string');
    expect(typeof manifest.plens_version).toBe('string');
    expect(new Set(ids).size).toBe(10);

    // Largest remainders, n = 10 of N = 280: an SD cell's quota is 10 x 62 / 280 = 2.214 (floor 2,
    // remainder 60/280), an MD cell's 10 x 8 / 280 = 0.286 (floor 0, remainder 80/280). Floors give
    // 4 x 2 = 8; the 2 seats left go to the larger remainders: two of the four MD cells.
    const sd = manifest.strata.filter((s: { kind: string }) => s.kind === 'SD');
    const md = manifest.strata.filter((s: { kind: string }) => s.kind === 'MD');
    expect(sd.map((s: { sampled: number }) => s.sampled)).toEqual([2, 2, 2, 2]);
    expect(md.map((s: { sampled: number }) => s.sampled).sort()).toEqual([0, 0, 1, 1]);
    // The sampled dialogues really come from those strata.
    const drawn = await sql<{ kind: string; assistant_model: string; setting: string; n: number }>(
      `select kind, assistant_model, setting, count(*)::INT as n from dialogue_scores where dialogue_id in (${ids.map((i) => `'${i}'`).join(', ')}) group by all order by all`,
    );
    for (const s of manifest.strata) {
      expect(drawn.find((d) => d.kind === s.kind && d.assistant_model === s.assistant_model && d.setting === s.setting)?.n ?? 0).toBe(s.sampled);
    }

    // The sheet: one row per item, ids in item order, every label empty (blind: no judge scores).
    const lines = readFileSync(join(dir, 'sheet.csv'), 'utf8').trimEnd().split('\n');
    expect(lines[0]).toBe(HEADER.join(','));
    expect(lines.slice(1)).toEqual(ids.map((id, i) => `${i + 1},${id},,,,,,,`));

    // The page: rubric from the judge prompts (criteria and scales, not the reply format), then each item.
    const html = readFileSync(join(dir, 'dialogues.html'), 'utf8');
    expect(html).toMatch(/^<!DOCTYPE html>/);
    expect(html).toContain('4 - EXCEPTIONAL: the assistant anticipates needs');
    expect(html).toContain('5 - Fully coherent: logical, relevant and clear');
    expect(html).toContain('If meeting a goal would need something that does not appear in the conversation, that goal is not met and the verdict is False.');
    expect(html).not.toContain('Personalization Score: [1-4]');
    expect(html).not.toContain('Coherence Score: [1-5]');
    expect(html).not.toContain('{{');
    expect(html).not.toMatch(/<(script|img|link)\b|src=|https?:/);
    ids.forEach((id, i) => {
      expect(html).toContain(`<section id="item-${i + 1}">`);
      expect(html).toContain(`dialogue_id ${id}`);
    });
    // Text is escaped: an utterance with an apostrophe appears with it as an entity, never raw.
    const [turn] = await sql<{ text: string }>(`select text from turns where dialogue_id = '${ids[0]}' and text like '%''%' limit 1`);
    expect(turn).toBeDefined();
    expect(html).toContain(esc(turn!.text));
    const [task] = await sql<{ goal: string }>(`select t.goal from dialogues d join tasks t using (task_id) where d.dialogue_id = '${ids[0]}'`);
    expect(html).toContain(esc(task!.goal));
  });

  it('the same seed gives the same sample, and a larger n contains the smaller one', async () => {
    await ok(['annotate', 'export', '--n', '10', '--seed', '7', '--name', 'again', '-w', ws, '--db', db]);
    expect(JSON.parse(readFileSync(join(sampleDirOf('again'), 'sample.json'), 'utf8')).dialogue_ids).toEqual(ids);

    await ok(['annotate', 'export', '--n', '20', '--seed', '7', '-w', ws, '--db', db]);
    const big = JSON.parse(readFileSync(join(sampleDirOf('sample-7-20'), 'sample.json'), 'utf8'));
    // n = 20: SD quota 20 x 62 / 280 = 4.43 (floor 4), MD 20 x 8 / 280 = 0.57 (floor 0); 4 x 4 = 16,
    // and the 4 seats left go to the 4 MD cells (remainder 160/280 > 120/280).
    expect(big.strata.map((s: { kind: string; sampled: number }) => `${s.kind}:${s.sampled}`)).toEqual([
      'MD:1',
      'MD:1',
      'MD:1',
      'MD:1',
      'SD:4',
      'SD:4',
      'SD:4',
      'SD:4',
    ]);
    for (const id of ids) expect(big.dialogue_ids).toContain(id);

    const otherSeed = await runCliJson<{ dialogue_ids: string[] }>(['annotate', 'export', '--n', '10', '--seed', '8', '--dry-run', '-w', ws, '--db', db]);
    expect(otherSeed.code).toBe(0);
    expect(otherSeed.json.dialogue_ids).not.toEqual(ids);
    expect(existsSync(sampleDirOf('sample-8-10'))).toBe(false);

    // An existing sample is never overwritten by accident.
    const again = await runCli(['annotate', 'export', '--n', '10', '--seed', '7', '-w', ws, '--db', db]);
    expect(again.code).toBe(2);
    expect(again.stderr).toContain('--force');
    await ok(['annotate', 'export', '--n', '10', '--seed', '7', '--name', 'again', '--force', '-w', ws, '--db', db]);
  });

  it('with several judge runs in the warehouse, --run is required and the error lists them', async () => {
    const ws2 = join(root, 'out2');
    const db2 = join(root, 'w2.duckdb');
    cpSync(ws, ws2, { recursive: true });
    await ok(['judge', '-w', ws2, '--judge', 'sim:other', '--no-progress']);
    await ok(['warehouse', '-w', ws2, '--db', db2]);
    const runs = (await sql<{ run: string }>('select run from result_runs order by run', db2)).map((r) => r.run);
    expect(runs).toHaveLength(2);
    const r = await runCli(['annotate', 'export', '--n', '10', '--seed', '7', '-w', ws2, '--db', db2]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--run');
    for (const x of runs) expect(r.stderr).toContain(x);
    const chosen = await runCliJson<{ dialogue_ids: string[] }>([
      'annotate',
      'export',
      '--n',
      '10',
      '--seed',
      '7',
      '--run',
      run,
      '--name',
      'first-run',
      '-w',
      ws2,
      '--db',
      db2,
    ]);
    expect(chosen.code, chosen.stderr).toBe(0);
    expect(chosen.json.dialogue_ids).toEqual(ids);
  });

  describe('import and Table 5', () => {
    const annotated: Record<string, Map<string, Partial<Record<Label, number>>>> = {};
    const sheetRows = (name: string, tc: (v: number) => string = String) =>
      ids.map((id, i) => {
        const labels = annotated[name]!.get(id)!;
        return [String(i + 1), id, ...LABELS.map((l) => (labels[l] === undefined ? '' : l === 'task_completion' ? tc(labels[l]!) : String(labels[l]))), ''];
      });

    beforeAll(async () => {
      const rows = await sql<JudgeScores>(`select dialogue_id, tc, p, nat_u, coh_u, nat_a, coh_a from dialogue_scores where run = '${run}'`);
      judge = new Map(rows.map((r) => [r.dialogue_id, r]));
      // ann1 copies the judge; ann2 differs on items 1-3 in every label; ann3 leaves items 9-10
      // empty and differs on item 4's personalization.
      const copy = (id: string) => Object.fromEntries(LABELS.map((l) => [l, judge.get(id)![SCORE_OF[l]]])) as Record<Label, number>;
      annotated['ann1'] = new Map(ids.map((id) => [id, copy(id)]));
      annotated['ann2'] = new Map(
        ids.map((id, i) => [
          id,
          i < 3
            ? (Object.fromEntries(LABELS.map((l) => [l, l === 'task_completion' ? 1 - copy(id)[l] : other(copy(id)[l], CATEGORIES[l].length)])) as Record<
                Label,
                number
              >)
            : copy(id),
        ]),
      );
      annotated['ann3'] = new Map(
        ids.map((id, i) => [id, i >= 8 ? {} : i === 3 ? { ...copy(id), personalization: other(copy(id).personalization, 4) } : copy(id)]),
      );
      // ann1 writes TC as yes/no with CRLF line ends (as a spreadsheet may); ann2 has a quoted note with a comma and a line break.
      writeSheet(join(sheets, 'ann1.csv'), [HEADER, ...sheetRows('ann1', (v) => (v === 1 ? 'yes' : 'no'))], '\r\n');
      const ann2 = sheetRows('ann2');
      ann2[0]![8] = '"too long, and ""odd""\nsecond line"';
      writeSheet(join(sheets, 'ann2.csv'), [HEADER, ...ann2]);
      writeSheet(join(sheets, 'ann3.csv'), [HEADER, ...sheetRows('ann3')]);
    });

    /** A copy of ann1's sheet with one change, as a bad file. */
    const badSheet = (name: string, change: (rows: string[][]) => string[][], eol = '\n') => {
      const file = join(sheets, name);
      writeSheet(file, change([HEADER, ...sheetRows('ann1')]), eol);
      return file;
    };

    const expectRejected = async (
      files: string[],
      expected: { code: string; file: string; line: number; column?: string; message: RegExp },
      inWords = false,
    ) => {
      const before = existsSync(labelsFile) ? readFileSync(labelsFile) : undefined;
      const r = await runCliJson<{ ok: boolean; error: { code: string; message: string; file: string; line: number; pointer?: string } }>([
        'annotate',
        'import',
        ...files,
        '-w',
        ws,
        '--sample',
        'sample-7-10',
      ]);
      expect(r.code).toBe(3);
      expect(r.json.ok).toBe(false);
      expect(r.json.error.code).toBe(expected.code);
      expect(r.json.error.file.endsWith(expected.file)).toBe(true);
      expect(r.json.error.line).toBe(expected.line);
      if (expected.column) expect(r.json.error.pointer).toBe(`/${expected.column}`);
      expect(r.json.error.message).toMatch(expected.message);
      if (inWords) {
        // The same in words on stderr: file, line and column name.
        const text = await runCli(['annotate', 'import', ...files, '-w', ws, '--sample', 'sample-7-10']);
        expect(text.code).toBe(3);
        expect(text.stderr).toContain(`${expected.file}:${expected.line}`);
        if (expected.column) expect(text.stderr).toContain(expected.column);
      }
      // Nothing written: labels.parquet absent, or byte for byte as before.
      if (before === undefined) expect(existsSync(labelsFile)).toBe(false);
      else expect(readFileSync(labelsFile).equals(before)).toBe(true);
    };

    const checkErrors = async () => {
      // Out of range; item 1's note spans two lines, so item 3 starts on line 5.
      const range = badSheet('range.csv', (rows) => {
        rows[1]![8] = '"a note\nover two lines"';
        rows[3]![3] = '7';
        return rows;
      });
      await expectRejected(
        [join(sheets, 'ann2.csv'), range],
        { code: 'E_INPUT_SCHEMA', file: 'range.csv', line: 5, column: 'personalization', message: /out of range 1-4/ },
        true,
      );
      // The same with CRLF line ends, CRLF inside the note too: item 2's note spans lines 3-4, item 4 is on line 6.
      const crlf = badSheet(
        'crlf.csv',
        (rows) => {
          rows[2]![8] = '"a note\r\nover two lines"';
          rows[4]![4] = '0';
          return rows;
        },
        '\r\n',
      );
      await expectRejected([crlf], { code: 'E_INPUT_SCHEMA', file: 'crlf.csv', line: 6, column: 'naturalness_user', message: /out of range 1-5/ });
      // A quote never closed: the line where its row starts.
      const unclosed = badSheet('unclosed.csv', (rows) => {
        rows[1]![8] = '"fine\nnote"';
        rows[5]![8] = '"left open';
        return rows;
      });
      await expectRejected([unclosed], { code: 'E_INPUT_SCHEMA', file: 'unclosed.csv', line: 7, message: /quoted cell is never closed/ });
      const unknown = badSheet('unknown.csv', (rows) => {
        rows[6]![1] = 'not-a-dialogue';
        return rows;
      });
      await expectRejected([unknown], { code: 'E_INPUT_REFERENCE', file: 'unknown.csv', line: 7, column: 'dialogue_id', message: /not in the sample/ });
      const missing = badSheet('missing.csv', (rows) => rows.map((r) => r.filter((_, i) => i !== 5)));
      await expectRejected([missing], {
        code: 'E_INPUT_SCHEMA',
        file: 'missing.csv',
        line: 1,
        column: 'coherence_user',
        message: /missing column "coherence_user"/,
      });
      const duplicate = badSheet('duplicate.csv', (rows) => [...rows, rows[2]!]);
      await expectRejected(
        [duplicate],
        { code: 'E_INPUT_DUPLICATE', file: 'duplicate.csv', line: 12, column: 'dialogue_id', message: /first on line 3/ },
        true,
      );
      const notTc = badSheet('maybe.csv', (rows) => {
        rows[2]![2] = 'maybe';
        return rows;
      });
      await expectRejected([notTc], { code: 'E_INPUT_SCHEMA', file: 'maybe.csv', line: 3, column: 'task_completion', message: /expected 1\/0/ });
      // Two files naming one annotator.
      mkdirSync(join(sheets, 'copy'), { recursive: true });
      cpSync(join(sheets, 'ann1.csv'), join(sheets, 'copy', 'ann1.csv'));
      const twice = await runCli(['annotate', 'import', join(sheets, 'ann1.csv'), join(sheets, 'copy', 'ann1.csv'), '-w', ws, '--sample', 'sample-7-10']);
      expect(twice.code).toBe(3);
      expect(twice.stderr).toContain('annotator "ann1" is named by two files');
    };

    it('rejects bad sheets before anything exists, naming file, line and column', async () => {
      expect(existsSync(labelsFile)).toBe(false);
      await checkErrors();
    });

    it('imports three annotators; table5 matches kappas computed by hand', async () => {
      // Several samples exist now: the sample must be named.
      const unnamed = await runCli(['annotate', 'import', join(sheets, 'ann1.csv'), '-w', ws]);
      expect(unnamed.code).toBe(2);
      expect(unnamed.stderr).toContain('--sample');

      const r = await runCliJson<{
        annotators: Array<{ annotator: string; labels: number; blanks: Record<string, number>; replaced: boolean }>;
        total_labels: number;
      }>(['annotate', 'import', join(sheets, 'ann1.csv'), join(sheets, 'ann2.csv'), join(sheets, 'ann3.csv'), '-w', ws, '--sample', 'sample-7-10']);
      expect(r.code, r.stdout).toBe(0);
      expect(r.json.annotators.map((a) => [a.annotator, a.labels, a.replaced])).toEqual([
        ['ann1', 60, false],
        ['ann2', 60, false],
        ['ann3', 48, false],
      ]);
      expect(r.json.annotators[2]!.blanks).toEqual(Object.fromEntries(LABELS.map((l) => [l, 2])));
      expect(r.json.total_labels).toBe(168);
      const stored = await sql<{ dimension: string; target: string; n: number }>(
        `select dimension, target, count(*)::INT as n from read_parquet('${labelsFile}') group by all order by all`,
      );
      expect(stored).toEqual([
        { dimension: 'coherence', target: 'assistant', n: 28 },
        { dimension: 'coherence', target: 'user', n: 28 },
        { dimension: 'naturalness', target: 'assistant', n: 28 },
        { dimension: 'naturalness', target: 'user', n: 28 },
        { dimension: 'personalization', target: 'assistant', n: 28 },
        { dimension: 'task_completion', target: 'dialogue', n: 28 },
      ]);

      await ok(['warehouse', '-w', ws, '--db', db]);
      const rows = await sql<Record<string, number | string | null>>('select * from table5');
      expect(rows.map((x) => x['label'])).toEqual(PAPER_ORDER.map(([l]) => l));

      // TC by hand. The simulated judge found all ten sampled dialogues completed (checked here):
      //   J = 1 1 1 1 1 1 1 1 1 1, p_J(1) = 1.
      //   ann1 (copy):  p_o = 1, p_e = 1 x 1 = 1: kappa undefined (no variation to agree beyond chance).
      //   ann2 (items 1-3 flipped to 0): 0 0 0 1 1 1 1 1 1 1, p_o = 7/10, p_2(1) = 0.7,
      //                 p_e = 1 x 0.7 + 0 x 0.3 = 0.7, kappa = (0.7 - 0.7) / 0.3 = 0.
      //   ann3 (copy on items 1-8): p_e = 1: undefined.
      //   Mean over the one defined kappa: 0, min 0, max 0; the note names the two undefined ones.
      //   Fleiss over items 1-8 (all three labelled them): items 1-3 rated {1, 0, 1}: sum n_ij^2 = 4 + 1 = 5,
      //   P_i = (5 - 3) / (3 x 2) = 1/3; items 4-8 unanimous: P_i = 1. P-bar = (3/3 + 5) / 8 = 0.75.
      //   Ratings: 21 ones, 3 zeros of 24: P_e = (7/8)^2 + (1/8)^2 = 50/64. kappa = (48/64 - 50/64) / (14/64) = -1/7.
      expect(ids.map((id) => judge.get(id)!.tc)).toEqual([1, 1, 1, 1, 1, 1, 1, 1, 1, 1]);
      const tc = rows[0]!;
      expect(tc).toMatchObject({ n_dialogues: 10, n_annotators: 3, fleiss_n_dialogues: 8, fleiss_n_annotators: 3 });
      expect(tc['cohen_kappa'] as number).toBeCloseTo(0, 12);
      expect(tc['cohen_kappa_min'] as number).toBeCloseTo(0, 12);
      expect(tc['cohen_kappa_max'] as number).toBeCloseTo(0, 12);
      expect(String(tc['reason'])).toMatch(
        /Cohen mean over 1 of 3 annotators \(ann1: expected agreement is 1: kappa undefined.*ann3: expected agreement is 1: kappa undefined/,
      );
      expect(tc['fleiss_kappa'] as number).toBeCloseTo(-1 / 7, 12);

      // Every dimension against the definitions above, from the labels the test wrote.
      const perAnnotator = await sql<{ label: string; annotator: string; n: number; kappa: number | null; observed: number; expected: number }>(
        'select label, annotator, n, kappa, observed, expected from table5_annotators',
      );
      for (const [label, column] of PAPER_ORDER) {
        const kappas: number[] = [];
        for (const name of ['ann1', 'ann2', 'ann3']) {
          const pairs = ids
            .filter((id) => annotated[name]!.get(id)![column] !== undefined)
            .map((id) => [judge.get(id)![SCORE_OF[column]], annotated[name]!.get(id)![column]!] as [number, number]);
          const expected = cohen(pairs, CATEGORIES[column]);
          const got = perAnnotator.find((a) => a.label === label && a.annotator === name)!;
          expect(got.n).toBe(pairs.length);
          expect(got.observed).toBeCloseTo(pairs.filter(([a, b]) => a === b).length / pairs.length, 12);
          if (expected === null) expect(got.kappa).toBeNull();
          else {
            expect(got.kappa, `${label} ${name}`).toBeCloseTo(expected, 12);
            kappas.push(expected);
          }
        }
        const row = rows.find((x) => x['label'] === label)!;
        if (kappas.length) {
          expect(row['cohen_kappa'] as number).toBeCloseTo(kappas.reduce((a, b) => a + b, 0) / kappas.length, 12);
          expect(row['cohen_kappa_min'] as number).toBeCloseTo(Math.min(...kappas), 12);
          expect(row['cohen_kappa_max'] as number).toBeCloseTo(Math.max(...kappas), 12);
        } else expect(row['cohen_kappa']).toBeNull();
        const subjects = ids.slice(0, 8).map((id) => ['ann1', 'ann2', 'ann3'].map((name) => annotated[name]!.get(id)![column]!));
        const f = fleiss(subjects, CATEGORIES[column]);
        if (f === null) expect(row['fleiss_kappa']).toBeNull();
        else expect(row['fleiss_kappa'] as number, label).toBeCloseTo(f, 12);
      }
    });

    it('rejects bad sheets once labels exist, leaving labels.parquet as it was', async () => {
      expect(existsSync(labelsFile)).toBe(true);
      await checkErrors();
    });

    it('importing an annotator again replaces only their labels', async () => {
      const before = await sql<Record<string, unknown>>(`select * from read_parquet('${labelsFile}') where annotator <> 'ann3' order by all`);
      // ann3 fills in items 9-10 as the judge has them, from a file of another name.
      annotated['ann3'] = new Map(ids.map((id, i) => [id, i >= 8 ? { ...annotated['ann1']!.get(id)! } : annotated['ann3']!.get(id)!]));
      writeSheet(join(sheets, 'ann3-v2.csv'), [HEADER, ...sheetRows('ann3')]);
      const r = await runCliJson<{ annotators: Array<{ annotator: string; labels: number; replaced: boolean }>; kept_annotators: string[] }>([
        'annotate',
        'import',
        join(sheets, 'ann3-v2.csv'),
        '--annotator',
        'ann3',
        '-w',
        ws,
        '--sample',
        'sample-7-10',
      ]);
      expect(r.code, r.stdout).toBe(0);
      expect(r.json.annotators).toMatchObject([{ annotator: 'ann3', labels: 60, replaced: true }]);
      expect(r.json.kept_annotators).toEqual(['ann1', 'ann2']);
      const text = await runCli(['annotate', 'import', join(sheets, 'ann3-v2.csv'), '--annotator', 'ann3', '-w', ws, '--sample', 'sample-7-10']);
      expect(text.stdout).toContain('replaced');
      expect(await sql(`select * from read_parquet('${labelsFile}') where annotator <> 'ann3' order by all`)).toEqual(before);
      const ann3 = await sql<{ n: number; files: string[] }>(
        `select count(*)::INT as n, list(distinct source_file) as files from read_parquet('${labelsFile}') where annotator = 'ann3'`,
      );
      expect(ann3).toEqual([{ n: 60, files: ['ann3-v2.csv'] }]);

      await ok(['warehouse', '-w', ws, '--db', db]);
      const [tc] = await sql<{ fleiss_n_dialogues: number; fleiss_kappa: number }>("select fleiss_n_dialogues, fleiss_kappa from table5 where label = 'TC'");
      // Items 9-10 now rated as the judge has them by all three ({1, 1, 1} twice): P-bar = (3/3 + 7) / 10 = 0.8;
      // ones: 6 (items 1-3) + 21 (items 4-10) = 27 of 30, zeros 3: P_e = 0.81 + 0.01 = 0.82;
      // kappa = (0.8 - 0.82) / 0.18 = -1/9.
      expect(tc!.fleiss_n_dialogues).toBe(10);
      expect(tc!.fleiss_kappa).toBeCloseTo(-1 / 9, 12);
    });

    it('plens tables --only table5 renders the table', async () => {
      const md = await runCli(['tables', '--only', 'table5', '--db', db]);
      expect(md.code, md.stderr).toBe(0);
      expect(md.stdout).toContain('Table 5: Agreement of the judge with human annotators');
      for (const [label] of PAPER_ORDER) expect(md.stdout).toContain(`| ${label}`);
      expect(md.stdout).toContain('-0.111'); // TC's Fleiss kappa, -1/9
      const tex = await runCli(['tables', '--only', 'table5', '--format', 'tex', '--db', db]);
      expect(tex.code).toBe(0);
      expect(tex.stdout).toContain('\\label{tab:table5}');
    });

    it('with one annotator, Fleiss is NULL and says why', async () => {
      const ws3 = join(root, 'out3');
      const db3 = join(root, 'w3.duckdb');
      cpSync(ws, ws3, { recursive: true });
      // A workspace of its own, holding only ann1's labels.
      rmSync(join(ws3, 'annotation', 'labels.parquet'));
      await ok(['annotate', 'import', join(sheets, 'ann1.csv'), '-w', ws3, '--sample', 'sample-7-10']);
      await ok(['warehouse', '-w', ws3, '--db', db3]);
      const rows = await sql<{ label: string; n_annotators: number; fleiss_kappa: number | null; reason: string | null }>(
        'select label, n_annotators, fleiss_kappa, reason from table5',
        db3,
      );
      for (const row of rows) {
        expect(row.n_annotators).toBe(1);
        expect(row.fleiss_kappa).toBeNull();
        expect(row.reason).toContain('Fleiss undefined (fewer than 2 annotators)');
      }
    });
  });
});

describe('annotation helpers', () => {
  it('allocate: largest remainders, by hand', () => {
    // N = 10, n = 4: quotas 4 x 5/10 = 2, 4 x 3/10 = 1.2, 4 x 2/10 = 0.8; floors 2 + 1 + 0 = 3; the last
    // seat goes to the largest remainder (0.8).
    const strata = [
      { kind: 'SD', assistant_model: 'a', setting: 'base', eligible: 5 },
      { kind: 'SD', assistant_model: 'b', setting: 'base', eligible: 3 },
      { kind: 'MD', assistant_model: 'a', setting: 'base', eligible: 2 },
    ];
    expect(allocate(strata, 4, 's').map((s) => s.sampled)).toEqual([2, 1, 1]);
    expect(allocate(strata, 10, 's').map((s) => s.sampled)).toEqual([5, 3, 2]);
    // n = 1: quotas 0.5, 0.3, 0.2: the seat goes to the first.
    expect(allocate(strata, 1, 's').map((s) => s.sampled)).toEqual([1, 0, 0]);
  });

  it('parseCsv (csv-parse): quotes, doubled quotes, line breaks in cells, CRLF, BOM; records keep their first line', () => {
    expect(parseCsv('\uFEFFa,b\r\n"x, ""y""",2\r\n"multi\nline",3\n')).toEqual([
      { line: 1, cells: ['a', 'b'] },
      { line: 2, cells: ['x, "y"', '2'] },
      { line: 3, cells: ['multi\nline', '3'] },
    ]);
    // Spaces around cells and quotes (as typed by hand), a quote inside an unquoted cell, rows of any length.
    expect(parseCsv('a, b ,c\n 1 , "x, y" \n2,say "hi",3,4\n')).toEqual([
      { line: 1, cells: ['a', 'b', 'c'] },
      { line: 2, cells: ['1', 'x, y'] },
      { line: 3, cells: ['2', 'say "hi"', '3', '4'] },
    ]);
    expect(parseCsv('')).toEqual([]);
    expect(parseCsv('\uFEFF')).toEqual([]);
  });

  it("parseCsv: the delimiter is the header line's: comma, else semicolon, else tab", () => {
    expect(parseCsv('a;b\n1;2')).toEqual([
      { line: 1, cells: ['a', 'b'] },
      { line: 2, cells: ['1', '2'] },
    ]);
    // Where ',' is the decimal mark, a semicolon sheet may hold 3,0: one cell, not two.
    expect(parseCsv('a;b;c\n3,0;"x;y";\n').map((r) => r.cells)).toEqual([
      ['a', 'b', 'c'],
      ['3,0', 'x;y', ''],
    ]);
    expect(parseCsv('a\tb\tc\n1\t\t3\n').map((r) => r.cells)).toEqual([
      ['a', 'b', 'c'],
      ['1', '', '3'],
    ]);
    // A comma sheet keeps semicolons and tabs in its cells.
    expect(parseCsv('a,b\nx; y\tz,2\n').map((r) => r.cells)).toEqual([
      ['a', 'b'],
      ['x; y\tz', '2'],
    ]);
  });

  it('parseCsv: a record after a quoted cell spanning lines starts on its own line, with any line ends', () => {
    // Line 1 header; lines 2-3 a note over two lines; line 4 a bad value; line 5 blank; lines 6-8 a
    // note over three lines; line 9 the last record, with no line end.
    const lines = ['id,score,notes', '1,3,"a note', 'over two lines"', '2,7,', '', '3,1,"one', 'two', 'three"', '4,9,'];
    const expected = [
      { line: 1, cells: ['id', 'score', 'notes'] },
      { line: 2, cells: ['1', '3', 'a note\nover two lines'] },
      { line: 4, cells: ['2', '7', ''] },
      { line: 5, cells: [''] },
      { line: 6, cells: ['3', '1', 'one\ntwo\nthree'] },
      { line: 9, cells: ['4', '9', ''] },
    ];
    for (const eol of ['\n', '\r\n', '\r']) {
      // CRLF inside a quoted cell is one line (csv-parse alone counts it as two), as is a lone CR;
      // both are read as \n.
      expect(parseCsv(lines.join(eol)), JSON.stringify(eol)).toEqual(expected);
      expect(parseCsv(lines.join(eol) + eol), JSON.stringify(eol)).toEqual(expected);
    }
    // Mixed line ends (a sheet edited in two places).
    expect(parseCsv('a,b\r\n"x\ny",1\n2,3\r\n').map((r) => r.line)).toEqual([1, 2, 4]);
  });

  it('parseCsv: a malformed file is a CsvError naming the line', () => {
    const error = (text: string) => {
      try {
        parseCsv(text);
      } catch (e) {
        expect(e).toBeInstanceOf(CsvError);
        return { line: (e as CsvError).line, message: (e as CsvError).message };
      }
      throw new Error('no error');
    };
    // An unclosed quote runs to the end of the file: the line where its record starts.
    expect(error('a,b\n"open,2\n')).toEqual({ line: 2, message: expect.stringMatching(/never closed/) });
    expect(error('a,b\r\n1,"x\r\ny"\r\n2,"open\r\nmore\r\n3,4\r\n')).toEqual({ line: 4, message: expect.stringMatching(/never closed/) });
    // Text after a closing quote: the line of that quote, after a cell over two lines.
    expect(error('a,b\n1,"x\ny"\n2,"z"w\n')).toEqual({ line: 4, message: expect.stringMatching(/after the closing quote/) });
  });
});
