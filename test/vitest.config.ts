import { defineConfig } from 'vitest/config';

/**
 * `npm test`: every test but the released-data ones (test/full-data/), which `npm run test:full`
 * runs (test/vitest.full.config.ts); CI runs both.
 */
export default defineConfig({
  test: {
    root: new URL('..', import.meta.url).pathname,
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
    // Both cores: vitest's default leaves one idle on a 2-core machine (cores - 1), and most files
    // spend their time in DuckDB or waiting on a local endpoint.
    maxWorkers: 2,
  },
});
