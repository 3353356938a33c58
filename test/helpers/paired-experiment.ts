import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import { compactPartition, DIALOGUE_COLUMNS } from '../../src/benchmarks/personalens/compact.js';
import { JUDGMENT_COLUMNS } from '../../src/benchmarks/personalens/judge-stage.js';
import { Database, sqlString } from '../../src/db/database.js';
import { runCli } from './cli.js';
import { sampleWorkspace } from './workspace.js';

/*
 * A hand-made paired experiment: assistant A in settings base and base+all on the same 14 scenarios of
 * four users (u1: 4 scenarios, u2: 3, u3: 5 of which the last 2 are MD, u4: 2), judged by J. The users are
 * the sample's user0..user3 (u1 = user0, ..., u4 = user3), so that their profiles are in the warehouse.
 * Personalization, base -> base+all (differences):
 *   u1: 2->3 2->3 2->3 2->3 (+1 +1 +1 +1)    u2: 3->3 3->3 3->2 (0 0 -1)
 *   u3: 1->3 2->3 1->3 | MD 2->4 2->3 (+2 +1 +2 | +2 +1)    u4: 3->2 3->3 (-1 0)
 * Task completion, base -> base+all: u1 0->1 0->1 1->1 1->1; u2 1->1 1->0 1->1; u3 0->1 0->1 0->1 | 1->1 1->1;
 *   u4 1->1 1->1: five 0->1, one 1->0.
 * SD scenarios are in domain Alarm (u1, u2) or Books (u3, u4); the MD ones in Flights and Hotels.
 * The second judge J2 scores the base dialogues again (judge swap): P one higher on u1's, the same elsewhere.
 * Dialogue texts trip the simulator audit's rules where `messages` says so.
 * J judges u2's base dialogues a second time (judgments/j-rep, the same configuration): P 3 3 3 again as
 * 3 2 3, TC 1 1 1 again as 1 1 1 (the result views keep the highest, so nothing else changes).
 * Annotators h1 and h2 label the base dialogues of u1 and u3's SD ones (sample s1), in ANNOTATED order:
 *   P   judge 2 2 2 2 1 2 1   h1 2 3 2 2 1 2 2   h2 3 3 2 2 1 1 2
 *   TC  judge 0 0 1 1 0 0 0   h1 0 1 1 1 0 0 0   h2 0 0 1 1 0 1 0
 */
export const ANNOTATED = ['u1-1-base', 'u1-2-base', 'u1-3-base', 'u1-4-base', 'u3-1-base', 'u3-2-base', 'u3-3-base'];
const LABELS: Record<string, { p: number[]; tc: number[] }> = {
  h1: { p: [2, 3, 2, 2, 1, 2, 2], tc: [0, 1, 1, 1, 0, 0, 0] },
  h2: { p: [3, 3, 2, 2, 1, 1, 2], tc: [0, 0, 1, 1, 0, 1, 0] },
};
export const PA = 'openai:a';
export const PJ = 'openai:judge';
export const PJ2 = 'openai:judge2';

interface Spec {
  user: string;
  idx: number;
  kind: 'SD' | 'MD';
  domains: string[];
  p: [number, number];
  tc: [number, number];
}
const specs: Spec[] = [];
const add = (user: string, kind: 'SD' | 'MD', domains: string[], rows: Array<[[number, number], [number, number]]>) =>
  rows.forEach(([p, tc]) => specs.push({ user, idx: specs.filter((s) => s.user === user).length + 1, kind, domains, p, tc }));
add(
  'u1',
  'SD',
  ['Alarm'],
  [
    [
      [2, 3],
      [0, 1],
    ],
    [
      [2, 3],
      [0, 1],
    ],
    [
      [2, 3],
      [1, 1],
    ],
    [
      [2, 3],
      [1, 1],
    ],
  ],
);
add(
  'u2',
  'SD',
  ['Alarm'],
  [
    [
      [3, 3],
      [1, 1],
    ],
    [
      [3, 3],
      [1, 0],
    ],
    [
      [3, 2],
      [1, 1],
    ],
  ],
);
add(
  'u3',
  'SD',
  ['Books'],
  [
    [
      [1, 3],
      [0, 1],
    ],
    [
      [2, 3],
      [0, 1],
    ],
    [
      [1, 3],
      [0, 1],
    ],
  ],
);
add(
  'u3',
  'MD',
  ['Flights', 'Hotels'],
  [
    [
      [2, 4],
      [1, 1],
    ],
    [
      [2, 3],
      [1, 1],
    ],
  ],
);
add(
  'u4',
  'SD',
  ['Books'],
  [
    [
      [3, 2],
      [1, 1],
    ],
    [
      [3, 3],
      [1, 1],
    ],
  ],
);

