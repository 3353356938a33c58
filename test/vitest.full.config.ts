import { defineConfig } from 'vitest/config';

/** `npm run test:full`: the released PersonaLens data (1,500 users, 220 MB of JSON); slow, so apart from `npm test`. */
export default defineConfig({
  test: {
    root: new URL('..', import.meta.url).pathname,
    include: ['test/full-data/**/*.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    testTimeout: 300_000,
    hookTimeout: 300_000,
    pool: 'forks',
  },
});
