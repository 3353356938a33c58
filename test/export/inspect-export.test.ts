import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { parse, stringify } from 'yaml';
import { beforeAll, describe, expect, it } from 'vitest';
import { Database } from '../../src/db/database.js';
import { inspectFileName, inspectModelName } from '../../src/export/inspect.js';
import { repoRoot, runCli, runCliJson, tempDir } from '../helpers/cli.js';

/**
 * `plens export --format inspect` on the demos' runs: every log validates against Inspect's own
 * log schema (test/fixtures/inspect, from inspect_ai), and its samples and metrics are the
 * warehouse's, counted and compared view by view. The PersonaLens demo runs on 2 of its 8 users
 * and 2 of its 6 settings (the same pipeline otherwise), to keep the test short.
 */

type Log = {
  version: number;
  status: string;
  eval: { task: string; task_id: string; created: string; model: string; task_args: Record<string, string | number>; config: Record<string, unknown> };
  results: { total_samples: number; completed_samples: number; scores: Array<{ name: string; reducer?: string; metrics: Record<string, { value: number }> }> };
  stats: { model_usage: Record<string, { input_tokens: number; output_tokens: number }>; role_usage: Record<string, { input_tokens: number }> };
  samples: Array<{ id: string; epoch: number; scores: Record<string, { value: number }>; messages: unknown[]; choices?: string[]; target: string }>;
  reductions?: Array<{ scorer: string; reducer: string; samples: Array<{ sample_id: string; value: number }> }>;
};

const dir = tempDir('plens-export-');
const runs = {
  personalens: { pipeline: join(dir, 'personalens.yaml'), db: join(dir, 'personalens.duckdb'), logs: join(dir, 'logs-personalens') },
  persona: { pipeline: join(repoRoot, 'pipelines', 'persona-demo.yaml'), db: join(dir, 'persona.duckdb'), logs: join(dir, 'logs-persona') },
  prefeval: { pipeline: join(repoRoot, 'pipelines', 'prefeval-demo.yaml'), db: join(dir, 'prefeval.duckdb'), logs: join(dir, 'logs-prefeval') },
};
const env = {
  PLENS_PERSONA_WORKSPACE: join(dir, 'persona'),
  PLENS_PERSONA_WAREHOUSE: runs.persona.db,
  PLENS_PREFEVAL_WORKSPACE: join(dir, 'prefeval'),
  PLENS_PREFEVAL_WAREHOUSE: runs.prefeval.db,
};

let validate: ValidateFunction;
const logsOf = (folder: string): Array<{ file: string; log: Log }> =>
  readdirSync(folder)
    .sort()
    .map((f) => ({ file: f, log: JSON.parse(readFileSync(join(folder, f), 'utf8')) as Log }));

async function rows<T = Record<string, unknown>>(db: string, sql: string): Promise<T[]> {
  const d = await Database.open(db, { readOnly: true });
  try {
    return await d.all<T>(sql);
  } finally {
    await d.close();
  }
}

const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

beforeAll(async () => {
  const schema = JSON.parse(readFileSync(join(repoRoot, 'test', 'fixtures', 'inspect', 'eval-log.schema.json'), 'utf8')) as object;
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  validate = ajv.compile(schema);

  // The demo pipeline, on 2 users and 2 settings, in this test's folder.
  const demo = parse(readFileSync(join(repoRoot, 'pipelines', 'demo.yaml'), 'utf8')) as Record<string, Record<string, unknown>>;
  demo['scenarios']!['users'] = '0-1';
  demo['dialogues']!['settings'] = ['vanilla', 'base+all'];
  writeFileSync(runs.personalens.pipeline, stringify({ ...demo, workspace: join(dir, 'personalens'), warehouse: runs.personalens.db }));

  for (const run of Object.values(runs)) {
    const made = await runCli(['make', 'warehouse', '-p', run.pipeline, '--no-progress'], { env });
    expect(made.code, made.stderr).toBe(0);
    const exported = await runCliJson<{ logs: unknown[] }>(['export', '--db', run.db, '-o', run.logs], { env });
    expect(exported.code, exported.stderr + exported.stdout).toBe(0);
  }
}, 300_000);