const ok = (role: string, content: string) => ({ role, content, input_tokens: 1, output_tokens: 5, latency_ms: 1, finish_reason: 'stop' });
/** Messages of a dialogue: ordinary, unless the audit case says otherwise. */
function messages(id: string): { messages: ReturnType<typeof ok>[]; end_reason: string } {
  const normal = [ok('user', 'Could you set an alarm for tomorrow morning?'), ok('assistant', 'Sure, what time should it ring?'), ok('user', 'Seven is fine.')];
  switch (id) {
    case 'u1-1-base': // the user agent talks like an assistant
      return {
        messages: [ok('user', 'Set an alarm please.'), ok('assistant', 'Done, it is set for 7.'), ok('user', 'How can I assist you today?')],
        end_reason: 'terminated',
      };
    case 'u1-2-base': // TERMINATE in the opening message (kept, as an imported dialogue would)
      return { messages: [ok('user', 'TERMINATE'), ok('assistant', 'Goodbye.')], end_reason: 'terminated' };
    case 'u2-1-base': // never terminated: the round limit ended it
      return {
        messages: [ok('user', 'Book me something.'), ok('assistant', 'Which day?'), ok('user', 'Friday.'), ok('assistant', 'Booked.')],
        end_reason: 'round_limit',
      };
    case 'u2-2-base': // an empty turn and a duplicated turn
      return {
        messages: [
          ok('user', 'Find a book by Le Guin.'),
          ok('assistant', ''),
          ok('user', 'Find a book by Le Guin.'),
          ok('assistant', 'Here is one.'),
          ok('user', 'Thanks.'),
        ],
        end_reason: 'terminated',
      };
    case 'u3-1-base': // not English
      return {
        messages: [
          ok('user', "Bonjour, pouvez-vous me trouver un livre de cuisine pour ce soir, s'il vous plaît?"),
          ok('assistant', 'Sure.'),
          ok('user', 'Merci beaucoup.'),
        ],
        end_reason: 'terminated',
      };
    case 'u3-2-base': // a preference value of user2's profile (Books, Preferred Genres) verbatim in the first message
      return {
        messages: [ok('user', 'I want a new book, I love Literary Fiction.'), ok('assistant', 'Try The Remains of the Day.'), ok('user', 'Great.')],
        end_reason: 'terminated',
      };
    case 'u3-3-base': // the user leaves right after the assistant's first question
      return {
        messages: [ok('user', 'Find me a novel.'), ok('assistant', 'Which genre do you like?'), ok('assistant', 'Alright, goodbye.')],
        end_reason: 'terminated',
      };
    default:
      return { messages: normal, end_reason: 'terminated' };
  }
}

/** The sample user behind a label u1..u4. */
export const userOf = (label: string): string => `user${Number(label.slice(1)) - 1}`;

