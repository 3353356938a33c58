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
    testTimeout: 120_000,
    hookTimeout: 180_000,
    pool: 'forks',
    // Both cores: vitest's default leaves one idle on a 2-core machine (cores - 1), and most files
    // spend their time in DuckDB or waiting on a local endpoint.
    maxWorkers: 2,
  },
});
