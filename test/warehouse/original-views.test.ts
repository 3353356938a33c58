import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { compactPartition, DIALOGUE_COLUMNS } from '../../src/benchmarks/personalens/compact.js';
import { JUDGMENT_COLUMNS } from '../../src/benchmarks/personalens/judge-stage.js';
import { originalScore } from '../../src/benchmarks/personalens/original-scoring.js';
import { runCli, runCliJson } from '../helpers/cli.js';
import { sampleWorkspace } from '../helpers/workspace.js';

/*
 * A second hand-made experiment (judge J, assistant A) for the views that report PersonaLens the
 * way the original reports it. Every expected value below is computed by hand from this table.
 * The replies are real text: original_score is what the gather script's reading gives for them.
 *
 *   e1 base     user0:SD-Alarm-task-1   SD  TC ok True  "VERDICT: True"              P 3   nat_u 5  coh_u 4
 *                                             prefix P: turn 1 -> 2, turn 2 -> 3; chain [1, 3]
 *   e2 base     user0:SD-Hotels-task-1  SD  TC ok True  "verdict: true" (lowercase)  P 2 ("**Personalization Score:** 2": the script misses it)
 *                                             nat_u 3; chain [3]
 *   e3 base     user1:SD-Alarm-task-1   SD  TC unparsed "VERDICT: True ... VERDICT: False" (the script: True)
 *                                             P 1; coh_u unparsed; prefix P: turn 1 -> 2; chain unparsed (turn 1 scored 9)
 *   e4 base     user1:SD-Hotels-task-1  SD  TC unparsed "The alarm was set, I think." (the script: not completed)
 *                                             P unparsed "Personalization Score: 7" (the script: 7)
 *   e5 base     user0:MD-task-1         MD  TC ok True  "**VERDICT:** True" (the script: not completed)
 *                                             P 4; nat_u 2 coh_u 2; chain [2, 4]; domains Flights, Hotels, Rental Cars
 *   e6 base+all user0:SD-Alarm-task-1   SD  TC ok False "VERDICT: False"             P 4
 *   e7 base+all user1:SD-Alarm-task-1   SD  TC failed (no reply)
 */
const A = 'openai:a';
const J = 'openai:judge';
const msgs = (n: number) =>
  Array.from({ length: n }, (_, i) => ({
    role: i % 2 ? 'assistant' : 'user',
    content: `m${i}`,
    input_tokens: 1,
    output_tokens: 10,
    latency_ms: 1,
    finish_reason: 'stop',
  }));
