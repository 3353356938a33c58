import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, statfsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMockLlm, type MockLlmServer } from '../../src/testkit/mock-server.js';
import { runCli, tempDir } from '../helpers/cli.js';
import { sampleWorkspace } from '../helpers/workspace.js';

/**
 * Real storage faults: a small tmpfs that fills up, and a read-only mount. Both need mount(8)
 * (root, or a container that allows it); where the machine refuses, the tests are skipped and say why.
 */
const mounts: string[] = [];
function mount(args: string[], dir: string): string | undefined {
  try {
    execFileSync('mount', [...args, dir], { stdio: 'pipe' });
    mounts.push(dir);
    return undefined;
  } catch (error) {
    return `mount ${args.join(' ')} is not permitted here: ${String((error as { stderr?: Buffer }).stderr ?? error).trim()}`;
  }
}
const probe = join(tempDir('plens-mount-probe-'), 'm');
mkdirSync(probe);
const cannotMount = mount(['-t', 'tmpfs', '-o', 'size=64k', 'tmpfs'], probe);
if (cannotMount) console.warn(`storage fault tests skipped: ${cannotMount}`);

afterAll(() => {
  for (const dir of mounts.reverse()) {
    try {
      execFileSync('umount', ['-l', dir], { stdio: 'pipe' });
    } catch {
      // already gone
    }
  }
});

/** A tmpfs of `size` at a fresh folder. */
function tmpfs(size: string): string {
  const dir = join(tempDir('plens-tmpfs-'), 'fs');
  mkdirSync(dir);
  const why = mount(['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs'], dir);
  if (why) throw new Error(why);
  return dir;
}

/** A read-only view of `source` (a bind mount remounted ro: chmod does not stop root). */
function readOnlyView(source: string): string {
  const dir = join(tempDir('plens-ro-'), 'ro');
  mkdirSync(dir);
  const why = mount(['--bind', source], dir) ?? mount(['-o', 'remount,bind,ro', source], dir);
  if (why) throw new Error(why);
  return dir;
}

/** Fills a file system until only about `leave` bytes are free. */
function fill(dir: string, leave: number): void {
  const { bavail, bsize } = statfsSync(dir);
  try {
    writeFileSync(join(dir, 'filler'), Buffer.alloc(Math.max(0, bavail * bsize - leave)));
  } catch {
    // ENOSPC: as full as it gets
  }
}

const noStack = (stderr: string) => expect(stderr).not.toMatch(/\n\s+at .*\(/);

describe.skipIf(cannotMount !== undefined)('storage faults (real tmpfs and read-only mounts)', () => {
  let ws: string;
  let server: MockLlmServer;
  beforeAll(async () => {
    ws = await sampleWorkspace(['--users', '0']);
    server = await startMockLlm();
  });
  afterAll(async () => {
    await server?.close();
  });

  it('plens warehouse on a full disk fails with E_STORAGE naming the file, and the previous warehouse is intact', async () => {
    // Room for one warehouse (about 3.4 MB for the sample) but not for a second beside it.
    const disk = tmpfs('5m');
    const db = join(disk, 'w.duckdb');
    const first = await runCli(['warehouse', '-w', ws, '--db', db, '--lexical', 'none']);
    expect(first.code, first.stderr).toBe(0);
    const before = readFileSync(db);
    fill(disk, 64 * 1024);
    // Forced: nothing changed, so a plain build would have nothing to do.
    const again = await runCli(['warehouse', '-w', ws, '--db', db, '--lexical', 'none', '--force']);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/E_STORAGE/);
    expect(again.stderr).toMatch(/disk is full/);
    expect(again.stderr).toContain(db);
    noStack(again.stderr);
    // Nothing half-written: the old file, byte for byte, and no temp file or WAL beside it (the
    // folder beside it holds the first build's record).
    expect(readFileSync(db).equals(before)).toBe(true);
    expect(readdirSync(disk).sort()).toEqual(['filler', 'w.duckdb', 'w.duckdb.steps']);
    const q = await runCli(['sql', 'select count(*) AS n from scenario_pool', '--db', db, '--format', 'csv']);
    expect(q.stdout).toMatch(/^n\n\d+\n$/);
  });

  it('plens warehouse on a disk too small for it fails with E_STORAGE and leaves no file', async () => {
    const disk = tmpfs('512k');
    const db = join(disk, 'w.duckdb');
    const r = await runCli(['warehouse', '-w', ws, '--db', db, '--lexical', 'none', '--json']);
    expect(r.code).toBe(1);
    expect(JSON.parse(r.stdout)).toMatchObject({ ok: false, error: { code: 'E_STORAGE', file: db } });
    expect(readdirSync(disk)).toEqual([]);
  });

  it('plens dialogues on a full disk stops with E_STORAGE (no crash, no signal), and the work is resumable', async () => {
    const disk = tmpfs('2m');
    const full = join(disk, 'ws');
    cpSync(ws, full, { recursive: true });
    fill(disk, 16 * 1024);
    const args = [
      'dialogues',
      '-w',
      full,
      '--assistant',
      `openai:m?base_url=${server.url}/v1`,
      '--user',
      `openai:u?base_url=${server.url}/v1`,
      '--no-progress',
    ];
    const r = await runCli(args, { env: { OPENAI_API_KEY: 'sk-storage-test' } });
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toMatch(/E_STORAGE: .*disk is full/);
    noStack(r.stderr);
    // On a disk with room, the same workspace finishes the run.
    const roomy = join(tempDir(), 'ws');
    cpSync(full, roomy, { recursive: true });
    const resumed = await runCli([...args.slice(0, 2), roomy, ...args.slice(3)], { env: { OPENAI_API_KEY: 'sk-storage-test' } });
    expect(resumed.code, resumed.stderr).toBe(0);
  });

  it('a read-only workspace is E_STORAGE "read-only" naming the path, for every writing command', async () => {
    const ro = readOnlyView(ws);
    for (const args of [
      ['scenarios', '-w', ro, '--users', '0'],
      ['dialogues', '-w', ro, '--assistant', 'sim:default'],
      ['import', '--from', join(ws, '..', 'nowhere'), '-w', join(ro, 'new')],
    ]) {
      const r = await runCli(args);
      if (args[0] === 'import') {
        expect(r.code).toBeGreaterThan(0);
        continue;
      }
      expect(r.code, r.stderr).toBe(1);
      expect(r.stderr).toMatch(/E_STORAGE: .*read-only/);
      expect(r.stderr).toContain(ro);
      expect(r.stderr).not.toMatch(/ENOENT/);
      noStack(r.stderr);
    }
    const w = await runCli(['warehouse', '-w', ws, '--db', join(ro, 'w.duckdb'), '--lexical', 'none']);
    expect(w.code).toBe(1);
    expect(w.stderr).toMatch(/E_STORAGE: .*read-only/);
    expect(existsSync(join(ro, 'w.duckdb'))).toBe(false);
  });
});
