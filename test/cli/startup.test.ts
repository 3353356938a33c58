import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { cliPath, tempDir } from '../helpers/cli.js';

/*
 * What a plain `plens --version` or `plens <command> --help` loads: only the CLI's own parsing. The
 * validator (ajv), the HTTP client (undici), the call cache (LMDB) and DuckDB load when a command
 * uses them, so a start costs a third of what it did (0.45 s -> 0.17 s measured here). A preloaded
 * CommonJS hook lists the packages in require.cache at exit (every one of these loads through it).
 */
const HEAVY = ['ajv', 'undici', 'lmdb', 'msgpackr-extract', '@duckdb/node-bindings', 'apache-arrow', '@aws-sdk/client-bedrock-runtime', 'vega'];

function packagesLoaded(args: string[]): string[] {
  const hook = join(tempDir('plens-startup-'), 'list-packages.cjs');
  writeFileSync(
    hook,
    `process.on('exit', () => {
      const names = new Set(Object.keys(require.cache).map((f) => (/node_modules\\/((?:@[^/]+\\/)?[^/]+)/.exec(f) || [])[1]).filter(Boolean));
      require('node:fs').writeSync(2, 'PACKAGES ' + JSON.stringify([...names]) + '\\n');
    });\n`,
  );
  const { stderr } = spawnSync(process.execPath, ['--require', hook, cliPath, ...args], { encoding: 'utf8', stdio: ['ignore', 'ignore', 'pipe'] });
  const line = /^PACKAGES (.+)$/m.exec(stderr)?.[1];
  return line ? (JSON.parse(line) as string[]) : [];
}

it('plens --version and --help load none of the heavy packages; a command that validates loads ajv', () => {
  for (const args of [['--version'], ['judge', '--help'], ['make', '--help'], ['--help']]) {
    const loaded = packagesLoaded(args);
    // The hook saw the CLI's own parser: it ran.
    expect(loaded, args.join(' ')).toContain('yargs');
    expect(
      loaded.filter((p) => HEAVY.includes(p)),
      args.join(' '),
    ).toEqual([]);
  }
  // The check is not blind: a pipeline file is validated against its schema, with ajv.
  const dir = tempDir('plens-startup-pipeline-');
  const file = join(dir, 'p.yaml');
  writeFileSync(file, 'name: p\ncolour: red\n');
  expect(packagesLoaded(['make', '--dry-run', '-p', file])).toContain('ajv');
});