const dialogues = [
  { key: 'e1', setting: 'base', scenario_id: 'user0:SD-Alarm-task-1', kind: 'SD', domains: ['Alarm'], messages: msgs(4) },
  { key: 'e2', setting: 'base', scenario_id: 'user0:SD-Hotels-task-1', kind: 'SD', domains: ['Hotels'], messages: msgs(2) },
  { key: 'e3', setting: 'base', scenario_id: 'user1:SD-Alarm-task-1', kind: 'SD', domains: ['Alarm'], messages: msgs(2) },
  { key: 'e4', setting: 'base', scenario_id: 'user1:SD-Hotels-task-1', kind: 'SD', domains: ['Hotels'], messages: msgs(2) },
  { key: 'e5', setting: 'base', scenario_id: 'user0:MD-task-1', kind: 'MD', domains: ['Flights', 'Hotels', 'Rental Cars'], messages: msgs(4) },
  { key: 'e6', setting: 'base+all', scenario_id: 'user0:SD-Alarm-task-1', kind: 'SD', domains: ['Alarm'], messages: msgs(2) },
  { key: 'e7', setting: 'base+all', scenario_id: 'user1:SD-Alarm-task-1', kind: 'SD', domains: ['Alarm'], messages: msgs(2) },
];
interface J {
  d: string;
  dimension: string;
  target?: string;
  turn?: number;
  status?: 'ok' | 'parse_error' | 'failed';
  score?: number;
  turn_scores?: number[];
  reply?: string;
}
const judgments: J[] = [
  { d: 'e1', dimension: 'task_completion', score: 1, reply: 'VERDICT: True\nEXPLANATION: set as usual.' },
  { d: 'e2', dimension: 'task_completion', score: 1, reply: 'verdict: true\nexplanation: booked.' },
  { d: 'e3', dimension: 'task_completion', status: 'parse_error', reply: 'VERDICT: True\nOn reflection, VERDICT: False' },
  { d: 'e4', dimension: 'task_completion', status: 'parse_error', reply: 'The alarm was set, I think.' },
  { d: 'e5', dimension: 'task_completion', score: 1, reply: '**VERDICT:** True\nEXPLANATION: all three booked.' },
  { d: 'e6', dimension: 'task_completion', score: 0, reply: 'VERDICT: False\nEXPLANATION: never confirmed.' },
  { d: 'e7', dimension: 'task_completion', status: 'failed' },
  { d: 'e1', dimension: 'personalization', score: 3, reply: '<response>\nPersonalization Score: 3\n</response>' },
  { d: 'e2', dimension: 'personalization', score: 2, reply: '<response>\n**Personalization Score:** 2\n</response>' },
  { d: 'e3', dimension: 'personalization', score: 1, reply: 'Personalization Score: 1' },
  { d: 'e4', dimension: 'personalization', status: 'parse_error', reply: 'Personalization Score: 7' },
  { d: 'e5', dimension: 'personalization', score: 4, reply: 'Personalization Score: 4' },
  { d: 'e6', dimension: 'personalization', score: 4, reply: 'Personalization Score: 4' },
  { d: 'e1', dimension: 'naturalness', target: 'user', score: 5, reply: 'Naturalness Score: 5' },
  { d: 'e1', dimension: 'coherence', target: 'user', score: 4, reply: 'Coherence Score: 4' },
  { d: 'e2', dimension: 'naturalness', target: 'user', score: 3, reply: 'Naturalness Score: 3' },
  { d: 'e3', dimension: 'coherence', target: 'user', status: 'parse_error', reply: 'Coherent enough.' },
  { d: 'e5', dimension: 'naturalness', target: 'user', score: 2, reply: 'Naturalness Score: 2' },
  { d: 'e5', dimension: 'coherence', target: 'user', score: 2, reply: 'Coherence Score: 2' },
  { d: 'e1', dimension: 'personalization', turn: 1, score: 2 },
  { d: 'e1', dimension: 'personalization', turn: 2, score: 3 },
  { d: 'e3', dimension: 'personalization', turn: 1, score: 2 },
  { d: 'e1', dimension: 'personalization_chain', turn_scores: [1, 3] },
  { d: 'e2', dimension: 'personalization_chain', turn_scores: [3] },
  { d: 'e3', dimension: 'personalization_chain', status: 'parse_error', reply: 'Turn 1 Personalization Score: 9' },
  { d: 'e5', dimension: 'personalization_chain', turn_scores: [2, 4] },
];

async function originalExperiment(): Promise<string> {
  const ws = await sampleWorkspace(['--kind', 'all']);
  for (const setting of ['base', 'base+all']) {
    const dir = join(ws, 'dialogues', setting);
    mkdirSync(dir, { recursive: true });
    const lines = dialogues
      .filter((d) => d.setting === setting)
      .map(({ domains: _, ...d }) =>
        JSON.stringify({
          try: 1,
          status: 'ok',
          assistant_model: A,
          user_model: 'openai:u',
          replicate: 0,
          end_reason: 'terminated',
          rounds: d.messages.length / 2,
          user_id: d.scenario_id.split(':')[0],
          task_id: d.scenario_id.split(':')[1],
          ...d,
        }),
      );
    writeFileSync(join(dir, 'records.jsonl'), lines.join('\n') + '\n');
    await compactPartition(dir, 'dialogues', DIALOGUE_COLUMNS);
  }
  const jdir = join(ws, 'judgments', 'j');
  mkdirSync(jdir, { recursive: true });
  const lines = judgments.map((j, i) => {
    const d = dialogues.find((x) => x.key === j.d)!;
    const status = j.status ?? 'ok';
    const original =
      j.reply !== undefined && j.dimension !== 'personalization_chain' && j.turn === undefined
        ? originalScore(j.dimension as 'task_completion', j.reply)
        : null;
    return JSON.stringify({
      key: `k${i}`,
      try: 1,
      status,
      dialogue_id: j.d,
      scenario_id: d.scenario_id,
      kind: d.kind,
      setting: d.setting,
      assistant_model: A,
      user_model: 'openai:u',
      replicate: 0,
      relevant_domains: d.domains,
      dimension: j.dimension,
      target: j.target ?? (j.dimension === 'task_completion' ? 'dialogue' : 'assistant'),
      turn: j.turn ?? null,
      judge_model: J,
      judge_prompt_version: 'jp-1',
      score: j.score ?? null,
      turn_scores: j.turn_scores ?? null,
      verdict: j.dimension === 'task_completion' && j.score !== undefined ? j.score === 1 : null,
      original_score: original,
      raw: status === 'parse_error' ? j.reply : null,
    });
  });
  writeFileSync(join(jdir, 'records.jsonl'), lines.join('\n') + '\n');
  await compactPartition(jdir, 'judgments', JUDGMENT_COLUMNS);
  const db = join(ws, '..', 'w.duckdb');
  const built = await runCli(['warehouse', '-w', ws, '--db', db, '--lexical', 'none']);
  expect(built.code, built.stderr).toBe(0);
  return db;
}

