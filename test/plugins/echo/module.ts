import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileStamp } from '../../../src/core/file-stamps.js';
import type { Benchmark } from '../../../src/platform/benchmark.js';
import { hash, recordedBuild } from '../../../src/platform/make-state.js';
import type { Pipeline } from '../../../src/platform/pipeline.js';

/**
 * A benchmark in a few dozen lines, registered by a test only: its section `echo: {words: [...]}`
 * is echoed into echo/echo.json by its one step, loaded by its SQL file, shown as one table and one
 * chart. It proves a benchmark plugs in with no edit to plens (test/plugins/echo-benchmark.test.ts).
 */
interface EchoPipeline extends Pipeline {
  echo: { words: string[] };
}

const outFile = (p: Pipeline) => join(p.workspace, 'echo', 'echo.json');

export const echoBenchmark: Benchmark<EchoPipeline> = {
  id: 'echo',
  title: 'Echo',
  summary: 'Echo (a test plug-in): echo',
  sections: ['echo'],
  requiredSections: ['echo'],
  folders: ['echo'],
  sectionSchemas: {
    echo: { type: 'object', additionalProperties: false, required: ['words'], properties: { words: { type: 'array', items: { type: 'string' } } } },
  },
  resolve: (raw) => ({ echo: raw['echo'] }),
  steps: [
    {
      name: 'echo',
      needs: () => [],
      available: () => true,
      fingerprint: {
        inputs: (p) => hash(['echo', p.echo.words]),
        current: (p, state, o) => recordedBuild(state, 'echo', o.inputs, fileStamp(outFile(p))),
        exists: (p) => fileStamp(outFile(p)) !== null,
      },
      async run(ctx) {
        if (ctx.isCurrent()) return { step: 'echo', status: 'up-to-date', work: 0, detail: 'up to date' };
        if (ctx.dryRun) return { step: 'echo', status: 'would-run', work: 1, detail: `would echo ${ctx.p.echo.words.length} words` };
        mkdirSync(dirname(outFile(ctx.p)), { recursive: true });
        writeFileSync(outFile(ctx.p), ctx.p.echo.words.map((word, i) => JSON.stringify({ i, word, length: word.length })).join('\n') + '\n');
        await ctx.save(ctx.inputs(), fileStamp(outFile(ctx.p))!);
        return { step: 'echo', status: 'ran', work: 1, detail: `echoed ${ctx.p.echo.words.length} words` };
      },
    },
  ],
  warehouse: {
    needs: () => ['echo'],
    after: () => 'echo',
    source: {
      present: (ws) => fileStamp(join(ws.root, 'echo', 'echo.json')) !== null,
      missing: () => 'echoed words',
      hint: '`plens make echo`',
      example: 'echo_words',
    },
  },
  sqlDir: join(import.meta.dirname, 'sql'),
  tables: {
    holds: (relations) => relations.has('echo_words'),
    tables: [
      {
        name: 'echo_words',
        title: 'Echo: the words',
        caption: 'Each word and its length.',
        columns: [
          { key: 'word', label: 'Word' },
          { key: 'length', label: 'Length', format: 'int' },
        ],
      },
    ],
  },
  charts: [
    {
      label: 'Echo lengths',
      view: 'echo_words',
      build: (rows) => ({
        id: 'echo-lengths',
        title: 'Word lengths',
        caption: 'The length of each echoed word.',
        spec: { data: { values: rows }, mark: 'bar', encoding: { x: { field: 'word', type: 'nominal' }, y: { field: 'length', type: 'quantitative' } } },
      }),
    },
  ],
  reportMetadata: (p) => ({ pipeline: p.name, words: p.echo.words.length }),
  models: () => [],
  status: {
    collect: async ({ p }) => ({ echoed: fileStamp(outFile(p)) === null ? 0 : readFileSync(outFile(p), 'utf8').trim().split('\n').length }),
    format: (s) => ({ body: [`echo       ${s.stages['echo']} (${s['echoed']} words)`] }),
  },
};
