import { cpSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { expect, inject } from 'vitest';
import { runCli, tempDir } from './cli.js';

/** A workspace with the sample imported and some scenarios selected (imported once per run by the global setup, copied per test). */
export async function sampleWorkspace(scenarioArgs: string[] = ['--users', '0-1']): Promise<string> {
  const template = inject('sampleImport');
  const ws = join(tempDir('plens-ws-'), 'out');
  cpSync(template, ws, { recursive: true });
  const r = await runCli(['scenarios', '-w', ws, ...scenarioArgs]);
  expect(r.code, r.stderr).toBe(0);
  return ws;
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
