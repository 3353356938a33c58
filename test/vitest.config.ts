import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    root: new URL('..', import.meta.url).pathname,
    include: ['test/**/*.test.ts'],
    // The full-data tests import 220 MB of JSON; give them room on a 2-core machine.
    testTimeout: 120_000,
    hookTimeout: 180_000,
    pool: 'forks',
  },
});
