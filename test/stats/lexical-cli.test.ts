import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Database, sqlString } from '../../src/db/database.js';
import { computeLexical, loadLexicalMacros } from '../../src/stats/lexical.js';
import { runStep, type StepContext } from '../../src/warehouse/steps.js';
import { repoRoot, runCli, runCliJson, tempDir } from '../helpers/cli.js';

/**
 * `plens stats lexical` and the warehouse's table10, checked against test/expected/lexical.json
 * (NLTK 3.8 and the LAPS reference procedure run in Python; see test/expected/lexical_reference.py).
 * The small corpus's laps values were computed with the defaults (100 iterations, 7,012 tokens, seed 42),
 * so the command's defaults must reproduce them.
 */
const expected = JSON.parse(readFileSync(join(repoRoot, 'test', 'expected', 'lexical.json'), 'utf8'));
const small = join(repoRoot, 'test', 'fixtures', 'lexical', 'small.jsonl');
const close = (actual: number, want: number) => expect(Math.abs(actual - want)).toBeLessThanOrEqual(1e-12 * Math.max(1, Math.abs(want)));

interface Row {
  speaker: string;
  protocol: string;
  n_utterances: number;
  n_tokens: number;
  dist_1: number;
  dist_2: number;
  ent_4: number;
  self_bleu: number;
}

function checkAgainstReference(rows: Row[]) {
  const want = expected.corpora.small;
  expect(rows.map((r) => `${r.speaker}/${r.protocol}`)).toEqual(['both/laps', 'both/full', 'user/laps', 'user/full', 'assistant/laps', 'assistant/full']);
  for (const r of rows) {
    if (r.protocol === 'laps') {
      const w = want.laps[r.speaker];
      expect(w.self_bleu.iterations).toBe(100);
      expect(w.self_bleu.token_budget).toBe(7012);
      close(r.dist_1, w.dist_1.value);
      close(r.dist_2, w.dist_2.value);
      close(r.ent_4, w.ent_4.value);
      close(r.self_bleu, w.self_bleu.value);
    } else {
      const w = want.full[r.speaker];
      expect(r.n_tokens).toBe(w.n_tokens);
      expect(r.n_utterances).toBe(w.n_utterances);
      close(r.dist_1, w.dist_1);
      close(r.dist_2, w.dist_2);
      close(r.ent_4, w.ent_4);
      close(r.self_bleu, w.self_bleu_nonempty.value);
    }
  }
}