describe("views that report PersonaLens as the original does, beside plens's own", () => {
  let db: string;
  const q = async (sql: string) => (await runCliJson<Array<Record<string, unknown>>>(['sql', sql, '--db', db])).json;

  beforeAll(async () => {
    db = await originalExperiment();
  });

  it("the gather script's reading of each reply is stored beside plens's parse", async () => {
    expect(await q("select dialogue_id, status, score, original_score from judgments where dimension = 'task_completion' order by dialogue_id")).toEqual([
      { dialogue_id: 'e1', status: 'ok', score: 1, original_score: 1 },
      { dialogue_id: 'e2', status: 'ok', score: 1, original_score: 1 },
      { dialogue_id: 'e3', status: 'parse_error', score: null, original_score: 1 },
      { dialogue_id: 'e4', status: 'parse_error', score: null, original_score: 0 },
      { dialogue_id: 'e5', status: 'ok', score: 1, original_score: 0 },
      { dialogue_id: 'e6', status: 'ok', score: 0, original_score: 0 },
      { dialogue_id: 'e7', status: 'failed', score: null, original_score: null },
    ]);
  });

  it('table3: TCR over parsed verdicts, the unparsed verdicts, and TCR as the gather script counts it', async () => {
    expect(await q('select kind, n_dialogues, n_tc, tcr, n_tc_unparsed, n_tc_original, tcr_original, n_unparsed from table3')).toEqual([
      // SD: parsed e1, e2 (both True) -> 100%; the script reads all four replies: e1, e2, e3 True, e4 not -> 75%.
      // Unparsed: TC e3, e4; P e4; coh_u e3 (the chain-of-turn judgment is turn-level, not counted here).
      { kind: 'SD', n_dialogues: 4, n_tc: 2, tcr: 100, n_tc_unparsed: 2, n_tc_original: 4, tcr_original: 75, n_unparsed: 4 },
      // MD: e5's "**VERDICT:** True" is True to plens and no match, so not completed, to the script.
      { kind: 'MD', n_dialogues: 1, n_tc: 1, tcr: 100, n_tc_unparsed: 0, n_tc_original: 1, tcr_original: 0, n_unparsed: 0 },
    ]);
  });

  it('table4: the same columns per setting and kind; a failed call counts in neither', async () => {
    expect(await q('select setting, sd_n, sd_tcr, sd_tc_unparsed, sd_tcr_original, md_n, md_tcr, md_tc_unparsed, md_tcr_original from table4')).toEqual([
      { setting: 'base', sd_n: 2, sd_tcr: 100, sd_tc_unparsed: 2, sd_tcr_original: 75, md_n: 1, md_tcr: 100, md_tc_unparsed: 0, md_tcr_original: 0 },
      // e6 False; e7's call failed: no reply, so the script has no file for it either.
      { setting: 'base+all', sd_n: 1, sd_tcr: 0, sd_tc_unparsed: 0, sd_tcr_original: 0, md_n: null, md_tcr: null, md_tc_unparsed: null, md_tcr_original: null },
    ]);
  });

  it('table12: SD and MD apart', async () => {
    expect(await q('select kind, n_nat, nat, n_coh, coh from table12')).toEqual([
      // SD: nat_u e1 5, e2 3; coh_u e1 4 (e3 unparsed). MD: e5 2 and 2. Pooled, nat would have been 10/3.
      { kind: 'SD', n_nat: 2, nat: 4, n_coh: 1, coh: 4 },
      { kind: 'MD', n_nat: 1, nat: 2, n_coh: 1, coh: 2 },
    ]);
  });

  it('figure4: a kind column; Hotels has an SD row and an MD row', async () => {
    expect(await q("select kind, domain, n_tc, tcr, n_p, p from figure4 where setting = 'base'")).toEqual([
      // Alarm: e1 (TC True, P 3), e3 (TC unparsed, P 1). Hotels SD: e2 (True, 2), e4 (both unparsed).
      { kind: 'SD', domain: 'Alarm', n_tc: 1, tcr: 100, n_p: 2, p: 2 },
      { kind: 'SD', domain: 'Hotels', n_tc: 1, tcr: 100, n_p: 1, p: 2 },
      { kind: 'MD', domain: 'Flights', n_tc: 1, tcr: 100, n_p: 1, p: 4 },
      { kind: 'MD', domain: 'Hotels', n_tc: 1, tcr: 100, n_p: 1, p: 4 },
      { kind: 'MD', domain: 'Rental Cars', n_tc: 1, tcr: 100, n_p: 1, p: 4 },
    ]);
  });

  it('figure5: per-prefix and chain-of-turn rows side by side, each saying its method', async () => {
    expect(await q('select method, domain, turn, n, p from figure5')).toEqual([
      // Per prefix: e1 turn 1 -> 2, turn 2 -> 3; e3 turn 1 -> 2.
      { method: 'per_prefix', domain: 'Alarm', turn: 1, n: 2, p: 2 },
      { method: 'per_prefix', domain: 'Alarm', turn: 2, n: 1, p: 3 },
      // Chain: e1 [1, 3] (Alarm); e2 [3] (Hotels); e5 [2, 4] (Flights, Hotels, Rental Cars); e3 unparsed, never scored.
      { method: 'chain_of_turn', domain: 'Alarm', turn: 1, n: 1, p: 1 },
      { method: 'chain_of_turn', domain: 'Alarm', turn: 2, n: 1, p: 3 },
      { method: 'chain_of_turn', domain: 'Flights', turn: 1, n: 1, p: 2 },
      { method: 'chain_of_turn', domain: 'Flights', turn: 2, n: 1, p: 4 },
      { method: 'chain_of_turn', domain: 'Hotels', turn: 1, n: 2, p: 2.5 },
      { method: 'chain_of_turn', domain: 'Hotels', turn: 2, n: 1, p: 4 },
      { method: 'chain_of_turn', domain: 'Rental Cars', turn: 1, n: 1, p: 2 },
      { method: 'chain_of_turn', domain: 'Rental Cars', turn: 2, n: 1, p: 4 },
    ]);
  });

  it('judgment_status: the chain-of-turn judgments are turn-level, with their unparsed reply', async () => {
    expect(await q("select kind, turn_level, n_ok, n_failed, n_unparsed from judgment_status where dimension = 'personalization_chain'")).toEqual([
      { kind: 'MD', turn_level: true, n_ok: 1, n_failed: 0, n_unparsed: 0 },
      { kind: 'SD', turn_level: true, n_ok: 2, n_failed: 0, n_unparsed: 1 },
    ]);
  });

  it("original_scoring: where plens's parse and the gather script's reading part", async () => {
    expect(
      await q(
        "select kind, dimension, target, n_replies, n_plens, plens_mean, n_original, original_mean, n_differ, n_plens_only, n_original_only from original_scoring where setting = 'base' and dimension in ('task_completion', 'personalization')",
      ),
    ).toEqual([
      // TC SD: plens 1, 1 (e3, e4 unparsed); the script 1, 1, 1, 0.
      {
        kind: 'SD',
        dimension: 'task_completion',
        target: 'dialogue',
        n_replies: 4,
        n_plens: 2,
        plens_mean: 1,
        n_original: 4,
        original_mean: 0.75,
        n_differ: 0,
        n_plens_only: 0,
        n_original_only: 2,
      },
      // P SD: plens e1 3, e2 2, e3 1; the script e1 3, e3 1, e4 7 (no range check), and misses e2's bold label.
      {
        kind: 'SD',
        dimension: 'personalization',
        target: 'assistant',
        n_replies: 4,
        n_plens: 3,
        plens_mean: 2,
        n_original: 3,
        original_mean: 11 / 3,
        n_differ: 0,
        n_plens_only: 1,
        n_original_only: 1,
      },
      {
        kind: 'MD',
        dimension: 'task_completion',
        target: 'dialogue',
        n_replies: 1,
        n_plens: 1,
        plens_mean: 1,
        n_original: 1,
        original_mean: 0,
        n_differ: 1,
        n_plens_only: 0,
        n_original_only: 0,
      },
      {
        kind: 'MD',
        dimension: 'personalization',
        target: 'assistant',
        n_replies: 1,
        n_plens: 1,
        plens_mean: 4,
        n_original: 1,
        original_mean: 4,
        n_differ: 0,
        n_plens_only: 0,
        n_original_only: 0,
      },
    ]);
  });

  it('plens tables renders the new columns', async () => {
    const r = await runCli(['tables', '--db', db, '--only', 'table3,figure5', '--format', 'md']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('TCR (orig., %)');
    expect(r.stdout).toContain('| chain_of_turn');
  });
});
