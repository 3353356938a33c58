import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import { compactPartition, DIALOGUE_COLUMNS } from '../../src/benchmarks/personalens/compact.js';
import { JUDGMENT_COLUMNS } from '../../src/benchmarks/personalens/judge-stage.js';
import { runCli } from './cli.js';
import { sampleWorkspace } from './workspace.js';

/*
 * A hand-made experiment on the sample's scenarios (judge J, assistants A and B; B's name full of
 * HTML for the report's escaping; two LLM calls with a cost). The result-view and report tests
 * compute every expected value by hand from this table:
 *   d1 A base     user0:SD-Alarm-task-1  SD  tc 1  p 3  nat_a 4 coh_a 5  nat_u 5 coh_u 4   turn-level p: 2, 3
 *   d2 A base     user0:SD-Books-task-1  SD  tc 0  p 1  nat_a 3 coh_a 4  nat_u 4 coh_u (unparsed)
 *   d3 A base     user0:MD-task-1        MD  tc 1  p 2  nat_a 5 coh_a 5  nat_u (failed)   domains Flights, Hotels, Rental Cars
 *   d4 A base     user1:SD-Alarm-task-1  SD  the dialogue failed: no judgments
 *   d5 B base     user0:SD-Alarm-task-1  SD  tc 1  p 4
 *   d6 A base+all user0:SD-Alarm-task-1  SD  tc 1  p 4
 */
export const A = 'openai:a';
export const B = 'openai:b<i>&"\'';
export const J = 'openai:judge';

const msgs = (...tokens: number[]) =>
  tokens.map((t, i) => ({ role: i % 2 ? 'assistant' : 'user', content: `m${i}`, input_tokens: 1, output_tokens: t, latency_ms: 1, finish_reason: 'stop' }));
const dialogues = [
  { key: 'd1', setting: 'base', assistant_model: A, scenario_id: 'user0:SD-Alarm-task-1', kind: 'SD', rounds: 2, messages: msgs(10, 20, 10, 30) },
  { key: 'd2', setting: 'base', assistant_model: A, scenario_id: 'user0:SD-Books-task-1', kind: 'SD', rounds: 1, messages: msgs(10, 40) },
  { key: 'd3', setting: 'base', assistant_model: A, scenario_id: 'user0:MD-task-1', kind: 'MD', rounds: 1, messages: msgs(10, 50) },
  {
    key: 'd4',
    setting: 'base',
    assistant_model: A,
    scenario_id: 'user1:SD-Alarm-task-1',
    kind: 'SD',
    rounds: 0,
    messages: [],
    status: 'failed',
    error: { kind: 'http', message: 'HTTP 500 <boom>' },
  },
  { key: 'd5', setting: 'base', assistant_model: B, scenario_id: 'user0:SD-Alarm-task-1', kind: 'SD', rounds: 1, messages: msgs(10, 10) },
  { key: 'd6', setting: 'base+all', assistant_model: A, scenario_id: 'user0:SD-Alarm-task-1', kind: 'SD', rounds: 1, messages: msgs(10, 10) },
];
const domains: Record<string, string[]> = { d1: ['Alarm'], d2: ['Books'], d3: ['Flights', 'Hotels', 'Rental Cars'], d5: ['Alarm'], d6: ['Alarm'] };
type Judgment = [string, string, string, number | null, number | null, string?];
const judgments: Judgment[] = [
  ['d1', 'task_completion', 'dialogue', null, 1],
  ['d1', 'personalization', 'assistant', null, 3],
  ['d1', 'naturalness', 'assistant', null, 4],
  ['d1', 'coherence', 'assistant', null, 5],
  ['d1', 'naturalness', 'user', null, 5],
  ['d1', 'coherence', 'user', null, 4],
  ['d1', 'personalization', 'assistant', 1, 2],
  ['d1', 'personalization', 'assistant', 2, 3],
  ['d2', 'task_completion', 'dialogue', null, 0],
  ['d2', 'personalization', 'assistant', null, 1],
  ['d2', 'naturalness', 'assistant', null, 3],
  ['d2', 'coherence', 'assistant', null, 4],
  ['d2', 'naturalness', 'user', null, 4],
  ['d2', 'coherence', 'user', null, null, 'parse_error'],
  ['d3', 'task_completion', 'dialogue', null, 1],
  ['d3', 'personalization', 'assistant', null, 2],
  ['d3', 'naturalness', 'assistant', null, 5],
  ['d3', 'coherence', 'assistant', null, 5],
  ['d3', 'naturalness', 'user', null, null, 'failed'],
  ['d5', 'task_completion', 'dialogue', null, 1],
  ['d5', 'personalization', 'assistant', null, 4],
  ['d6', 'task_completion', 'dialogue', null, 1],
  ['d6', 'personalization', 'assistant', null, 4],
];
/** Two calls of the dialogue stage: one paid (0.0123 USD), one served from the cache. */
const calls = [
  {
    run_id: 'r1',
    key: 'd1',
    turn: 0,
    role: 'assistant',
    model: A,
    status: 'ok',
    cached: false,
    attempts: 2,
    latency_ms: 5,
    input_tokens: 100,
    output_tokens: 20,
    cost_usd: 0.0123,
    at: '2025-01-01T00:00:00Z',
  },
  {
    run_id: 'r1',
    key: 'd2',
    turn: 0,
    role: 'assistant',
    model: A,
    status: 'ok',
    cached: true,
    attempts: 0,
    latency_ms: 0,
    input_tokens: 90,
    output_tokens: 10,
    cost_usd: 0,
    at: '2025-01-01T00:00:01Z',
  },
];

