import { defineConfig } from 'vitest/config';

/**
 * `npm test`: every test but the released-data ones (test/full-data/), which `npm run test:full`
 * runs (test/vitest.full.config.ts); CI runs both.
 */
export default defineConfig({
  test: {
    root: new URL('..', import.meta.url).pathname,
    // No test's make becomes the current project of the folder it ran in (docs/project.md): the
    // tests that need that state turn it on themselves.
    env: { PLENS_STATE_DIR: 'off' },
    include: ['test/**/*.test.ts'],
    exclude: ['**/node_modules/**', 'test/full-data/**'],
    // Imports the sample once for every file (sampleWorkspace copies it).
    globalSetup: ['test/global-setup.ts'],
    setupFiles: ['test/http-thread-setup.ts'],
    testTimeout: 120_000,
    hookTimeout: 180_000,
    // Forks, not threads: the in-process CLI runs (test/helpers/cli.ts) call process.chdir, which a
    // worker thread may not.
    pool: 'forks',
    // One process per worker for all its files, not a fresh one per file: starting Node and loading
    // DuckDB, undici and the AWS SDK again for each of ~100 files cost about a third of the run's CPU
    // (measured: 76 of the light files took 136 CPU-s isolated, 76-87 not). Files restore what they
    // change (env stubs, fake timers, listeners); the listener-count tests would catch a leak.
    isolate: false,
    // Three workers on two cores: with one process per worker (isolate: false) a worker costs little,
    // and many files wait on local endpoints, batch polls, retry delays and child processes, while a
    // third keeps both cores busy. Measured on this 2-core machine: 146-155 s against 177 s with two,
    // the processes' memory together (PSS) at most 1.9 GB.
    maxWorkers: 3,
  },
});
