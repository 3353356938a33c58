// `plens persona import` on the hand-built fixture: Parquet read back with DuckDB, both
// input formats, and the errors a bad file gets.
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { main } from '../../../src/cli/main.js';
import { PlensError } from '../../../src/core/errors.js';
import { Database, sqlString } from '../../../src/db/database.js';
import { runPersonaImport } from '../../../src/benchmarks/personabench/import.js';

const fixtures = new URL('../../fixtures/personabench/', import.meta.url).pathname;
const tmp = (): string => mkdtempSync(join(tmpdir(), 'plens-persona-'));

async function query<T>(sql: string): Promise<T[]> {
  const db = await Database.open(':memory:');
  try {
    return await db.all<T>(sql);
  } finally {
    db.close();
  }
}

describe('persona import', () => {
  it('reads the shapes the original reads without complaint, skipping what it skips and counting it', async () => {
    // odd-shapes.json: a comment entry that is a string, replies that are a string, comments: null,
    // float, bool and string scores, selftext for content, created_utc with a null timestamp.
    const out = join(tmp(), 'persona');
    const summary = await runPersonaImport({ from: join(fixtures, 'odd-shapes.json'), out });
    expect([summary.posts, summary.comments]).toEqual([3, 10]);
    expect(summary.excluded['comment-list entries that are not objects (skipped, as the original skips them)']).toBe(1);
    expect(summary.excluded['comments or replies that are not a list (read as none, as the original reads them)']).toBe(1);
    // The comment after the skipped entry keeps the id the makers give it: the entry uses none.
    const ids = await query<{ comment_id: string }>(
      `SELECT comment_id FROM ${sqlString(join(out, 'comments.parquet'))} WHERE post_id = 'u1p1' ORDER BY preorder`,
    );
    expect(ids.map((r) => r.comment_id)).toEqual(['u1p1-c1', 'u1p1-c1-c2', 'u1p1-c1-c2-c3', 'u1p1-c1-c2-c3-c4', 'u1p1-c5', 'u1p1-c6', 'u1p1-c6-c7']);
  });

  it('writes users, posts and comments with the original ids, depth, parents, times and flags', async () => {
    const out = join(tmp(), 'persona');
    const summary = await runPersonaImport({ from: join(fixtures, 'grouped.json'), out });
    expect([summary.format, summary.users, summary.posts, summary.comments]).toEqual(['grouped', 2, 5, 31]);
    const users = await query<{ user: string; posts: number }>(`SELECT user, posts FROM ${sqlString(join(out, 'users.parquet'))} ORDER BY user_number`);
    expect(users).toEqual([
      { user: 'alice', posts: 3 },
      { user: 'bob', posts: 2 },
    ]);
    const comments = await query<Record<string, unknown>>(
      `SELECT comment_id, parent_id, top_level_id, depth, preorder, is_post_author, score, timestamp, deleted, deleted_exact FROM ${sqlString(join(out, 'comments.parquet'))} WHERE post_id = 'u1p2' ORDER BY preorder`,
    );
    expect(comments.map((c) => c['comment_id'])).toEqual(['u1p2-c1', 'u1p2-c1-c2', 'u1p2-c3', 'u1p2-c3-c4', 'u1p2-c5', 'u1p2-c5-c6', 'u1p2-c7']);
    expect(comments[5]).toEqual({
      comment_id: 'u1p2-c5-c6',
      parent_id: 'u1p2-c5',
      top_level_id: 'u1p2-c5',
      depth: 2,
      preorder: 5,
      is_post_author: true,
      score: 5,
      timestamp: '2023-04-01T09:50:00Z',
      deleted: false,
      deleted_exact: false,
    });
    expect(comments[4]!['deleted']).toBe(true);
    expect(comments[4]!['deleted_exact']).toBe(true);
    const posts = await query<{ post_id: string; timestamp: string; subreddit: string }>(
      `SELECT post_id, timestamp, subreddit FROM ${sqlString(join(out, 'posts.parquet'))} ORDER BY global_index`,
    );
    expect(posts.map((p) => p.post_id)).toEqual(['u1p1', 'u1p2', 'u1p3', 'u2p1', 'u2p2']);
    expect(posts[4]!.timestamp).toBe('2023-06-01T11:00:00.250000Z');
    expect(summary.excluded['comment body deleted/removed/empty (3.1/3.2 test)']).toBe(1);
  });

  it('the raw flat list groups into the same tables', async () => {
    const a = join(tmp(), 'a');
    const b = join(tmp(), 'b');
    await runPersonaImport({ from: join(fixtures, 'grouped.json'), out: a });
    const summary = await runPersonaImport({ from: join(fixtures, 'raw.json'), out: b });
    expect(summary.format).toBe('raw');
    const rows = async (dir: string) => query(`SELECT * EXCLUDE (time_us) FROM ${sqlString(join(dir, 'comments.parquet'))} ORDER BY post_id, preorder`);
    expect(await rows(b)).toEqual(await rows(a));
  });

  it('a bad record names the file, its JSON pointer and what was expected; nothing is written', async () => {
    const dir = tmp();
    const raw = JSON.parse(readFileSync(join(fixtures, 'raw.json'), 'utf8'));
    // A number where a timestamp goes: the original's parse_timestamp raises on it (replies that
    // are not a list, by contrast, are read as none).
    raw[2].comments[1].replies[0].timestamp = 1672531200;
    const file = join(dir, 'bad.json');
    writeFileSync(file, JSON.stringify(raw));
    const out = join(dir, 'persona');
    const error = await runPersonaImport({ from: file, out }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PlensError);
    expect((error as PlensError).code).toBe('E_INPUT_SCHEMA');
    expect((error as PlensError).location).toEqual({ file, pointer: '/2/comments/1/replies/0/timestamp' });
    expect((error as PlensError).message).toContain('expected string,null');
    expect(existsSync(out)).toBe(false);
  });

  it('a score the original reads but cannot compare (the string "15", null, a list) is kept, not numeric, and counted', async () => {
    const dir = tmp();
    const raw = JSON.parse(readFileSync(join(fixtures, 'raw.json'), 'utf8'));
    raw[2].comments[1].replies[0].score = '15';
    raw[1].score = '15';
    raw[3].score = null;
    const file = join(dir, 'scores.json');
    writeFileSync(file, JSON.stringify(raw));
    const out = join(dir, 'persona');
    const summary = await runPersonaImport({ from: file, out });
    expect(summary.excluded['post score not numeric (a string, null, ...: shown as the original shows it)']).toBe(2);
    expect(summary.excluded['comment score not numeric (not a 3.1/3.2 candidate)']).toBeGreaterThanOrEqual(1);
    const [row] = await query<{ score: number | null; score_numeric: boolean }>(
      `SELECT score, score_numeric FROM ${sqlString(join(out, 'comments.parquet'))} WHERE body = ${sqlString(raw[2].comments[1].replies[0].body)}`,
    );
    expect(row).toEqual({ score: null, score_numeric: false });
  });

  it('grouped file: a user whose value is not a list; truncated JSON; a scalar file', async () => {
    const dir = tmp();
    const notList = join(dir, 'g.json');
    writeFileSync(notList, JSON.stringify({ alice: [], 'b/ob': { title: 'x' } }));
    const e1 = (await runPersonaImport({ from: notList, out: join(dir, 'o1') }).catch((e: unknown) => e)) as PlensError;
    expect([e1.code, e1.location.pointer]).toEqual(['E_INPUT_SCHEMA', '/b~1ob']);
    const truncated = join(dir, 't.json');
    writeFileSync(truncated, readFileSync(join(fixtures, 'raw.json'), 'utf8').slice(0, 500));
    const e2 = (await runPersonaImport({ from: truncated, out: join(dir, 'o2') }).catch((e: unknown) => e)) as PlensError;
    expect(e2.code).toBe('E_INPUT_JSON');
    const scalar = join(dir, 's.json');
    writeFileSync(scalar, '42');
    const e3 = (await runPersonaImport({ from: scalar, out: join(dir, 'o3') }).catch((e: unknown) => e)) as PlensError;
    expect(e3.code).toBe('E_INPUT_LAYOUT');
  });

  it('CLI: persona import --json and persona select write their outputs; a bad file exits 3', async () => {
    const ws = tmp();
    expect(await main(['persona', 'import', '--from', join(fixtures, 'raw.json'), '-w', ws, '--quiet'])).toBe(0);
    expect(existsSync(join(ws, 'persona', 'comments.parquet'))).toBe(true);
    expect(await main(['persona', 'select', '--from', join(fixtures, 'grouped.json'), '-w', ws, '--fidelity', 'fixed', '--seed', '14', '--quiet'])).toBe(0);
    const lines = readFileSync(join(ws, 'persona', 'selection-fixed', 'samples.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines.filter((l) => l.task === '3.3' && l.setting === 'NP-Conv').map((l) => l.contextPostIndex)).toEqual([3, 3, 3, 0, 0]);
    const bad = join(ws, 'bad.json');
    writeFileSync(bad, '{"alice": 3}');
    expect(await main(['persona', 'import', '--from', bad, '-w', ws, '--quiet'])).toBe(3);
  });

  it('a re-import replaces its own tables only: the selection and predictions made in the same folder stay', async () => {
    const ws = tmp();
    expect(await main(['persona', 'import', '--from', join(fixtures, 'raw.json'), '-w', ws, '--quiet'])).toBe(0);
    expect(await main(['persona', 'select', '--from', join(fixtures, 'grouped.json'), '-w', ws, '--quiet'])).toBe(0);
    const samples = join(ws, 'persona', 'selection-original', 'samples.jsonl');
    const before = readFileSync(samples, 'utf8');
    // Paid work a user keeps beside the import (the predict stage's folder).
    mkdirSync(join(ws, 'persona', 'predictions'), { recursive: true });
    writeFileSync(join(ws, 'persona', 'predictions', 'records.jsonl'), '{"paid": true}\n');
    expect(await main(['persona', 'import', '--from', join(fixtures, 'grouped.json'), '-w', ws, '--quiet'])).toBe(0);
    expect(readFileSync(samples, 'utf8')).toBe(before);
    expect(readFileSync(join(ws, 'persona', 'predictions', 'records.jsonl'), 'utf8')).toBe('{"paid": true}\n');
    const summary = JSON.parse(readFileSync(join(ws, 'persona', 'summary.json'), 'utf8')) as { format: string };
    expect(summary.format).toBe('grouped');
    // No staging folder is left behind.
    expect(readdirSync(ws).filter((n) => n.includes('.tmp-'))).toEqual([]);
  });

  it('persona select --out into a folder holding other files refuses and leaves them (exit 2)', async () => {
    const out = tmp();
    writeFileSync(join(out, 'notes.txt'), 'mine');
    expect(await main(['persona', 'select', '--from', join(fixtures, 'grouped.json'), '--out', out, '--quiet'])).toBe(2);
    expect(readdirSync(out)).toEqual(['notes.txt']);
    // A folder that holds only an earlier selection is replaced.
    const again = join(tmp(), 'sel');
    expect(await main(['persona', 'select', '--from', join(fixtures, 'grouped.json'), '--out', again, '--quiet'])).toBe(0);
    expect(await main(['persona', 'select', '--from', join(fixtures, 'grouped.json'), '--out', again, '--quiet'])).toBe(0);
  });
});
