import { rmSync } from 'node:fs';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { runCliProcess, sampleDir, tempDir } from './helpers/cli.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** A workspace with the bundled sample imported, made once per test run; copy it, never write to it. */
    sampleImport: string;
  }
}

/** Expensive fixtures shared by every test file: built once before the run, removed after it. */
export default async function setup(project: TestProject): Promise<() => void> {
  const root = tempDir('plens-shared-');
  const ws = join(root, 'out');
  const r = await runCliProcess(['import', '--from', sampleDir, '-w', ws, '--no-progress']);
  if (r.code !== 0) throw new Error(`global setup: importing the sample failed (exit ${r.code}):\n${r.stderr}`);
  project.provide('sampleImport', ws);
  return () => rmSync(root, { recursive: true, force: true });
}
