import { cpSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { expect, inject } from 'vitest';
import { runCli, tempDir } from './cli.js';

/**
 * Workspaces this test process has built once, by what was run on them; each test gets a copy.
 * Selecting scenarios and running the offline simulator's dialogues always give the same files, and
 * many tests only need them as their starting point: made once per process (a vitest worker runs
 * many files), copied per test. Never written to after they are made.
 */
const templates = new Map<string, Promise<string>>();

function template(key: string, build: () => Promise<string>): Promise<string> {
  let made = templates.get(key);
  if (!made) {
    made = build();
    templates.set(key, made);
    // A failed build is reported by the test that ran it, and the next test builds it again.
    made.catch(() => templates.delete(key));
  }
  return made;
}

function copyOf(ws: string): string {
  const copy = join(tempDir('plens-ws-'), 'out');
  cpSync(ws, copy, { recursive: true });
  return copy;
}

/** A workspace with the sample imported and some scenarios selected (imported once per run by the global setup, copied per test). */
export async function sampleWorkspace(scenarioArgs: string[] = ['--users', '0-1']): Promise<string> {
  const made = await template(JSON.stringify(['scenarios', scenarioArgs]), async () => {
    const ws = copyOf(inject('sampleImport'));
    const r = await runCli(['scenarios', '-w', ws, ...scenarioArgs]);
    expect(r.code, r.stderr).toBe(0);
    return ws;
  });
  return copyOf(made);
}

/**
 * sampleWorkspace() with the offline simulator's dialogues run on it:
 * `plens dialogues --assistant sim:default <dialogueArgs>` (made once per process, copied per test).
 */
export async function simDialoguesWorkspace(scenarioArgs: string[] = ['--users', '0-1'], dialogueArgs: string[] = ['--setting', 'base']): Promise<string> {
  const made = await template(JSON.stringify(['sim-dialogues', scenarioArgs, dialogueArgs]), async () => {
    const ws = await sampleWorkspace(scenarioArgs);
    const r = await runCli(['dialogues', '-w', ws, '--assistant', 'sim:default', ...dialogueArgs]);
    expect(r.code, r.stderr).toBe(0);
    return ws;
  });
  return copyOf(made);
}

/** Every file under a folder, recursively. */
export function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? filesUnder(p) : [p];
  });
}

export function containsBytes(file: string, needle: string): boolean {
  return readFileSync(file).includes(Buffer.from(needle));
}
