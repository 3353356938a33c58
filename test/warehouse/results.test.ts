import { writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { compactPartition, DIALOGUE_COLUMNS } from '../../src/personalens/compact.js';
import { JUDGMENT_COLUMNS } from '../../src/personalens/judge-stage.js';
import { runCli, runCliJson } from '../helpers/cli.js';
import { sampleWorkspace } from '../helpers/workspace.js';

/*
 * A hand-made experiment on the sample's scenarios (judge J, assistants A and B):
 *   d1 A base     user0:SD-Alarm-task-1  SD  rounds 2  tc 1  p 3  nat_a 4 coh_a 5  nat_u 5 coh_u 4   turn-level p: 2, 3
 *   d2 A base     user0:SD-Books-task-1  SD  rounds 1  tc 0  p 1  nat_a 3 coh_a 4  nat_u 4 coh_u (unparsed)
 *   d3 A base     user0:MD-task-1        MD  rounds 1  tc 1  p 2  nat_a 5 coh_a 5  nat_u (failed)
 *   d4 A base     user1:SD-Alarm-task-1  SD  the dialogue itself failed: no judgments, not in Table 13
 *   d5 B base     user0:SD-Alarm-task-1  SD  rounds 1  tc 1  p 4
 *   d6 A base+all user0:SD-Alarm-task-1  SD  rounds 1  tc 1  p 4
 * Every expected value below is computed by hand from this table.
 */
const A = 'openai:a';
const B = 'openai:b';
const J = 'openai:judge';
const msgs = (...tokens: number[]) => tokens.map((t, i) => ({ role: i % 2 ? 'assistant' : 'user', content: `m${i}`, input_tokens: 1, output_tokens: t, latency_ms: 1, finish_reason: 'stop' }));
const dialogues = [
  { key: 'd1', setting: 'base', assistant_model: A, scenario_id: 'user0:SD-Alarm-task-1', kind: 'SD', rounds: 2, messages: msgs(10, 20, 10, 30) },
  { key: 'd2', setting: 'base', assistant_model: A, scenario_id: 'user0:SD-Books-task-1', kind: 'SD', rounds: 1, messages: msgs(10, 40) },
  { key: 'd3', setting: 'base', assistant_model: A, scenario_id: 'user0:MD-task-1', kind: 'MD', rounds: 1, messages: msgs(10, 50) },
  { key: 'd4', setting: 'base', assistant_model: A, scenario_id: 'user1:SD-Alarm-task-1', kind: 'SD', rounds: 0, messages: [], status: 'failed' },
  { key: 'd5', setting: 'base', assistant_model: B, scenario_id: 'user0:SD-Alarm-task-1', kind: 'SD', rounds: 1, messages: msgs(10, 10) },
  { key: 'd6', setting: 'base+all', assistant_model: A, scenario_id: 'user0:SD-Alarm-task-1', kind: 'SD', rounds: 1, messages: msgs(10, 10) },
];
const domains: Record<string, string[]> = { d1: ['Alarm'], d2: ['Books'], d3: ['Flights', 'Hotels', 'Rental Cars'], d5: ['Alarm'], d6: ['Alarm'] };
type J = [string, string, string, number | null, number | null, string?];
const judgments: J[] = [
  ['d1', 'task_completion', 'dialogue', null, 1], ['d1', 'personalization', 'assistant', null, 3], ['d1', 'naturalness', 'assistant', null, 4],
  ['d1', 'coherence', 'assistant', null, 5], ['d1', 'naturalness', 'user', null, 5], ['d1', 'coherence', 'user', null, 4],
  ['d1', 'personalization', 'assistant', 1, 2], ['d1', 'personalization', 'assistant', 2, 3],
  ['d2', 'task_completion', 'dialogue', null, 0], ['d2', 'personalization', 'assistant', null, 1], ['d2', 'naturalness', 'assistant', null, 3],
  ['d2', 'coherence', 'assistant', null, 4], ['d2', 'naturalness', 'user', null, 4], ['d2', 'coherence', 'user', null, null, 'parse_error'],
  ['d3', 'task_completion', 'dialogue', null, 1], ['d3', 'personalization', 'assistant', null, 2], ['d3', 'naturalness', 'assistant', null, 5],
  ['d3', 'coherence', 'assistant', null, 5], ['d3', 'naturalness', 'user', null, null, 'failed'],
  ['d5', 'task_completion', 'dialogue', null, 1], ['d5', 'personalization', 'assistant', null, 4],
  ['d6', 'task_completion', 'dialogue', null, 1], ['d6', 'personalization', 'assistant', null, 4],
];

describe('result views on a hand-made experiment', () => {
  let db: string;
  const q = async (sql: string) => (await runCliJson<Array<Record<string, unknown>>>(['sql', sql, '--db', db])).json;

  beforeAll(async () => {
    const ws = await sampleWorkspace(['--kind', 'all']);
    for (const [cell, setting, model] of [['a-base', 'base', A], ['b-base', 'base', B], ['a-all', 'base+all', A]] as const) {
      const dir = join(ws, 'dialogues', cell);
      mkdirSync(dir, { recursive: true });
      const lines = dialogues
        .filter((d) => d.setting === setting && d.assistant_model === model)
        .map((d) => JSON.stringify({ try: 1, status: 'ok', user_model: 'openai:u', replicate: 0, end_reason: 'terminated', user_id: d.scenario_id.split(':')[0], task_id: d.scenario_id.split(':')[1], ...d }));
      writeFileSync(join(dir, 'records.jsonl'), lines.join('\n') + '\n');
      await compactPartition(dir, 'dialogues', DIALOGUE_COLUMNS);
    }
    const jdir = join(ws, 'judgments', 'j');
    mkdirSync(jdir, { recursive: true });
    const lines = judgments.map(([d, dimension, target, turn, score, status], i) => {
      const dl = dialogues.find((x) => x.key === d)!;
      return JSON.stringify({
        key: `j${i}`, try: 1, status: status ?? 'ok', dialogue_id: d, scenario_id: dl.scenario_id, kind: dl.kind, setting: dl.setting,
        assistant_model: dl.assistant_model, user_model: 'openai:u', replicate: 0, relevant_domains: domains[d], dimension, target, turn,
        judge_model: J, score, verdict: dimension === 'task_completion' && score !== null ? score === 1 : null,
      });
    });
    writeFileSync(join(jdir, 'records.jsonl'), lines.join('\n') + '\n');
    await compactPartition(jdir, 'judgments', JUDGMENT_COLUMNS);
    db = join(ws, '..', 'w.duckdb');
    const built = await runCli(['warehouse', '-w', ws, '--db', db]);
    expect(built.code, built.stderr).toBe(0);
  });

  it('table3: base setting per assistant and kind, failures and unparsed counted but not scored', async () => {
    const rows = await q('select assistant_model, kind, n_dialogues, n_tc, tcr, p, nat, coh, n_failed, n_unparsed from table3');
    expect(rows).toEqual([
      { assistant_model: A, kind: 'SD', n_dialogues: 2, n_tc: 2, tcr: 50, p: 2, nat: 3.5, coh: 4.5, n_failed: 0, n_unparsed: 1 },
      { assistant_model: A, kind: 'MD', n_dialogues: 1, n_tc: 1, tcr: 100, p: 2, nat: 5, coh: 5, n_failed: 1, n_unparsed: 0 },
      { assistant_model: B, kind: 'SD', n_dialogues: 1, n_tc: 1, tcr: 100, p: 4, nat: null, coh: null, n_failed: 0, n_unparsed: 0 },
    ]);
    const [a] = await q(`select tcr_lo, tcr_hi, p_lo, p_hi from table3 where assistant_model = '${A}' and kind = 'SD'`);
    // The interval contains the mean.
    expect(a!['p_lo'] as number).toBeLessThanOrEqual(2);
    expect(a!['p_hi'] as number).toBeGreaterThanOrEqual(2);
  });

  it('table4: the settings of one assistant side by side', async () => {
    const rows = await q(`select setting, sd_n, sd_tcr, sd_p, md_n, md_tcr, md_p from table4 where assistant_model = '${A}'`);
    expect(rows).toEqual([
      { setting: 'base', sd_n: 2, sd_tcr: 50, sd_p: 2, md_n: 1, md_tcr: 100, md_p: 2 },
      { setting: 'base+all', sd_n: 1, sd_tcr: 100, sd_p: 4, md_n: null, md_tcr: null, md_p: null },
    ]);
  });

  it('table12: the user agent\'s scores, skipping failed and unparsed judgments', async () => {
    expect(await q(`select n_nat, nat, n_coh, coh from table12 where assistant_model = '${A}'`)).toEqual([{ n_nat: 2, nat: 4.5, n_coh: 1, coh: 4 }]);
  });

  it('figure4: an MD dialogue counts towards each of its domains', async () => {
    const rows = await q(`select domain, n_tc, tcr, p from figure4 where assistant_model = '${A}' and setting = 'base'`);
    expect(rows).toEqual([
      { domain: 'Alarm', n_tc: 1, tcr: 100, p: 3 },
      { domain: 'Books', n_tc: 1, tcr: 0, p: 1 },
      { domain: 'Flights', n_tc: 1, tcr: 100, p: 2 },
      { domain: 'Hotels', n_tc: 1, tcr: 100, p: 2 },
      { domain: 'Rental Cars', n_tc: 1, tcr: 100, p: 2 },
    ]);
  });

  it('figure5: mean personalization per assistant turn', async () => {
    expect(await q('select domain, turn, n, p from figure5')).toEqual([
      { domain: 'Alarm', turn: 1, n: 1, p: 2 },
      { domain: 'Alarm', turn: 2, n: 1, p: 3 },
    ]);
  });

  it('table13: finished dialogues only; rounds per dialogue and output tokens per utterance', async () => {
    expect(await q(`select kind, n_dialogues, turns_per_dialogue, tokens_per_turn, assistant_tokens_per_turn from table13 where assistant_model = '${A}' and setting = 'base'`)).toEqual([
      // assistant utterances: d1 20 and 30, d2 40 -> 30; MD: d3 50.
      { kind: 'SD', n_dialogues: 2, turns_per_dialogue: 1.5, tokens_per_turn: 20, assistant_tokens_per_turn: 30 },
      { kind: 'MD', n_dialogues: 1, turns_per_dialogue: 1, tokens_per_turn: 30, assistant_tokens_per_turn: 50 },
    ]);
  });

  it('paired_differences: b - a on the scenarios both cells judged', async () => {
    expect(await q("select cell_a, cell_b, n_p, d_tcr, d_p from paired_differences where kind = 'SD'")).toEqual([
      { cell_a: `${A} | base`, cell_b: `${A} | base+all`, n_p: 1, d_tcr: 0, d_p: 1 },
      { cell_a: `${A} | base`, cell_b: `${B} | base`, n_p: 1, d_tcr: 0, d_p: 1 },
      { cell_a: `${A} | base+all`, cell_b: `${B} | base`, n_p: 1, d_tcr: 0, d_p: 0 },
    ]);
  });
});
