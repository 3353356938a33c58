import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PlensError } from '../../src/core/errors.js';
import { Workspace } from '../../src/core/workspace.js';
import { loadPipeline } from '../../src/make/pipeline.js';
import { DEFAULT_LIMITS, LIMIT_SETTINGS, llmStageOptionsOf, resolveLimits } from '../../src/platform/run-settings.js';
import { scenarioSelectionOf } from '../../src/benchmarks/personalens/scenario-settings.js';
import { runCliJson, tempDir } from '../helpers/cli.js';

function errorOf(f: () => unknown): PlensError {
  try {
    f();
  } catch (error) {
    if (error instanceof PlensError) return error;
    throw error;
  }
  throw new Error('expected an error');
}

/** A minimal pipeline whose `limits:` block is given; line 7 is the first line inside it. */
function pipelineFile(limits: string): string {
  const dir = tempDir('plens-settings-');
  const file = join(dir, 'p.yaml');
  writeFileSync(file, `name: settings\nworkspace: ${dir}/out\ndata:\n  from: sample\nscenarios:\n  kind: md\nlimits:\n${limits}`);
  return file;
}

const locate = (pointer: string) => ({ file: 'p.yaml', line: 9, pointer });

describe('the run-limits resolver', () => {
  it('has one set of defaults', () => {
    expect(DEFAULT_LIMITS).toEqual({
      cells: 2,
      concurrency: 16,
      cache: 'on',
      retries: 6,
      retryDelayMs: 1000,
      retryWindowS: 600,
      callTimeoutS: 180,
      connectTimeoutS: 10,
    });
  });

  it('a flag beats the pipeline, which beats the default', () => {
    const limits = resolveLimits({
      flags: { concurrency: 8, 'retry-window': 5 },
      pipeline: { limits: { concurrency: 4, cache: 'replay', retry_window_s: 30, cells: 1 }, locate },
    });
    expect(limits).toEqual({
      cells: 1,
      concurrency: 8,
      cache: 'replay',
      retries: 6,
      retryDelayMs: 1000,
      retryWindowS: 5,
      callTimeoutS: 180,
      connectTimeoutS: 10,
    });
    // An absent flag (yargs gives undefined) leaves the pipeline's value.
    expect(resolveLimits({ flags: { concurrency: undefined }, pipeline: { limits: { concurrency: 4 }, locate } }).concurrency).toBe(4);
    expect(resolveLimits({}).concurrency).toBe(16);
  });

  it('a bad flag is a usage error naming the flag', () => {
    for (const [flags, message] of [
      [{ concurrency: 0 }, '--concurrency must be a whole number >= 1'],
      [{ concurrency: Number.NaN }, '--concurrency must be a whole number >= 1'],
      [{ retries: 1.5 }, '--retries must be a whole number >= 0'],
      [{ 'retry-delay-ms': -1 }, '--retry-delay-ms must be a number >= 0'],
      [{ 'call-timeout': 0 }, '--call-timeout must be more than 0 seconds'],
      [{ cache: 'sometimes' }, '--cache must be one of on, off, read, write, replay'],
    ] as const) {
      const e = errorOf(() => resolveLimits({ flags }));
      expect(e.code).toBe('E_USAGE');
      expect(e.message).toBe(message);
    }
  });

  it('a bad pipeline value is one error naming the file, the line and the field', () => {
    const e = errorOf(() => resolveLimits({ pipeline: { limits: { connect_timeout_s: 0 }, locate } }));
    expect(e.code).toBe('E_INPUT_SCHEMA');
    expect(e.message).toBe('limits.connect_timeout_s must be more than 0 seconds');
    expect(e.location).toEqual({ file: 'p.yaml', line: 9, pointer: '/limits/connect_timeout_s' });

    // Through a real file: the schema and the resolver agree, and the error points at the line.
    const file = pipelineFile('  concurrency: 4\n  call_timeout_s: 0\n');
    const f = errorOf(() => loadPipeline(file, {}));
    expect(f.code).toBe('E_INPUT_SCHEMA');
    expect(f.location).toMatchObject({ file, line: 9, pointer: '/limits/call_timeout_s' });
    const g = errorOf(() => loadPipeline(pipelineFile('  retries: many\n'), {}));
    expect(g.location).toMatchObject({ line: 8, pointer: '/limits/retries' });
  });

  it('a pipeline file and command-line overrides resolve into one typed object', () => {
    const file = pipelineFile('  concurrency: 4\n  cache: read\n');
    expect(loadPipeline(file, {}).limits).toEqual({ ...DEFAULT_LIMITS, concurrency: 4, cache: 'read' });
    expect(loadPipeline(file, {}, { limits: { cache: 'off', cells: 3 } }).limits).toEqual({ ...DEFAULT_LIMITS, concurrency: 4, cache: 'off', cells: 3 });
    // A bad override names the flag, not the file.
    expect(errorOf(() => loadPipeline(file, {}, { limits: { cells: 0 } })).message).toBe('--cells must be a whole number >= 1');
  });

  it('turns limits into the stage options: one retry policy and one set of timeouts', () => {
    const o = llmStageOptionsOf(
      { ...DEFAULT_LIMITS, retries: 2, retryDelayMs: 5, retryWindowS: 7, callTimeoutS: 3, connectTimeoutS: 1 },
      { workspace: new Workspace('/tmp/ws'), signal: new AbortController().signal, dryRun: false, progress: false, retryFailed: true, limit: 0 },
    );
    expect(o.retry).toEqual({ retries: 2, minDelayMs: 5, maxDelayMs: 60_000, factor: 2, maxTotalMs: 7000, maxRetryAfterMs: 300_000 });
    expect(o.timeouts).toEqual({ connectMs: 1000, headersMs: 3000, bodyMs: 3000, deadlineMs: 3000 });
    expect(o).toMatchObject({ cache: 'on', concurrency: 16, limit: 0, retryFailed: true, dryRun: false });
  });

  it("the pipeline schema lists exactly the resolver's fields", () => {
    const schema = JSON.parse(readFileSync(join(import.meta.dirname, '../../schemas/pipeline.schema.json'), 'utf8')) as {
      properties: { limits: { properties: Record<string, unknown> } };
    };
    expect(Object.keys(schema.properties.limits.properties).sort()).toEqual(
      Object.values(LIMIT_SETTINGS)
        .map((s) => s.field)
        .sort(),
    );
  });

  it('plens make takes the limits as flags, checked by the same rules', async () => {
    const file = pipelineFile('  concurrency: 4\n');
    const r = await runCliJson<{ ok: boolean; error: { code: string; message: string } }>([
      'make',
      'import',
      '-p',
      file,
      '--dry-run',
      '--connect-timeout',
      '0',
    ]);
    expect(r.code).toBe(2);
    expect(r.json.error).toMatchObject({ code: 'E_USAGE', message: '--connect-timeout must be more than 0 seconds' });
  });
});

