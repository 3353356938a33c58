import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { repoRoot, runCli, runCliJson, tempDir } from '../../../helpers/cli.js';
import { filesUnder, sampleWorkspace } from '../../../helpers/workspace.js';

/*
 * The round trip that defines "done": dialogues made and judged natively (sim:default, settings
 * base and base+d, users 0-1 of the sample) are written out in the original scripts' layout,
 * imported into a second workspace with the same dataset and scenarios, and every result table
 * must give the same values (means and n; model, judge and run names differ by design, and so do
 * the bootstrap intervals, which are seeded by those names).
 */

type Row = Record<string, unknown>;
const fixture = join(repoRoot, 'test', 'fixtures', 'legacy', 'output');
const sql = async (db: string, query: string) => (await runCliJson<Row[]>(['sql', query, '--db', db])).json;

interface NativeDialogue {
  dialogue_id: string;
  user_id: string;
  task_id: string;
  setting: string;
  messages: Array<{ role: string; content: string }>;
}
interface NativeJudgment {
  dialogue_id: string;
  dimension: string;
  target: string;
  verdict: boolean | null;
  score: number;
  justification: string;
}

/**
 * The native run in the legacy layout. The raw replies are not stored for parsed judgments, so each
 * is rebuilt in the judge's reply format from its verdict or score and justification. Shapes and
 * names vary on purpose: the three accepted dialogue shapes in turn, and user1's dimension folders
 * under their aliases with a markdown-styled score line.
 */
function writeLegacyLayout(out: string, dialogues: NativeDialogue[], judgments: NativeJudgment[]): void {
  const folder = (d: NativeDialogue) => `sim-default${d.setting === 'base+d' ? '_d' : ''}`;
  const byId = new Map(dialogues.map((d) => [d.dialogue_id, d]));
  dialogues.forEach((d, i) => {
    const dir = join(out, 'dialogue', d.user_id, folder(d));
    mkdirSync(dir, { recursive: true });
    const plain = d.messages.map((m) => ({ role: m.role, content: m.content }));
    const body =
      i % 3 === 0 ? plain : i % 3 === 1 ? { user_id: d.user_id, messages: plain } : { dialogue: d.messages.map((m) => ({ speaker: m.role, text: m.content })) };
    writeFileSync(join(dir, `${d.task_id}_dialogue.json`), JSON.stringify(body, null, 2));
  });
  const aliases: Record<string, string> = { task_completion: 'tc', personalization: 'pers', naturalness: 'nat', coherence: 'coh' };
  for (const j of judgments) {
    const d = byId.get(j.dialogue_id)!;
    const alias = d.user_id === 'user1';
    const dir = join(out, 'evaluation', d.user_id, folder(d), alias ? aliases[j.dimension]! : j.dimension, 'sim-judge');
    mkdirSync(dir, { recursive: true });
    const label = j.dimension === 'naturalness' ? 'Naturalness' : 'Coherence';
    const reply =
      j.dimension === 'task_completion'
        ? `VERDICT: ${j.verdict ? 'True' : 'False'}\nEXPLANATION: ${j.justification}\n`
        : j.dimension === 'personalization'
          ? `<response>\nPersonalization Score: ${j.score}\nKey Observations: -\nJustification: ${j.justification}\n</response>\n`
          : alias
            ? `**${label} Score:** ${j.score}/5\n\nJustification: ${j.justification}\n`
            : `${label} Score: ${j.score}\nJustification: ${j.justification}\n`;
    const suffix = j.target === 'user' ? '_user' : j.dimension === 'naturalness' || j.dimension === 'coherence' ? '_asst' : '';
    writeFileSync(join(dir, `${d.task_id}${suffix}.txt`), reply);
  }
}

const hashes = (dir: string) => Object.fromEntries(filesUnder(dir).map((f) => [relative(dir, f), createHash('sha256').update(readFileSync(f)).digest('hex')]));

