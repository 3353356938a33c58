import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Database } from '../../src/db/database.js';
import { make, type MakeResult } from '../../src/make/make.js';
import { loadPipeline } from '../../src/make/pipeline.js';
import { formatStatus, pipelineStatus } from '../../src/make/status.js';
import { registerBenchmark, tableCatalog } from '../../src/registry/registry.js';
import { collectTables } from '../../src/tables/tables.js';
import { tempDir } from '../helpers/cli.js';
import { echoBenchmark } from './echo/module.js';

/**
 * A benchmark is a folder and a registry entry: the echo benchmark (test/plugins/echo, a few dozen
 * lines) registers with one call and runs through make all, status, the warehouse, the tables and
 * the report, with no edit to plens.
 */
describe('a plug-in benchmark: echo', () => {
  const dir = tempDir('plens-echo-');
  let unregister: () => void;
  const pipelineFile = (name: string, body: string) => {
    const file = join(dir, `${name}.yaml`);
    writeFileSync(file, `name: ${name}\nworkspace: ${dir}/${name}\nwarehouse: ${dir}/${name}.duckdb\n${body}`);
    return file;
  };
  const run = (file: string, targets = ['all']) =>
    make(loadPipeline(file, {}), {
      targets,
      dryRun: false,
      keepGoing: false,
      retryFailed: false,
      progress: false,
      signal: new AbortController().signal,
      log: () => {},
    });
  let first: MakeResult;
  let file: string;

  beforeAll(async () => {
    unregister = registerBenchmark(echoBenchmark);
    file = pipelineFile('echo', 'benchmark: echo\necho:\n  words: [alpha, be, gamma]\n');
    first = await run(file);
  }, 120_000);
  afterAll(() => unregister());

  it('make all runs its step, then the shared warehouse, tables and report', () => {
    expect(first.steps.map((s) => `${s.step}:${s.status}`)).toEqual(['echo:ran', 'warehouse:ran', 'tables:ran', 'report:ran']);
    expect(first.failed).toEqual([]);
  });

  it('the warehouse runs its SQL folder: its table holds the words', async () => {
    const db = await Database.open(join(dir, 'echo.duckdb'), { readOnly: true });
    try {
      expect(await db.all('SELECT word, length::INT AS length FROM echo_words ORDER BY i')).toEqual([
        { word: 'alpha', length: 5 },
        { word: 'be', length: 2 },
        { word: 'gamma', length: 5 },
      ]);
    } finally {
      await db.close();
    }
  });

  it('tables renders its table (and no other benchmark’s); the report shows its table and chart', async () => {
    expect(readFileSync(join(dir, 'echo', 'tables', 'echo_words.md'), 'utf8')).toContain('gamma');
    const listed = await collectTables({ catalog: tableCatalog(), dbPath: join(dir, 'echo.duckdb'), format: 'csv' });
    expect(listed.tables.map((t) => t.name)).toEqual(['echo_words']);
    expect(listed.missing).toEqual([]);
    const html = readFileSync(first.report!, 'utf8');
    expect(html).toContain('Echo: the words');
    expect(html).toContain('Word lengths');
  });

  it('status lists its step from its own part, and a second make has nothing to do', async () => {
    const s = await pipelineStatus(loadPipeline(file, {}), new AbortController().signal);
    expect(s.stages).toEqual({ echo: 'done', warehouse: 'done', tables: 'done', report: 'done' });
    expect(s['echoed']).toBe(3);
    expect(formatStatus(s)).toContain('echo       done (3 words)');
    const again = await run(file);
    expect(again.up_to_date).toBe(true);
    // A changed section makes its step, and what follows, run again.
    writeFileSync(file, readFileSync(file, 'utf8').replace('gamma]', 'gamma, delta]'));
    const changed = await run(file, ['echo_words']);
    expect(changed.steps.map((s) => `${s.step}:${s.status}`)).toEqual(['echo:ran', 'warehouse:ran', 'tables:ran']);
  });

  it('its section is checked against its own schema, and belongs to its pipelines only', () => {
    expect(() => loadPipeline(pipelineFile('bad', 'benchmark: echo\necho:\n  words: 3\n'), {})).toThrow(
      expect.objectContaining({ code: 'E_INPUT_SCHEMA', location: expect.objectContaining({ pointer: '/echo/words', line: 6 }) }),
    );
    expect(() => loadPipeline(pipelineFile('mixed', 'data:\n  from: sample\nscenarios:\n  kind: sd\necho:\n  words: [a]\n'), {})).toThrow(
      /echo: only a pipeline with `benchmark: echo` takes a echo section/,
    );
    // A plug-in's required section is required as the built-in ones are (the file schema knows none of it).
    expect(() => loadPipeline(pipelineFile('bare', 'benchmark: echo\n'), {})).toThrow(
      expect.objectContaining({ code: 'E_INPUT_SCHEMA', message: expect.stringMatching(/missing required field "echo"/) }),
    );
    expect(() => loadPipeline(pipelineFile('unknown', 'benchmark: nosuch\n'), {})).toThrow(
      /benchmark: expected one of \["personalens","persona-bench","prefeval","echo"\]/,
    );
  });

  it('the registry refuses a second benchmark with its id, sections, steps or tables', () => {
    expect(() => registerBenchmark({ ...echoBenchmark })).toThrow(/id echo already belong to echo/);
    expect(() => registerBenchmark({ ...echoBenchmark, id: 'echo2', sections: ['persona'] })).toThrow(/sections persona already belong to persona-bench/);
    expect(existsSync(join(dir, 'echo', 'make'))).toBe(true);
  });
});