/** A workspace with the sample imported; returns it and a warehouse built over the hand-made experiment. */
export async function handMadeWarehouse(): Promise<{ ws: string; db: string }> {
  const ws = await sampleWorkspace(['--kind', 'all']);
  for (const [cell, setting, model] of [
    ['a-base', 'base', A],
    ['b-base', 'base', B],
    ['a-all', 'base+all', A],
  ] as const) {
    const dir = join(ws, 'dialogues', cell);
    mkdirSync(dir, { recursive: true });
    const lines = dialogues
      .filter((d) => d.setting === setting && d.assistant_model === model)
      .map((d) =>
        JSON.stringify({
          try: 1,
          status: 'ok',
          user_model: 'openai:u',
          replicate: 0,
          end_reason: 'terminated',
          user_id: d.scenario_id.split(':')[0],
          task_id: d.scenario_id.split(':')[1],
          ...d,
        }),
      );
    writeFileSync(join(dir, 'records.jsonl'), lines.join('\n') + '\n');
    if (cell === 'a-base') writeFileSync(join(dir, 'events.jsonl'), calls.map((c) => JSON.stringify(c)).join('\n') + '\n');
    await compactPartition(dir, 'dialogues', DIALOGUE_COLUMNS);
  }
  const jdir = join(ws, 'judgments', 'j');
  mkdirSync(jdir, { recursive: true });
  const lines = judgments.map(([d, dimension, target, turn, score, status], i) => {
    const dl = dialogues.find((x) => x.key === d)!;
    return JSON.stringify({
      key: `j${i}`,
      try: 1,
      status: status ?? 'ok',
      dialogue_id: d,
      scenario_id: dl.scenario_id,
      kind: dl.kind,
      setting: dl.setting,
      assistant_model: dl.assistant_model,
      user_model: 'openai:u',
      replicate: 0,
      relevant_domains: domains[d],
      dimension,
      target,
      turn,
      judge_model: J,
      judge_prompt_version: 'jp-1',
      score,
      verdict: dimension === 'task_completion' && score !== null ? score === 1 : null,
    });
  });
  writeFileSync(join(jdir, 'records.jsonl'), lines.join('\n') + '\n');
  await compactPartition(jdir, 'judgments', JUDGMENT_COLUMNS);
  const db = join(ws, '..', 'w.duckdb');
  const built = await runCli(['warehouse', '-w', ws, '--db', db, '--lexical', 'none']);
  expect(built.code, built.stderr).toBe(0);
  return { ws, db };
}