describe('plens stats lexical', () => {
  let dir: string;
  beforeAll(() => {
    dir = tempDir('plens-lexical-');
  });

  it('reproduces the reference values from a JSONL file (both protocols, every speaker group)', async () => {
    const r = await runCliJson<{ rows: Row[]; utterances: number }>(['stats', 'lexical', '-i', small, '--protocol', 'laps', 'full']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.json.utterances).toBe(40);
    checkAgainstReference(r.json.rows);
  });

  it('reads Parquet with other field names and speaker values', async () => {
    const file = join(dir, 'renamed.parquet');
    const db = await Database.open(':memory:');
    try {
      await db.run(`COPY (SELECT dialogue_id AS conv, turn AS idx, CASE speaker WHEN 'user' THEN 'USER' ELSE 'SYSTEM' END AS role, text AS utterance
        FROM read_json(${sqlString(small)}, format = 'newline_delimited')) TO ${sqlString(file)} (FORMAT parquet)`);
    } finally {
      db.close();
    }
    const r = await runCliJson<{ rows: Row[] }>([
      'stats',
      'lexical',
      '-i',
      file,
      '--protocol',
      'laps',
      'full',
      '--text-field',
      'utterance',
      '--speaker-field',
      'role',
      '--dialogue-field',
      'conv',
      '--turn-field',
      'idx',
      '--user-speakers',
      'USER',
      '--assistant-speakers',
      'SYSTEM',
    ]);
    expect(r.code, r.stderr).toBe(0);
    checkAgainstReference(r.json.rows);
  });

  it('prints a table people can read, Markdown and CSV', async () => {
    const t = await runCli(['stats', 'lexical', '-i', small, '--speaker', 'both']);
    expect(t.code, t.stderr).toBe(0);
    expect(t.stdout).toContain('Self-BLEU');
    expect(t.stdout).toContain(expected.corpora.small.laps.both.self_bleu.value.toFixed(3));
    const md = await runCli(['stats', 'lexical', '-i', small, '--speaker', 'both', '--format', 'md']);
    expect(md.stdout).toMatch(/\| Speakers +\| Protocol/);
    const csv = await runCli(['stats', 'lexical', '-i', small, '--speaker', 'user', '--format', 'csv']);
    expect(csv.stdout.split('\n')[0]).toBe('speaker,protocol,n_utterances,n_tokens,iterations,dist_1,dist_2,ent_4,self_bleu');
  });

  it('bad input: errors name the file, line and field, with exit 3; bad usage exits 2', async () => {
    const noText = join(dir, 'no-text.jsonl');
    writeFileSync(noText, '{"speaker": "user", "text": "hi"}\n\n{"speaker": "user", "utterance": "oops"}\n');
    const a = await runCli(['stats', 'lexical', '-i', noText]);
    expect(a.code).toBe(3);
    expect(a.stderr).toContain(`${noText}:3`);
    expect(a.stderr).toContain('"text"');

    const badSpeaker = join(dir, 'bad-speaker.jsonl');
    writeFileSync(badSpeaker, '{"speaker": "user", "text": "hi"}\n{"speaker": "wizard", "text": "hello"}\n');
    const b = await runCli(['stats', 'lexical', '-i', badSpeaker]);
    expect(b.code).toBe(3);
    expect(b.stderr).toContain(`${badSpeaker}:2`);
    expect(b.stderr).toContain('"wizard"');
    expect(b.stderr).toContain('--assistant-speakers');

    const badJson = join(dir, 'bad-json.jsonl');
    writeFileSync(badJson, '{"speaker": "user", "text": "hi"}\n{"speaker": "user", "text": "hi"\n');
    const c = await runCli(['stats', 'lexical', '-i', badJson]);
    expect(c.code).toBe(3);
    expect(c.stderr).toContain(`${badJson}:2`);

    const missing = await runCli(['stats', 'lexical', '-i', join(dir, 'nope.jsonl')]);
    expect(missing.code).toBe(3);
    const unknownFormat = await runCli(['stats', 'lexical', '-i', join(dir, 'corpus.txt')]);
    expect(unknownFormat.code).toBe(2);
    const badBudget = await runCli(['stats', 'lexical', '-i', small, '--token-budget', '0']);
    expect(badBudget.code).toBe(2);
  });
});