export async function pairedWarehouse(): Promise<{ ws: string; db: string }> {
  const ws = await sampleWorkspace(['--kind', 'all']);
  for (const setting of ['base', 'base+all'] as const) {
    const dir = join(ws, 'dialogues', `a-${setting}`);
    mkdirSync(dir, { recursive: true });
    const lines = specs.map((s) => {
      const id = `${s.user}-${s.idx}-${setting}`;
      const m = messages(id);
      return JSON.stringify({
        key: id,
        try: 1,
        status: 'ok',
        scenario_id: `${userOf(s.user)}:${s.kind}-task-${s.idx}`,
        user_id: userOf(s.user),
        task_id: `${s.kind}-task-${s.idx}`,
        kind: s.kind,
        setting,
        replicate: 0,
        assistant_model: PA,
        user_model: 'openai:u',
        prompt_version: 'dp-1',
        rounds: m.messages.filter((x) => x.role === 'assistant').length,
        ...m,
      });
    });
    writeFileSync(join(dir, 'records.jsonl'), lines.join('\n') + '\n');
    await compactPartition(dir, 'dialogues', DIALOGUE_COLUMNS);
  }
  for (const [judge, dirName] of [
    [PJ, 'j'],
    [PJ2, 'j2'],
  ] as const) {
    const jdir = join(ws, 'judgments', dirName);
    mkdirSync(jdir, { recursive: true });
    const lines: string[] = [];
    for (const s of specs) {
      for (const [i, setting] of (['base', 'base+all'] as const).entries()) {
        if (judge === PJ2 && setting !== 'base') continue;
        const id = `${s.user}-${s.idx}-${setting}`;
        const p = judge === PJ2 && s.user === 'u1' ? s.p[i]! + 1 : s.p[i]!;
        const common = {
          try: 1,
          status: 'ok',
          dialogue_id: id,
          scenario_id: `${userOf(s.user)}:${s.kind}-task-${s.idx}`,
          user_id: userOf(s.user),
          kind: s.kind,
          setting,
          assistant_model: PA,
          user_model: 'openai:u',
          replicate: 0,
          relevant_domains: s.domains,
          turn: null,
          judge_model: judge,
          judge_prompt_version: 'jp-1',
        };
        lines.push(
          JSON.stringify({ ...common, key: `${dirName}-${id}-tc`, dimension: 'task_completion', target: 'dialogue', score: s.tc[i], verdict: s.tc[i] === 1 }),
        );
        lines.push(JSON.stringify({ ...common, key: `${dirName}-${id}-p`, dimension: 'personalization', target: 'assistant', score: p, verdict: null }));
      }
    }
    writeFileSync(join(jdir, 'records.jsonl'), lines.join('\n') + '\n');
    await compactPartition(jdir, 'judgments', JUDGMENT_COLUMNS);
  }
  const rdir = join(ws, 'judgments', 'j-rep');
  mkdirSync(rdir, { recursive: true });
  const repeats = specs
    .filter((s) => s.user === 'u2')
    .flatMap((s, i) => {
      const id = `${s.user}-${s.idx}-base`;
      const common = {
        try: 1,
        status: 'ok',
        dialogue_id: id,
        scenario_id: `${userOf(s.user)}:${s.kind}-task-${s.idx}`,
        user_id: userOf(s.user),
        kind: s.kind,
        setting: 'base',
        assistant_model: PA,
        user_model: 'openai:u',
        replicate: 0,
        relevant_domains: s.domains,
        turn: null,
        judge_model: PJ,
        judge_prompt_version: 'jp-1',
      };
      return [
        JSON.stringify({ ...common, key: `rep-${id}-tc`, dimension: 'task_completion', target: 'dialogue', score: 1, verdict: true }),
        JSON.stringify({ ...common, key: `rep-${id}-p`, dimension: 'personalization', target: 'assistant', score: [3, 2, 3][i], verdict: null }),
      ];
    });
  writeFileSync(join(rdir, 'records.jsonl'), repeats.join('\n') + '\n');
  await compactPartition(rdir, 'judgments', JUDGMENT_COLUMNS);
  mkdirSync(join(ws, 'annotation'), { recursive: true });
  const ldb = await Database.open(':memory:');
  try {
    const rows = Object.entries(LABELS).flatMap(([annotator, l]) =>
      ANNOTATED.flatMap((id, i) => [
        `('s1', '${annotator}', '${id}', 'personalization', 'assistant', ${l.p[i]})`,
        `('s1', '${annotator}', '${id}', 'task_completion', 'dialogue', ${l.tc[i]})`,
      ]),
    );
    await ldb.run(`COPY (SELECT *, 'sheet.csv' AS source_file, now() AS imported_at FROM (VALUES ${rows.join(', ')}) t(sample, annotator, dialogue_id, dimension, target, score))
      TO ${sqlString(join(ws, 'annotation', 'labels.parquet'))} (FORMAT parquet)`);
  } finally {
    ldb.close();
  }
  const db = join(ws, '..', 'paired.duckdb');
  const built = await runCli(['warehouse', '-w', ws, '--db', db, '--lexical', 'none']);
  expect(built.code, built.stderr).toBe(0);
  return { ws, db };
}
