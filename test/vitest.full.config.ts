import { defineConfig } from 'vitest/config';

/** `npm run test:full`: the released PersonaLens data (1,500 users, 220 MB of JSON); slow, so apart from `npm test`. */
export default defineConfig({
  test: {
    root: new URL('..', import.meta.url).pathname,
    // No test's make becomes the current project of the folder it ran in (docs/project.md): the
    // tests that need that state turn it on themselves.
    env: { PLENS_STATE_DIR: 'off' },
    include: ['test/full-data/**/*.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    testTimeout: 300_000,
    hookTimeout: 300_000,
    pool: 'forks',
  },
});