describe('import-legacy: a native run written in the legacy layout imports to the same tables', () => {
  let nativeDb: string;
  let legacyDb: string;
  let legacyWs: string;
  let legacyOut: string;
  let summary: Row;

  beforeAll(async () => {
    const native = await sampleWorkspace(['--users', '0-1']);
    for (const args of [
      ['dialogues', '--assistant', 'sim:default', '--setting', 'base', 'base+d'],
      ['judge', '--judge', 'sim:default'],
    ]) {
      const r = await runCli([...args, '-w', native, '--no-progress', '-q']);
      expect(r.code, r.stderr).toBe(0);
    }
    nativeDb = join(native, '..', 'native.duckdb');
    expect((await runCli(['warehouse', '-w', native, '--db', nativeDb, '--lexical', 'none', '-q'])).code).toBe(0);

    const dialogues = (await sql(
      nativeDb,
      "select dialogue_id, user_id, task_id, setting, messages from dialogues where status = 'ok' order by dialogue_id",
    )) as unknown as NativeDialogue[];
    const judgments = (await sql(
      nativeDb,
      "select dialogue_id, dimension, target, verdict, score, justification from judgments where status = 'ok' and turn is null",
    )) as unknown as NativeJudgment[];
    expect(dialogues.length).toBeGreaterThan(50);
    expect(judgments.length).toBe(dialogues.length * 6);
    legacyOut = join(tempDir('plens-legacy-'), 'output');
    writeLegacyLayout(legacyOut, dialogues, judgments);

    legacyWs = await sampleWorkspace(['--users', '0-1']);
    const imported = await runCliJson(['import-legacy', legacyOut, '-w', legacyWs]);
    expect(imported.code, imported.stdout + imported.stderr).toBe(0);
    summary = imported.json;
    legacyDb = join(legacyWs, '..', 'legacy.duckdb');
    expect((await runCli(['warehouse', '-w', legacyWs, '--db', legacyDb, '--lexical', 'none', '-q'])).code).toBe(0);
  });

  const same = async (query: string) => {
    const [a, b] = await Promise.all([sql(nativeDb, query), sql(legacyDb, query)]);
    expect(a.length).toBeGreaterThan(0);
    expect(b).toEqual(a);
  };

  it('table3, table4, table12 and figure4 give the same means and n', async () => {
    await same('select kind, n_dialogues, n_tc, tcr, n_p, p, n_nat, nat, n_coh, coh, n_failed, n_unparsed from table3 order by kind');
    await same('select setting, sd_n, sd_tcr, sd_p, md_n, md_tcr, md_p, n_not_scored from table4 order by setting');
    await same('select n_nat, nat, n_coh, coh from table12');
    await same('select setting, domain, n_tc, tcr, n_p, p from figure4 order by setting, domain');
    await same('select setting, kind, n_dialogues, turns_per_dialogue from table13 order by setting, kind');
    await same('select setting, dimension, target, n_ok, n_failed, n_unparsed from judgment_status order by all');
  });

  it('every dialogue and judgment comes back the same, under legacy names and its own run', async () => {
    await same(
      "select scenario_id, setting, kind, rounds, [{'role': m.role, 'content': m.content} for m in messages] as messages from dialogues order by scenario_id, setting",
    );
    await same('select scenario_id, setting, dimension, target, status, verdict, score, justification, relevant_domains from judgments order by all');
    // How each dialogue ended is recovered from its last message.
    await same('select scenario_id, setting, end_reason from dialogues order by all');
    expect(await sql(legacyDb, 'select distinct assistant_model, user_model, prompt_version, output_tokens from dialogues')).toEqual([
      { assistant_model: 'legacy:sim-default', user_model: 'legacy:unknown', prompt_version: 'legacy', output_tokens: null },
    ]);
    const runs = await sql(legacyDb, 'select run, judge_model, judge_config, dialogue_config from result_runs');
    expect(runs).toEqual([
      {
        run: expect.any(String),
        judge_model: 'legacy:sim-judge',
        judge_config: 'legacy:sim-judge | prompts legacy',
        dialogue_config: 'user legacy:unknown | prompts legacy',
      },
    ]);
    const [native] = await sql(nativeDb, 'select run from result_runs');
    expect(runs[0]!['run']).not.toBe(native!['run']);
  });

  it('writes one cell per model and setting and one folder per judge, and reports counts', () => {
    expect(
      filesUnder(join(legacyWs, 'dialogues'))
        .map((f) => relative(legacyWs, f))
        .sort(),
    ).toEqual([
      'dialogues/legacy-sim-default-base+d/dialogues.parquet',
      'dialogues/legacy-sim-default-base+d/legacy.json',
      'dialogues/legacy-sim-default-base/dialogues.parquet',
      'dialogues/legacy-sim-default-base/legacy.json',
    ]);
    expect(
      filesUnder(join(legacyWs, 'judgments'))
        .map((f) => relative(legacyWs, f))
        .sort(),
    ).toEqual(['judgments/legacy-sim-judge/judgments.parquet', 'judgments/legacy-sim-judge/legacy.json']);
    const cells = summary['cells'] as Row[];
    expect(cells.map((c) => [c['model'], c['setting'], c['folders']])).toEqual([
      ['legacy:sim-default', 'base', ['sim-default']],
      ['legacy:sim-default', 'base+d', ['sim-default_d']],
    ]);
    const n = cells[0]!['dialogues'] as number;
    const counts = summary['counts'] as Row[];
    expect(counts).toHaveLength(2 * 6);
    for (const c of counts) expect(c).toMatchObject({ judge: 'legacy:sim-judge', ok: n, parse_error: 0 });
    expect(summary).toMatchObject({ dialogues: 2 * n, judgments: 12 * n, parse_errors: 0, warnings: [], problems: [] });
  });

  it('a second import of the same folder rewrites the same files and doubles nothing', async () => {
    const before = { d: hashes(join(legacyWs, 'dialogues')), j: hashes(join(legacyWs, 'judgments')) };
    const again = await runCliJson(['import-legacy', legacyOut, '-w', legacyWs]);
    expect(again.code).toBe(0);
    expect((again.json['judges'] as Row[])[0]).toMatchObject({ kept_rows: 0 });
    expect({ d: hashes(join(legacyWs, 'dialogues')), j: hashes(join(legacyWs, 'judgments')) }).toEqual(before);
    // No temp file or staging folder is left behind.
    expect(filesUnder(legacyWs).filter((f) => /\/\.(?:import-legacy-|[^/]*\.tmp-)/.test(f))).toEqual([]);
  });
});

