// The streamed reader (read.ts): members split at the top level across chunk boundaries give
// exactly what JSON.parse of the whole file gives; bad JSON is named by file and pointer.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { PlensError } from '../../../src/core/errors.js';
import { readPersonaUsers } from '../../../src/benchmarks/personabench/import.js';

const dir = mkdtempSync(join(tmpdir(), 'plens-persona-read-'));

describe('streamed reader', () => {
  it('a multi-megabyte file with escapes, brackets in strings and multi-byte text reads as JSON.parse reads it', async () => {
    // ~3 MiB: members and UTF-8 characters cross the 1 MiB read chunks.
    const posts = Array.from({ length: 3000 }, (_, i) => ({
      author: `u${i % 7}`,
      title: `t${i} "quoted" [x] {y}, \\ café ☕ 𝄞`,
      content: 'é'.repeat(300 + (i % 13)),
      comments: [{ author: 'c', body: `b ] } , " ${i}`, score: i, replies: [] }],
    }));
    const raw = join(dir, 'big-raw.json');
    writeFileSync(raw, '\n  ' + JSON.stringify(posts, null, 1) + '\n');
    const grouped = join(dir, 'big-grouped.json');
    const byAuthor: Record<string, unknown[]> = {};
    for (const post of posts) (byAuthor[post.author] ??= []).push(post);
    writeFileSync(grouped, JSON.stringify(byAuthor, null, 2));
    const fromRaw = await readPersonaUsers(raw);
    const fromGrouped = await readPersonaUsers(grouped);
    expect(fromRaw.users.map((u) => u.user)).toEqual(['u0', 'u1', 'u2', 'u3', 'u4', 'u5', 'u6']);
    expect(fromRaw.users.flatMap((u) => u.posts)).toEqual(Object.values(byAuthor).flat());
    expect(fromGrouped.users).toEqual(fromRaw.users);
  });

  it('bad JSON inside a post names its line, column and pointer; data after the value and a missing end are errors', async () => {
    const bad = join(dir, 'bad.json');
    writeFileSync(bad, '[{"author": "a"}, {"author": "b", "score": 1,}]');
    const e1 = (await readPersonaUsers(bad).catch((e: unknown) => e)) as PlensError;
    expect(e1.code).toBe('E_INPUT_JSON');
    expect(e1.location).toEqual({ file: bad, line: 1, column: 46, pointer: '/1' });
    const trailing = join(dir, 'trailing.json');
    writeFileSync(trailing, '[{"author": "a"}] x');
    expect(((await readPersonaUsers(trailing).catch((e: unknown) => e)) as PlensError).message).toContain('after the top-level value');
    const open = join(dir, 'open.json');
    writeFileSync(open, '{"a": [{"author": "a"}');
    expect(((await readPersonaUsers(open).catch((e: unknown) => e)) as PlensError).message).toContain('unexpected end');
    const empty = join(dir, 'empty.json');
    writeFileSync(empty, '[ ]');
    expect((await readPersonaUsers(empty)).users).toEqual([]);
  });
});
