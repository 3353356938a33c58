import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { repoRoot, runCliProcess, sampleDir, tempDir } from './helpers/cli.js';
import { makeTempRoot } from './temp-root.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** A workspace with the bundled sample imported, made once per test run; copy it, never write to it. */
    sampleImport: string;
    /** The run's temporary folder (TMPDIR of every worker: they start after the global setup), removed when the run ends. */
    tempRoot: string;
  }
}

/** Expensive fixtures shared by every test file: built once before the run, removed after it. */
export default async function setup(project: TestProject): Promise<() => void> {
  const temp = makeTempRoot();
  project.provide('tempRoot', temp.root);
  const root = tempDir('plens-shared-');
  const ws = join(root, 'out');
  const r = await runCliProcess(['import', '--from', sampleDir, '-w', ws, '--no-progress']);
  if (r.code !== 0) {
    temp.remove();
    throw new Error(`global setup: importing the sample failed (exit ${r.code}):\n${r.stderr}`);
  }
  project.provide('sampleImport', ws);
  // No test may leave a current project in the repository (docs/project.md): the user's own.
  const state = join(repoRoot, '.plens');
  const hadState = existsSync(state);
  return () => {
    temp.remove();
    if (!hadState && existsSync(state)) {
      // A teardown's error does not fail the run by itself: the exit code says it.
      process.stderr.write(`a test wrote ${state}: run the CLI with PLENS_STATE_DIR=off (the vitest config sets it)\n`);
      process.exitCode = 1;
    }
  };
}