describe('import-legacy: the static fixture, options and problems', () => {
  let template: string;
  beforeAll(async () => {
    template = await sampleWorkspace(['--users', '0']);
  });
  const freshWorkspace = () => {
    const ws = join(tempDir('plens-legacy-ws-'), 'out');
    cpSync(template, ws, { recursive: true });
    return ws;
  };
  const copyFixture = () => {
    const out = join(tempDir('plens-legacy-src-'), 'output');
    cpSync(fixture, out, { recursive: true });
    return out;
  };

  it('imports the fixture: every accepted shape, aliases, and an unparseable reply kept as parse_error', async () => {
    const ws = freshWorkspace();
    // The folder above output/ is accepted too.
    const r = await runCliJson(['import-legacy', join(fixture, '..'), '-w', ws]);
    expect(r.code, r.stdout).toBe(0);
    expect(r.json).toMatchObject({ dialogues: 3, judgments: 6, parse_errors: 1 });
    expect(r.json['unparsed']).toEqual([
      { file: 'evaluation/user0/gpt-x/task_completion/claude/MD-task-1.txt', dimension: 'task_completion', error: 'no VERDICT line' },
    ]);
    expect(r.json['warnings']).toHaveLength(3);
    const db = join(ws, '..', 'w.duckdb');
    expect((await runCli(['warehouse', '-w', ws, '--db', db, '--lexical', 'none', '-q'])).code).toBe(0);
    expect(
      await sql(
        db,
        'select scenario_id, setting, dimension, target, status, verdict, score, raw, error.kind as error from judgments order by setting, scenario_id, dimension, target',
      ),
    ).toEqual([
      {
        scenario_id: 'user0:MD-task-1',
        setting: 'base',
        dimension: 'task_completion',
        target: 'dialogue',
        status: 'parse_error',
        verdict: null,
        score: null,
        raw: 'I think the task went fine overall.\n',
        error: 'parse_error',
      },
      {
        scenario_id: 'user0:SD-Alarm-task-1',
        setting: 'base',
        dimension: 'naturalness',
        target: 'assistant',
        status: 'ok',
        verdict: null,
        score: 4,
        raw: null,
        error: null,
      },
      {
        scenario_id: 'user0:SD-Alarm-task-1',
        setting: 'base',
        dimension: 'naturalness',
        target: 'user',
        status: 'ok',
        verdict: null,
        score: 5,
        raw: null,
        error: null,
      },
      {
        scenario_id: 'user0:SD-Alarm-task-1',
        setting: 'base',
        dimension: 'personalization',
        target: 'assistant',
        status: 'ok',
        verdict: null,
        score: 3,
        raw: null,
        error: null,
      },
      {
        scenario_id: 'user0:SD-Alarm-task-1',
        setting: 'base',
        dimension: 'task_completion',
        target: 'dialogue',
        status: 'ok',
        verdict: true,
        score: 1,
        raw: null,
        error: null,
      },
      {
        scenario_id: 'user0:SD-Alarm-task-1',
        setting: 'base+all',
        dimension: 'task_completion',
        target: 'dialogue',
        status: 'ok',
        verdict: false,
        score: 0,
        raw: null,
        error: null,
      },
    ]);
    expect(await sql(db, 'select kind, n_dialogues, n_tc, tcr, n_unparsed from table3 order by kind desc')).toEqual([
      { kind: 'SD', n_dialogues: 1, n_tc: 1, tcr: 100, n_unparsed: 0 },
      { kind: 'MD', n_dialogues: 1, n_tc: 0, tcr: null, n_unparsed: 1 },
    ]);
    expect(await sql(db, "select [m.role for m in messages] as roles from dialogues where setting = 'base+all'")).toEqual([{ roles: ['user', 'assistant'] }]);
  });

  it('recovers end_reason from the last message, and reads each reply as the gather script does too', async () => {
    const out = copyFixture();
    // A dialogue that ran out of rounds ends on the user's message (no final assistant answer).
    writeFileSync(
      join(out, 'dialogue', 'user0', 'gpt-x', 'SD-Books-task-1_dialogue.json'),
      JSON.stringify([
        { role: 'user', content: 'A thriller for the weekend?' },
        { role: 'assistant', content: 'Which author?' },
        { role: 'user', content: 'Any, really.' },
      ]),
    );
    const ws = freshWorkspace();
    const r = await runCliJson(['import-legacy', out, '-w', ws]);
    expect(r.code, r.stdout).toBe(0);
    const db = join(ws, '..', 'w.duckdb');
    expect((await runCli(['warehouse', '-w', ws, '--db', db, '--lexical', 'none', '-q'])).code).toBe(0);
    expect(await sql(db, 'select scenario_id, setting, end_reason, rounds from dialogues order by setting, scenario_id')).toEqual([
      { scenario_id: 'user0:MD-task-1', setting: 'base', end_reason: 'terminated', rounds: 1 },
      { scenario_id: 'user0:SD-Alarm-task-1', setting: 'base', end_reason: 'terminated', rounds: 2 },
      { scenario_id: 'user0:SD-Books-task-1', setting: 'base', end_reason: 'round_limit', rounds: 1 },
      { scenario_id: 'user0:SD-Alarm-task-1', setting: 'base+all', end_reason: 'terminated', rounds: 1 },
    ]);
    // The fixture's replies: "**Naturalness Score:** 4/5" is 4 to plens and no match to the script;
    // the MD verdict plens cannot read is "not completed" to the script.
    expect(
      await sql(
        db,
        'select scenario_id, setting, dimension, target, status, score, original_score from judgments order by setting, scenario_id, dimension, target',
      ),
    ).toEqual([
      {
        scenario_id: 'user0:MD-task-1',
        setting: 'base',
        dimension: 'task_completion',
        target: 'dialogue',
        status: 'parse_error',
        score: null,
        original_score: 0,
      },
      { scenario_id: 'user0:SD-Alarm-task-1', setting: 'base', dimension: 'naturalness', target: 'assistant', status: 'ok', score: 4, original_score: null },
      { scenario_id: 'user0:SD-Alarm-task-1', setting: 'base', dimension: 'naturalness', target: 'user', status: 'ok', score: 5, original_score: 5 },
      { scenario_id: 'user0:SD-Alarm-task-1', setting: 'base', dimension: 'personalization', target: 'assistant', status: 'ok', score: 3, original_score: 3 },
      { scenario_id: 'user0:SD-Alarm-task-1', setting: 'base', dimension: 'task_completion', target: 'dialogue', status: 'ok', score: 1, original_score: 1 },
      {
        scenario_id: 'user0:SD-Alarm-task-1',
        setting: 'base+all',
        dimension: 'task_completion',
        target: 'dialogue',
        status: 'ok',
        score: 0,
        original_score: 0,
      },
    ]);
    // Table 3, base: SD has one reply (True); MD one unreadable reply: no plens TCR, 0% as the script counts.
    expect(await sql(db, 'select kind, n_tc, tcr, n_tc_unparsed, n_tc_original, tcr_original from table3 order by kind desc')).toEqual([
      { kind: 'SD', n_tc: 1, tcr: 100, n_tc_unparsed: 0, n_tc_original: 1, tcr_original: 100 },
      { kind: 'MD', n_tc: 0, tcr: null, n_tc_unparsed: 1, n_tc_original: 1, tcr_original: 0 },
    ]);
  });

  it('--dry-run checks and reports, and writes nothing', async () => {
    const ws = freshWorkspace();
    const r = await runCliJson(['import-legacy', fixture, '-w', ws, '--dry-run']);
    expect(r.code).toBe(0);
    expect(r.json).toMatchObject({ dry_run: true, dialogues: 3, written: [] });
    expect(existsSync(join(ws, 'dialogues')) || existsSync(join(ws, 'judgments'))).toBe(false);
    const text = await runCli(['import-legacy', fixture, '-w', ws, '--dry-run']);
    expect(text.stdout).toContain('Would import 3 dialogue(s) and 6 judgment(s)');
    expect(text.stdout).toContain('legacy:gpt-x  base+all: 1 (1 SD + 0 MD) from gpt-x_d_p_s');
  });

  it('--setting-map names another suffix', async () => {
    const out = copyFixture();
    cpSync(join(out, 'dialogue', 'user0', 'gpt-x'), join(out, 'dialogue', 'user0', 'gpt-x_v'), { recursive: true });
    // Without the map, `_v` is not a setting flag: the folder is a model of its own, in base.
    const plain = await runCliJson(['import-legacy', out, '-w', freshWorkspace(), '--dry-run']);
    expect(plain.code, plain.stdout).toBe(0);
    expect((plain.json['cells'] as Row[]).map((c) => [c['model'], c['setting']])).toEqual([
      ['legacy:gpt-x', 'base'],
      ['legacy:gpt-x', 'base+all'],
      ['legacy:gpt-x_v', 'base'],
    ]);
    const ws = freshWorkspace();
    const r = await runCliJson(['import-legacy', out, '-w', ws, '--setting-map', '_v=vanilla']);
    expect(r.code, r.stdout).toBe(0);
    expect((r.json['cells'] as Row[]).map((c) => c['setting'])).toEqual(['vanilla', 'base', 'base+all']);
  });

  it('reports every problem with its file and pointer or line, exits 3, and writes nothing', async () => {
    const out = copyFixture();
    const d = join(out, 'dialogue', 'user0');
    cpSync(join(d, 'gpt-x'), join(d, 'gpt-x_d_p'), { recursive: true });
    writeFileSync(
      join(d, 'gpt-x', 'SD-Books-task-1_dialogue.json'),
      '[\n  {"role": "user", "content": "hi"},\n  {"role": "system", "content": "be nice"},\n  {"role": "assistant", "content": 42}\n]\n',
    );
    writeFileSync(join(d, 'gpt-x', 'SD-Nope-task-9_dialogue.json'), '[{"role": "user", "content": "hi"}]');
    writeFileSync(join(d, 'gpt-x', 'SD-Music-task-1_dialogue.json'), '[\n  {"role": "user", "content": "hi"\n  {"role": "assistant"}\n]');
    mkdirSync(join(out, 'evaluation', 'user0', 'gpt-x', 'fluency', 'claude'), { recursive: true });
    writeFileSync(join(out, 'evaluation', 'user0', 'gpt-x', 'nat', 'claude', 'SD-Alarm-task-1.txt'), 'Naturalness Score: 4');
    const ws = freshWorkspace();
    const r = await runCliJson(['import-legacy', out, '-w', ws]);
    expect(r.code).toBe(3);
    const error = (r.json as unknown as { error: { problems: Row[] } }).error;
    const where = error.problems.map((p) => ({ ...p, file: relative(out, p['file'] as string) }));
    expect(where).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          code: 'E_INPUT_LAYOUT',
          file: 'dialogue/user0/gpt-x_d_p',
          message: expect.stringContaining('setting suffix "_d_p" is not one we accept ((none) -> base, _d -> base+d'),
        }),
        expect.objectContaining({
          code: 'E_INPUT_SCHEMA',
          file: 'dialogue/user0/gpt-x/SD-Books-task-1_dialogue.json',
          line: 3,
          pointer: '/1/role',
          message: 'role "system" is not "user" or "assistant"',
        }),
        expect.objectContaining({
          code: 'E_INPUT_SCHEMA',
          file: 'dialogue/user0/gpt-x/SD-Books-task-1_dialogue.json',
          line: 4,
          pointer: '/2/content',
          message: 'the message text must be a string, found a number',
        }),
        expect.objectContaining({
          code: 'E_INPUT_REFERENCE',
          file: 'dialogue/user0/gpt-x/SD-Nope-task-9_dialogue.json',
          message: expect.stringContaining('scenario user0:SD-Nope-task-9 is not in the imported dataset'),
        }),
        expect.objectContaining({ code: 'E_INPUT_JSON', file: 'dialogue/user0/gpt-x/SD-Music-task-1_dialogue.json', line: 3 }),
        expect.objectContaining({
          code: 'E_INPUT_LAYOUT',
          file: 'evaluation/user0/gpt-x/fluency',
          message: expect.stringContaining('unknown dimension folder "fluency"'),
        }),
        expect.objectContaining({
          code: 'E_INPUT_LAYOUT',
          file: 'evaluation/user0/gpt-x/nat/claude/SD-Alarm-task-1.txt',
          message: expect.stringContaining('_user.txt or SD-Alarm-task-1_asst.txt'),
        }),
      ]),
    );
    expect(error.problems).toHaveLength(7);
    expect(existsSync(join(ws, 'dialogues')) || existsSync(join(ws, 'judgments'))).toBe(false);

    // Without --json: the first problem with its place, the others listed, nothing written.
    rmSync(join(d, 'gpt-x_d_p'), { recursive: true });
    const text = await runCli(['import-legacy', out, '-w', ws]);
    expect(text.code).toBe(3);
    expect(text.stderr).toMatch(
      /SD-Books-task-1_dialogue\.json:3 \/1\/role: role "system" is not "user" or "assistant" \(and 5 more problems; nothing was written\)/,
    );
    expect(text.stderr).toContain('SD-Music-task-1_dialogue.json:3:');
    expect(existsSync(join(ws, 'dialogues'))).toBe(false);
  });

  it('a judgment without its dialogue, and two files for one judgment, are refused', async () => {
    const out = copyFixture();
    const e = join(out, 'evaluation', 'user0', 'gpt-x');
    cpSync(join(e, 'task_completion'), join(e, 'tc'), { recursive: true });
    mkdirSync(join(out, 'evaluation', 'user0', 'gpt-y', 'tc', 'claude'), { recursive: true });
    writeFileSync(join(out, 'evaluation', 'user0', 'gpt-y', 'tc', 'claude', 'SD-Alarm-task-1.txt'), 'VERDICT: True');
    const r = await runCliJson(['import-legacy', out, '-w', freshWorkspace()]);
    expect(r.code).toBe(3);
    const problems = (r.json as unknown as { error: { problems: Row[] } }).error.problems;
    expect(problems.map((p) => [p['code'], relative(out, p['file'] as string)]).sort()).toEqual([
      ['E_INPUT_DUPLICATE', 'evaluation/user0/gpt-x/tc/claude/MD-task-1.txt'],
      ['E_INPUT_DUPLICATE', 'evaluation/user0/gpt-x/tc/claude/SD-Alarm-task-1.txt'],
      ['E_INPUT_REFERENCE', 'evaluation/user0/gpt-y/tc/claude/SD-Alarm-task-1.txt'],
    ]);
  });

  it('needs an imported dataset (exit 4) and an existing folder (exit 3)', async () => {
    const empty = join(tempDir('plens-legacy-empty-'), 'out');
    const r = await runCli(['import-legacy', fixture, '-w', empty]);
    expect(r.code).toBe(4);
    expect(r.stderr).toContain('plens import');
    const missing = await runCli(['import-legacy', join(fixture, 'nope'), '-w', freshWorkspace()]);
    expect(missing.code).toBe(3);
  });

  it('keeps the judgments of other cells when another output folder shares a judge', async () => {
    const ws = freshWorkspace();
    expect((await runCli(['import-legacy', fixture, '-w', ws])).code).toBe(0);
    const other = join(tempDir('plens-legacy-other-'), 'output');
    mkdirSync(join(other, 'dialogue', 'user0', 'gpt-z'), { recursive: true });
    cpSync(
      join(fixture, 'dialogue', 'user0', 'gpt-x', 'SD-Alarm-task-1_dialogue.json'),
      join(other, 'dialogue', 'user0', 'gpt-z', 'SD-Alarm-task-1_dialogue.json'),
    );
    mkdirSync(join(other, 'evaluation', 'user0', 'gpt-z', 'tc', 'claude'), { recursive: true });
    writeFileSync(join(other, 'evaluation', 'user0', 'gpt-z', 'tc', 'claude', 'SD-Alarm-task-1.txt'), 'VERDICT: True\n');
    const r = await runCliJson(['import-legacy', other, '-w', ws]);
    expect(r.code, r.stdout).toBe(0);
    expect((r.json['judges'] as Row[])[0]).toMatchObject({ judgments: 1, kept_rows: 6 });
    const db = join(ws, '..', 'w.duckdb');
    expect((await runCli(['warehouse', '-w', ws, '--db', db, '--lexical', 'none', '-q'])).code).toBe(0);
    expect(await sql(db, 'select assistant_model, setting, count(*) as n from judgments group by all order by all')).toEqual([
      { assistant_model: 'legacy:gpt-x', setting: 'base', n: 5 },
      { assistant_model: 'legacy:gpt-x', setting: 'base+all', n: 1 },
      { assistant_model: 'legacy:gpt-z', setting: 'base', n: 1 },
    ]);

    // The gpt-x cells again, now judged by a judge of another name: claude's rows of them go.
    const renamed = copyFixture();
    for (const dim of ['task_completion', 'personalization', 'nat'])
      cpSync(join(renamed, 'evaluation', 'user0', 'gpt-x', dim, 'claude'), join(renamed, 'evaluation', 'user0', 'gpt-x', dim, 'claude-2'), { recursive: true });
    for (const dim of ['task_completion', 'personalization', 'nat']) rmSync(join(renamed, 'evaluation', 'user0', 'gpt-x', dim, 'claude'), { recursive: true });
    rmSync(join(renamed, 'evaluation', 'user0', 'gpt-x_d_p_s'), { recursive: true });
    const again = await runCliJson(['import-legacy', renamed, '-w', ws]);
    expect(again.code, again.stdout).toBe(0);
    expect(again.json['pruned']).toEqual([{ dir: join(ws, 'judgments', 'legacy-claude'), removed_rows: 6 }]);
    expect((await runCli(['warehouse', '-w', ws, '--db', db, '--lexical', 'none', '-q'])).code).toBe(0);
    expect(await sql(db, 'select judge_model, assistant_model, setting, count(*) as n from judgments group by all order by all')).toEqual([
      { judge_model: 'legacy:claude', assistant_model: 'legacy:gpt-z', setting: 'base', n: 1 },
      { judge_model: 'legacy:claude-2', assistant_model: 'legacy:gpt-x', setting: 'base', n: 5 },
    ]);
  });
});
