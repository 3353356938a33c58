import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { expect, it } from 'vitest';
import { cliPath, tempDir } from '../helpers/cli.js';

/*
 * What a plain `plens --version` or `plens <command> --help` loads: only the CLI's own parsing. The
 * validator (ajv), the HTTP client (undici), the call cache (LMDB), DuckDB, Arrow, the AWS SDK and
 * Vega load with the commands that use them, so a start costs a third of what it did (0.45 s ->
 * 0.17 s measured here). Two hooks list what the CLI loaded: an ESM resolve hook writes every module
 * it resolves (import, import()), a preloaded CommonJS hook the require cache at exit (require, as
 * createRequire does for ajv).
 */
const HEAVY = ['ajv', 'undici', 'lmdb', 'p-retry', '@duckdb/node-api', '@duckdb/node-bindings', 'apache-arrow', '@aws-sdk/client-bedrock-runtime', 'vega'];

function packagesLoaded(args: string[]): string[] {
  const dir = tempDir('plens-startup-');
  const resolved = join(dir, 'resolved.txt');
  writeFileSync(resolved, '');
  writeFileSync(
    join(dir, 'hooks.mjs'),
    `import { appendFileSync } from 'node:fs';
let out;
export function initialize(data) { out = data.out; }
export async function resolve(specifier, context, next) { const r = await next(specifier, context); appendFileSync(out, r.url + '\\n'); return r; }\n`,
  );
  writeFileSync(
    join(dir, 'register.mjs'),
    `import { register } from 'node:module';\nregister(${JSON.stringify(pathToFileURL(join(dir, 'hooks.mjs')).href)}, { data: { out: ${JSON.stringify(resolved)} } });\n`,
  );
  writeFileSync(
    join(dir, 'require-cache.cjs'),
    `process.on('exit', () => require('node:fs').appendFileSync(${JSON.stringify(resolved)}, Object.keys(require.cache).join('\\n') + '\\n'));\n`,
  );
  const run = spawnSync(
    process.execPath,
    ['--import', pathToFileURL(join(dir, 'register.mjs')).href, '--require', join(dir, 'require-cache.cjs'), cliPath, ...args],
    {
      encoding: 'utf8',
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  expect(run.error).toBeUndefined();
  const names = readFileSync(resolved, 'utf8')
    .split('\n')
    .map((f) => /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(f)?.[1])
    .filter((n): n is string => n !== undefined);
  return [...new Set(names)];
}

it('plens --version and --help load none of the heavy packages; a command that needs them loads them', () => {
  for (const args of [
    ['--version'],
    ['--help'],
    ['judge', '--help'],
    ['make', '--help'],
    ['warehouse', '--help'],
    ['stats', 'lexical', '--help'],
    ['persona', 'predict', '--help'],
  ]) {
    const loaded = packagesLoaded(args);
    // The hooks saw the CLI's own parser (CommonJS): they ran.
    expect(loaded, args.join(' ')).toContain('yargs');
    expect(
      loaded.filter((p) => HEAVY.includes(p)),
      args.join(' '),
    ).toEqual([]);
  }
  // Neither hook is blind: make checks a pipeline against its schema (ajv, through require) after
  // loading its run record (which names DuckDB's version: an ES module, through import). Its
  // benchmarks' stages load only when a step runs, so an invalid pipeline loads none of them.
  const file = join(tempDir('plens-startup-pipeline-'), 'p.yaml');
  writeFileSync(file, 'name: p\ncolour: red\n');
  const make = packagesLoaded(['make', '--dry-run', '-p', file]);
  expect(make).toContain('ajv');
  expect(make).toContain('@duckdb/node-api');
  expect(make).not.toContain('p-retry');
});
