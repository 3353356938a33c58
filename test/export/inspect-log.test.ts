import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import Ajv2020 from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { describe, expect, it } from 'vitest';
import type { ExportCell, ExportSample } from '../../src/export/cells.js';
import { inspectFileName, inspectLog, type RunProvenance } from '../../src/export/inspect.js';
import { repoRoot } from '../helpers/cli.js';

/**
 * One cell made by hand, with the cases the demos do not give: a failed sample, a question with
 * options, an input given as messages, a priced model beside an unpriced one, a spec with
 * parameters, and a reducer. Its log must satisfy Inspect's schema and add up.
 */
const schema = JSON.parse(readFileSync(join(repoRoot, 'test', 'fixtures', 'inspect', 'eval-log.schema.json'), 'utf8')) as object;
const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats(ajv);
const validate = ajv.compile(schema);

const run: RunProvenance = {
  plensVersion: '0.0.0-test',
  benchmark: 'toy',
  benchmarkTitle: 'Toy',
  warehouse: '/tmp/w.duckdb',
  workspace: '/tmp/out',
  builtAt: '2026-01-02T03:04:05+00:00',
  created: '2026-01-02T03:00:00+00:00',
  startedAt: '2026-01-02T03:00:00+00:00',
  completedAt: null,
  runs: [],
};

/** The log as read below, field by field (it is checked against its schema first). */
// biome-ignore lint/suspicious/noExplicitAny: a JSON document walked by the assertions.
type Json = Record<string, any>;

const usage = (input: number, output: number, cost: number | null) => ({ input_tokens: input, output_tokens: output, cost_usd: cost });

const samples: ExportSample[] = [
  {
    id: 'q1',
    epoch: 1,
    input: [
      { role: 'system', content: 'Answer with a letter.' },
      { role: 'user', content: 'Which?' },
    ],
    target: 'B',
    choices: ['one', 'two'],
    messages: [
      { role: 'system', content: 'Answer with a letter.' },
      { role: 'user', content: 'Which?' },
      { role: 'assistant', content: 'B', model: 'openai:gpt-4o?temperature=0' },
    ],
    output: 'B',
    scores: { correct: { value: 1, answer: 'B', explanation: 'matches', metadata: { parsed: true } } },
    metadata: { topic: 't' },
    usage: { models: { 'openai:gpt-4o?temperature=0': usage(10, 1, 0.5), 'openai:gpt-4o': usage(5, 1, 0.25) }, roles: { model: usage(15, 2, 0.75) } },
  },
  {
    id: 'q2',
    epoch: 1,
    input: 'Which one?',
    target: 'A',
    messages: [{ role: 'user', content: 'Which one?' }],
    output: 'never shown',
    scores: {},
    metadata: {},
    usage: { models: { 'sim:default': usage(3, 0, null) }, roles: { judge: usage(3, 0, null) } },
    error: 'failed (timeout): no reply after 3 attempts',
  },
];

const cell: ExportCell = {
  task: 'toy_task',
  args: { setting: 'base+all', turns: 3 },
  model: 'openai:gpt-4o?temperature=0',
  roles: { judge: 'sim:default' },
  generate: { temperature: 0, max_tokens: null },
  dataset: { name: 'toy' },
  metadata: { run: 'abc123' },
  read: async () => ({ samples, scores: [] }),
};

const log = inspectLog(
  cell,
  {
    samples,
    scores: [
      {
        scorer: 'correct',
        reducer: 'max',
        metrics: [
          { name: 'accuracy', value: 1 },
          { name: 'SD', value: 1, group: 'mean_by_kind' },
          { name: 'nan', value: Number.NaN },
        ],
        scored: 1,
        unscored: 1,
      },
    ],
    reductions: [{ scorer: 'correct', reducer: 'max', samples: [{ id: 'q1', value: 1 }] }],
  },
  run,
) as Json;

describe('a cell as an Inspect eval log', () => {
  it("satisfies Inspect's log schema, failed sample and all", () => {
    expect(validate(log) ? [] : validate.errors).toEqual([]);
  });

  it('counts, names and adds up as Inspect does', () => {
    expect(log['eval'].model).toBe('openai/gpt-4o');
    expect(log['eval'].model_args).toEqual({ temperature: '0' });
    expect(log['eval'].model_roles).toEqual({ judge: { model: 'sim/default', config: {}, args: {} } });
    expect(log['eval'].model_generate_config).toEqual({ temperature: 0 });
    expect(log['results'].total_samples).toBe(2);
    expect(log['results'].completed_samples).toBe(1);
    // A metric that is not a number is left out (JSON has no NaN).
    expect(Object.keys(log['results'].scores[0].metrics)).toEqual(['accuracy', 'SD']);
    // Two specs of one model are one model to Inspect; an unpriced model has no total_cost.
    expect(log['stats'].model_usage).toEqual({
      'openai/gpt-4o': { input_tokens: 15, output_tokens: 2, total_tokens: 17, total_cost: 0.75 },
      'sim/default': { input_tokens: 3, output_tokens: 0, total_tokens: 3 },
    });
    expect(log['stats'].completed_at).toBe('');
    const failed = log['samples'][1];
    expect(failed.error).toEqual({ message: 'failed (timeout): no reply after 3 attempts', traceback: '', traceback_ansi: '' });
    expect(failed.output.choices).toEqual([]);
    expect(log['samples'][0].input.map((m: { source?: string }) => m.source)).toEqual([undefined, 'input']);
  });

  it('is named {created}_{task}_{id}.json, each part free of the underscore that separates them', () => {
    expect(inspectFileName(log)).toMatch(/^2026-01-02T03-00-00-00-00_toy-task_[A-Za-z0-9]{22}\.json$/);
  });
});