describe('the scenario selection', () => {
  it('reads the same from flags and from a pipeline', () => {
    const fromFlags = scenarioSelectionOf({ kind: 'md', sample: 50, users: '3,0-1', domains: 'Hotels, Flights', random: 5, seed: '7' });
    const fromFile = scenarioSelectionOf(
      { kind: 'md', sample: 'sample_50', users: [3, 1, 0, 1], domains: ['Hotels', 'Flights'], random: 5, seed: '7' },
      locate,
    );
    expect(fromFlags).toEqual({ kind: 'md', sample: 50, users: [0, 1, 3], domains: ['Hotels', 'Flights'], random: 5, seed: '7' });
    expect(fromFile).toEqual(fromFlags);
    // A number, as persona.seed takes one, is the same seed as its text.
    expect(scenarioSelectionOf({ kind: 'md', sample: 'sample_50', users: [3, 1, 0, 1], domains: ['Hotels', 'Flights'], random: 5, seed: 7 }, locate)).toEqual(
      fromFlags,
    );
  });

  it('an error names the flag, or the field at its line in the pipeline', () => {
    expect(errorOf(() => scenarioSelectionOf({ kind: 'all', users: '9-3' })).message).toBe('--users: range "9-3" runs backwards');
    const e = errorOf(() => scenarioSelectionOf({ kind: 'all', users: '9-3' }, locate));
    expect(e.message).toBe('users: range "9-3" runs backwards');
    expect(e.location).toEqual({ file: 'p.yaml', line: 9, pointer: '/scenarios/users' });
    expect(errorOf(() => scenarioSelectionOf({ kind: 'all', seed: '1' }, locate)).location.pointer).toBe('/scenarios/seed');
  });
});