describe('plens export --format inspect', () => {
  it("writes logs that Inspect's log schema accepts, named as Inspect names its own", () => {
    const all = Object.values(runs).flatMap((r) => logsOf(r.logs));
    expect(all.length).toBe(2 + 9 + 36);
    for (const { file, log } of all) {
      const ok = validate(log);
      expect(ok ? [] : validate.errors!.slice(0, 3).map((e) => `${file} ${e.instancePath} ${e.message}`)).toEqual([]);
      // inspect's listing: {ISO time}_{task}_{id}.json, the time's colons as dashes; its header before the samples.
      expect(file).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-00-00_[^_]+_[A-Za-z0-9]{22}\.json$/);
      expect(inspectFileName(log)).toBe(file);
      expect(Object.keys(log).indexOf('samples')).toBeGreaterThan(Object.keys(log).indexOf('stats'));
      expect(log.version).toBe(2);
    }
  });

  it('PersonaLens: a log per assistant, setting and judge configuration, its samples and scores those of dialogue_scores', async () => {
    const logs = logsOf(runs.personalens.logs).map((l) => l.log);
    const cells = await rows<{ setting: string; n: number }>(runs.personalens.db, 'SELECT setting, count(*)::INT AS n FROM dialogue_scores GROUP BY ALL');
    expect(logs.map((l) => l.eval.task_args['setting']).sort()).toEqual(cells.map((c) => c.setting).sort());
    const table4 = await rows<{ setting: string; sd_tcr: number; md_tcr: number; sd_p: number; sd_n: number; md_n: number }>(
      runs.personalens.db,
      'SELECT setting, sd_tcr, md_tcr, sd_p, sd_n, md_n FROM table4',
    );
    for (const log of logs) {
      const setting = String(log.eval.task_args['setting']);
      expect(log.eval.task).toBe('personalens');
      expect(log.eval.model).toBe('sim/default');
      const scored = await rows<{ scenario_id: string; replicate: number; tc: number; p: number; nat_u: number }>(
        runs.personalens.db,
        `SELECT scenario_id, replicate, tc, p, nat_u FROM dialogue_scores WHERE setting = '${setting}' ORDER BY scenario_id, replicate`,
      );
      expect(log.samples.length).toBe(scored.length);
      expect(log.results.total_samples).toBe(scored.length);
      expect(
        log.samples.map((s) => [s.id, s.epoch, s.scores['task_completion']?.value, s.scores['personalization']?.value, s.scores['user_naturalness']?.value]),
      ).toEqual(scored.map((r) => [r.scenario_id, r.replicate + 1, r.tc, r.p, r.nat_u]));
      expect(log.samples.every((s) => s.messages.length >= 2)).toBe(true);
      // The metrics: as Table 4 gives them (TC there in percent), per task kind.
      const t4 = table4.find((t) => t.setting === setting)!;
      const tc = log.results.scores.find((s) => s.name === 'task_completion')!.metrics;
      expect(tc['SD']!.value * 100).toBeCloseTo(t4.sd_tcr, 9);
      expect(tc['MD']!.value * 100).toBeCloseTo(t4.md_tcr, 9);
      expect(tc['mean']!.value).toBeCloseTo(mean(scored.map((r) => r.tc)), 12);
      expect(tc['ci95_lo']!.value).toBeLessThan(tc['mean']!.value);
      expect(log.results.scores.find((s) => s.name === 'personalization')!.metrics['SD']!.value).toBeCloseTo(t4.sd_p, 9);
      // Usage: every call the cell's dialogues and their judgments made, by role.
      const [usage] = await rows<{ assistant: number; user: number; judge: number }>(
        runs.personalens.db,
        `SELECT sum(input_tokens) FILTER (stage = 'dialogues' AND role = 'assistant')::INT AS assistant,
           sum(input_tokens) FILTER (stage = 'dialogues' AND role = 'user')::INT AS user,
           sum(input_tokens) FILTER (stage = 'judge')::INT AS judge
         FROM llm_calls WHERE work_key IN (SELECT dialogue_id FROM dialogues WHERE setting = '${setting}')
           OR work_key IN (SELECT judgment_id FROM judgments WHERE setting = '${setting}')`,
      );
      expect(log.stats.role_usage['assistant']!.input_tokens).toBe(usage!.assistant);
      expect(log.stats.role_usage['user']!.input_tokens).toBe(usage!.user);
      expect(log.stats.role_usage['judge']!.input_tokens).toBe(usage!.judge);
      expect(log.stats.model_usage['sim/default']!.input_tokens).toBe(usage!.assistant + usage!.user + usage!.judge);
    }
  });

  it('PERSONA-bench: a log per task and setting, its predictions and metrics those of the warehouse', async () => {
    const logs = logsOf(runs.persona.logs).map((l) => l.log);
    const status = await rows<{ task: string; setting: string; total: number; ok: number }>(
      runs.persona.db,
      'SELECT task, setting, total::INT AS total, ok::INT AS ok FROM persona_prediction_status',
    );
    const results = await rows<{ task: string; setting: string; metric: string; mode: string | null; value: number }>(
      runs.persona.db,
      'SELECT task, setting, metric, mode, value FROM persona_results',
    );
    expect(logs.map((l) => `${l.eval.task} ${l.eval.task_args['setting']}`).sort()).toEqual(status.map((s) => `persona-bench-${s.task} ${s.setting}`).sort());
    for (const log of logs) {
      const task = log.eval.task.replace('persona-bench-', '');
      const setting = String(log.eval.task_args['setting']);
      const s = status.find((x) => x.task === task && x.setting === setting)!;
      expect(log.samples.length).toBe(s.total);
      const mine = results.filter((r) => r.task === task && r.setting === setting);
      const metrics = log.results.scores.flatMap((sc) => Object.entries(sc.metrics).map(([k, m]) => [sc.name, k, m.value]));
      expect(metrics.length).toBe(mine.length);
      if (task === '3.1') {
        const acc = mine.find((r) => r.metric === 'accuracy')!.value;
        expect(log.results.scores[0]!.metrics['accuracy']!.value).toBe(acc);
        expect(mean(log.samples.filter((x) => x.scores['correct']).map((x) => x.scores['correct']!.value))).toBeCloseTo(acc, 12);
      }
      if (task === '3.2') {
        const mae = mine.find((r) => r.metric === 'mae')!.value;
        expect(mean(log.samples.filter((x) => x.scores['abs_error']).map((x) => x.scores['abs_error']!.value))).toBeCloseTo(mae, 12);
      }
      if (task === '3.3') {
        // Best-of-n: 10 replicates (epochs); the metric is the mean over samples of the best replicate.
        expect(log.eval.config['epochs']).toBe(10);
        expect(Math.max(...log.samples.map((x) => x.epoch))).toBe(10);
        for (const r of mine) {
          const scorer = r.metric === 'rougeL' ? 'rouge_l' : r.metric;
          const score = log.results.scores.find((x) => x.name === scorer)!;
          expect(score.reducer).toBe('max');
          expect(score.metrics['best-of-n']!.value).toBe(r.value);
          const reduced = log.reductions!.find((x) => x.scorer === scorer)!;
          expect(mean(reduced.samples.map((x) => x.value))).toBeCloseTo(r.value, 12);
          // Each reduced value is the best of the sample's replicates in the log.
          for (const x of reduced.samples) {
            const values = log.samples.filter((y) => y.id === x.sample_id && y.scores[scorer]).map((y) => y.scores[scorer]!.value);
            expect(Math.max(...values)).toBe(x.value);
          }
        }
      }
    }
  });

  it('PrefEval: a log per task, form, baseline and filler turns, its samples counted and scored as the result views', async () => {
    const logs = logsOf(runs.prefeval.logs).map((l) => l.log);
    const key = (r: { form: string; baseline: string; inter_turns: number }) => `${r.form} ${r.baseline} ${r.inter_turns}`;
    const argsKey = (l: Log) => key(l.eval.task_args as { form: string; baseline: string; inter_turns: number });
    for (const [task, view, scorer] of [
      ['prefeval-generation', 'prefeval_results', 'follows_preference'],
      ['prefeval-classification', 'prefeval_mcq_results', 'correct'],
    ] as const) {
      const expected = await rows<{ form: string; baseline: string; inter_turns: number; n: number; accuracy: number; accuracy_lo: number }>(
        runs.prefeval.db,
        `SELECT form, baseline, inter_turns, n::INT AS n, accuracy, accuracy_lo FROM ${view}`,
      );
      const mine = logs.filter((l) => l.eval.task === task);
      expect(mine.map(argsKey).sort()).toEqual(expected.map(key).sort());
      for (const log of mine) {
        const r = expected.find((e) => key(e) === argsKey(log))!;
        const values = log.samples.filter((s) => s.scores[scorer]).map((s) => s.scores[scorer]!.value);
        expect(values.length).toBe(r.n);
        expect(mean(values)).toBeCloseTo(r.accuracy, 12);
        const metrics = log.results.scores[0]!.metrics;
        expect(metrics['accuracy']!.value).toBe(r.accuracy);
        expect(metrics['ci95_lo']!.value).toBe(r.accuracy_lo);
        if (task === 'prefeval-classification') expect(log.samples.every((s) => s.choices?.length === 4 && /^[A-D]$/.test(s.target))).toBe(true);
      }
    }
  });

  it('leaves an unchanged log alone, refuses to write over a changed one without --force, and replaces it with', async () => {
    const folder = runs.persona.logs;
    const again = await runCliJson<{ logs: Array<{ status: string }> }>(['export', '--db', runs.persona.db, '-o', folder], { env });
    expect(again.code, again.stderr).toBe(0);
    expect(new Set(again.json.logs.map((l) => l.status))).toEqual(new Set(['unchanged']));

    const [first] = readdirSync(folder).sort();
    const file = join(folder, first!);
    writeFileSync(file, '{"edited": true}\n');
    const refused = await runCli(['export', '--db', runs.persona.db, '-o', folder], { env });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('1 of the 9 log files exist with other content; nothing was written');
    expect(refused.stderr).toContain(file);
    expect(refused.stderr).toContain('--force');
    expect(readFileSync(file, 'utf8')).toBe('{"edited": true}\n');

    const forced = await runCliJson<{ logs: Array<{ status: string }> }>(['export', '--db', runs.persona.db, '-o', folder, '--force'], { env });
    expect(forced.code, forced.stderr).toBe(0);
    expect(forced.json.logs.filter((l) => l.status === 'written')).toHaveLength(1);
    expect(validate(JSON.parse(readFileSync(file, 'utf8')))).toBe(true);
  });

  it('writes one cell to a .json file when --where picks one, and says which to pick when it does not', async () => {
    const one = join(dir, 'one.json');
    const many = await runCli(['export', '--db', runs.persona.db, '-o', one], { env });
    expect(many.code).toBe(2);
    expect(many.stderr).toContain('one file holds one cell, and 9 cells match');
    expect(many.stderr).toContain('--where');
    const unknown = await runCli(['export', '--db', runs.persona.db, '--where', 'colour=red'], { env });
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/no cell has a field "colour".*\n.*hint: fields: benchmark, task, model, setting/);

    const picked = await runCliJson(['export', '--db', runs.persona.db, '-o', one, '--where', 'task=persona-bench-3.1,setting=P-Conv'], { env });
    expect(picked.code, picked.stderr).toBe(0);
    const log = JSON.parse(readFileSync(one, 'utf8')) as Log;
    expect(validate(log)).toBe(true);
    expect([log.eval.task, log.eval.task_args['setting'], log.samples.length]).toEqual(['persona-bench-3.1', 'P-Conv', 6]);
  });

  it('PersonaLens without a judge: the dialogues unscored, in export/inspect of the workspace by default', async () => {
    const demo = parse(readFileSync(join(repoRoot, 'pipelines', 'demo.yaml'), 'utf8')) as Record<string, Record<string, unknown>>;
    demo['scenarios']!['users'] = '0';
    demo['dialogues']!['settings'] = ['base'];
    const { judge: _judge, ...unjudged } = demo;
    const file = join(dir, 'unjudged.yaml');
    const db = join(dir, 'unjudged.duckdb');
    writeFileSync(file, stringify({ ...unjudged, workspace: join(dir, 'unjudged'), warehouse: db }));
    const made = await runCli(['make', 'warehouse', '-p', file, '--no-progress'], { env });
    expect(made.code, made.stderr).toBe(0);
    const r = await runCliJson<{ dir: string; logs: Array<{ file: string; samples: number }> }>(['export', '--db', db], { env });
    expect(r.code, r.stderr).toBe(0);
    expect(r.json.dir).toBe(join(dir, 'unjudged', 'export', 'inspect'));
    const [{ n }] = await rows<{ n: number }>(db, 'SELECT count(*)::INT AS n FROM dialogues');
    expect(r.json.logs.map((l) => l.samples)).toEqual([n]);
    const log = JSON.parse(readFileSync(r.json.logs[0]!.file, 'utf8')) as Log & { eval: { model_roles: object } };
    expect(validate(log)).toBe(true);
    expect(log.results.scores).toEqual([]);
    expect(log.samples.every((s) => Object.keys(s.scores).length === 0)).toBe(true);
    expect(Object.keys(log.eval.model_roles)).toEqual(['user']);
  });

  it('says what to run when the warehouse holds no results', async () => {
    const empty = join(dir, 'empty.duckdb');
    await (await Database.open(empty)).close();
    const r = await runCli(['export', '--db', empty], { env });
    expect(r.code).toBe(4);
    expect(r.stderr).toContain(`${empty}: the warehouse holds no results to export`);
    expect(r.stderr).toContain('hint: build the warehouse of a run first: plens make warehouse -p PIPELINE');
  });

  it("names models as Inspect does: provider/model, the spec's parameters apart", () => {
    expect(inspectModelName('openai:gpt-4o')).toBe('openai/gpt-4o');
    expect(inspectModelName('bedrock:anthropic.claude-3-haiku?region=us-east-1')).toBe('bedrock/anthropic.claude-3-haiku');
  });
});