describe('warehouse table10 (the lexical_diversity step)', () => {
  let db: Database;
  type Table10Row = Row & { assistant_model: string; kind: string; speakers: string };
  /** Table 10 of the step run with these settings. */
  const table10 = async (ctx: Partial<StepContext>): Promise<Table10Row[]> => {
    await runStep('lexical_diversity', { db, lexical: ['laps', 'full'], cacheDir: null, ...ctx }, '90_table10.sql');
    await db.run(readFileSync(join(repoRoot, 'warehouse', 'personalens', '90_table10.sql'), 'utf8'));
    return db.all<Table10Row>(`SELECT * FROM table10`);
  };
  const names = (rows: Table10Row[]) => rows.map((r) => `${r.assistant_model}/${r.kind}/${r.speakers}/${r.protocol}`);

  beforeAll(async () => {
    // The small corpus as one assistant's SD dialogues (dialogue ids and turns already in corpus order),
    // plus a failed dialogue that must not count and a second assistant's MD dialogue.
    db = await Database.open(':memory:');
    await loadLexicalMacros(db);
    await db.run(`
      CREATE TABLE dialogues AS
      SELECT DISTINCT dialogue_id, 0 AS replicate FROM read_json(${sqlString(small)}, format = 'newline_delimited')
      UNION ALL VALUES ('failed-1', 0), ('other-1', 0);
      CREATE TABLE turns AS
      SELECT dialogue_id, dialogue_id AS scenario_id, 'SD' AS kind, 'base' AS setting, 'a' AS assistant_model, 'ok' AS status, turn, speaker, text
      FROM read_json(${sqlString(small)}, format = 'newline_delimited')
      UNION ALL VALUES ('failed-1', 'failed-1', 'SD', 'base', 'a', 'failed', 0, 'user', 'never counted'),
                       ('other-1', 'other-1', 'MD', 'base', 'b', 'ok', 0, 'user', 'one two three four five'),
                       ('other-1', 'other-1', 'MD', 'base', 'b', 'ok', 1, 'assistant', 'one two three four six');`);
  });
  afterAll(() => db?.close());

  it('scores the dialogues per assistant, kind and speakers, in corpus order, like the reference', async () => {
    const rows = await table10({ lapsSpeakers: ['both', 'user', 'assistant'] });
    expect(names(rows)).toEqual([
      'a/SD/both/laps',
      'a/SD/both/full',
      'a/SD/user/laps',
      'a/SD/user/full',
      'a/SD/assistant/laps',
      'a/SD/assistant/full',
      'b/MD/both/laps',
      'b/MD/both/full',
      'b/MD/user/laps',
      'b/MD/user/full',
      'b/MD/assistant/laps',
      'b/MD/assistant/full',
    ]);
    checkAgainstReference(rows.filter((r) => r.assistant_model === 'a').map((r) => ({ ...r, speaker: r.speakers })));
    // b/MD both, full: "one two three four five" / "... six": Dist-1 = 6 distinct of 10 unigrams.
    const b = rows.find((r) => r.assistant_model === 'b' && r.speakers === 'both' && r.protocol === 'full')!;
    expect(b.dist_1).toBeCloseTo(0.6, 15);
    // A one-utterance group has no Self-BLEU (no references).
    expect(rows.find((r) => r.assistant_model === 'b' && r.speakers === 'user' && r.protocol === 'full')!.self_bleu).toBeNull();
  });

  it("by default measures laps for both speakers only (the paper's row) and full for every group; other groups on request", async () => {
    const every = await table10({ lapsSpeakers: ['both', 'user', 'assistant'] });
    const rows = await table10({});
    expect(names(rows)).toEqual([
      'a/SD/both/laps',
      'a/SD/both/full',
      'a/SD/user/full',
      'a/SD/assistant/full',
      'b/MD/both/laps',
      'b/MD/both/full',
      'b/MD/user/full',
      'b/MD/assistant/full',
    ]);
    // Each row as the every-group run gave it (this corpus fits the token budget: each laps group is measured whole).
    expect(rows).toEqual(every.filter((r) => names(rows).includes(names([r])[0]!)));
    const user = await table10({ lexical: ['laps'], lapsSpeakers: ['user'] });
    expect(names(user)).toEqual(['a/SD/user/laps', 'b/MD/user/laps']);
    // Without laps the laps groups change nothing.
    expect(await table10({ lexical: ['full'], lapsSpeakers: ['user'] })).toEqual(await table10({ lexical: ['full'] }));
  });

  it("a laps group's draws do not depend on the other groups measured, across subsets and batches", async () => {
    // A small budget and batch: every group is drawn subset by subset, and the subsets span several batches.
    await db.run(`
      CREATE OR REPLACE TEMP TABLE corpus AS
      SELECT s.g AS grp, row_number() OVER (PARTITION BY s.g ORDER BY t.dialogue_id, t.turn) AS utt, t.text
      FROM turns t, (VALUES ('both'), ('user'), ('assistant')) s(g)
      WHERE t.assistant_model = 'a' AND (s.g = 'both' OR s.g = t.speaker);
      CREATE OR REPLACE TEMP TABLE corpus_user AS SELECT * FROM corpus WHERE grp = 'user';`);
    const options = { laps: { iterations: 30, tokenBudget: 40 }, lapsBatchChars: 500 };
    const all = await computeLexical(db, 'corpus', 'lexical_all_tmp', { ...options, protocols: ['laps'] });
    const user = await computeLexical(db, 'corpus', 'lexical_user_tmp', { ...options, protocols: ['laps'], lapsGroups: ['user'] });
    expect(user.map((r) => r.grp)).toEqual(['user']);
    const want = all.find((r) => r.grp === 'user')!;
    expect(user[0]!.iterations).toBe(30);
    expect(user[0]!.n_tokens).toBe(want.n_tokens);
    expect(user[0]!.n_utterances).toBe(want.n_utterances);
    for (const k of ['dist_1', 'dist_2', 'ent_4', 'self_bleu'] as const) close(user[0]![k]!, want[k]!);
    // The draws matter: the whole-group values differ from the subsets' means.
    const whole = await computeLexical(db, 'corpus_user', 'lexical_whole_tmp', { protocols: ['laps'], laps: { iterations: 30, tokenBudget: 10_000 } });
    expect(whole[0]!.dist_1).not.toBeCloseTo(want.dist_1!, 6);
  });
});
