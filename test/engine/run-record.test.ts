import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { PlensError } from '../../src/core/errors.js';
import { registerSecret } from '../../src/core/redact.js';
import { plensVersion } from '../../src/core/version.js';
import { Workspace } from '../../src/core/workspace.js';
import { hashParts, llmStageFormat, LlmStageKit, partitionName, type LlmStageOptions } from '../../src/engine/llm-stage.js';
import { Partition, type ColumnsOf } from '../../src/engine/partition.js';
import {
  gitRevision,
  hashSources,
  modelSpecString,
  newRunId,
  RUN_RECORD_VERSION,
  RunRecorder,
  runsDir,
  type RunRecord,
  type RunSpec,
} from '../../src/engine/run-record.js';
import { runSingleCall } from '../../src/engine/single-call.js';
import { parseModelSpec } from '../../src/llm/model-spec.js';
import { startMockLlm, type MockLlmServer } from '../../src/testkit/mock-server.js';
import { tempDir } from '../helpers/cli.js';

const readRecord = (file: string): RunRecord => JSON.parse(readFileSync(file, 'utf8')) as RunRecord;

const SPEC: RunSpec = {
  benchmark: 'personalens',
  models: [{ role: 'judge', spec: 'sim:default?temperature=0' }],
  prompts: { dir: '/prompts', sha256: 'ab'.repeat(32) },
  pipeline: null,
  dataset_fingerprint: 'fp',
  limits: { concurrency: 4 },
  settings: { dimensions: ['task_completion'] },
};

describe('RunRecorder', () => {
  it('writes the record when the run starts (status running) and rewrites it when it ends', async () => {
    const root = tempDir('plens-run-record-');
    const runId = newRunId();
    const recorder = await RunRecorder.start(root, { run_id: runId, kind: 'stage', name: 'judge', parent_run_id: 'make-1', spec: SPEC });
    const file = join(runsDir(root), `${runId}.json`);
    expect(recorder.file).toBe(file);

    const started = readRecord(file);
    expect(started).toMatchObject({
      record_version: RUN_RECORD_VERSION,
      run_id: runId,
      kind: 'stage',
      name: 'judge',
      parent_run_id: 'make-1',
      spec: SPEC,
      outcome: { status: 'running', ended_at: null, elapsed_ms: null, counts: {}, spend: { by_role: {}, by_model: {} }, error: null },
    });
    expect(Date.parse(started.outcome.started_at)).not.toBeNaN();
    expect(started.provenance).toMatchObject({ plens_version: plensVersion, node_version: process.version, platform: `${process.platform}-${process.arch}` });
    expect(started.provenance.host).toBeTruthy();
    expect(started.provenance.duckdb_version).toMatch(/^v?\d+\.\d+/);
    // Nothing from the command line (it may hold keys).
    expect(Object.keys(started.provenance).sort()).toEqual(['duckdb_version', 'git_revision', 'host', 'node_version', 'platform', 'plens_version']);
    // Only the record: the temp file it was written through is gone.
    expect(readdirSync(runsDir(root))).toEqual([`${runId}.json`]);

    const spend = {
      by_role: { judge: { calls: 3, cached_calls: 1, cost_usd: 0.25 } },
      by_model: { 'sim:default': { calls: 3, cached_calls: 1, cost_usd: 0.25 } },
    };
    await recorder.finish({ status: 'ok', counts: { ok: 3, failed: 0 }, spend });
    const ended = readRecord(file);
    expect(ended.outcome).toMatchObject({ status: 'ok', started_at: started.outcome.started_at, counts: { ok: 3, failed: 0 }, spend, error: null });
    expect(Date.parse(ended.outcome.ended_at!)).toBeGreaterThanOrEqual(Date.parse(started.outcome.started_at));
    expect(ended.outcome.elapsed_ms).toBeGreaterThanOrEqual(0);
    expect(ended.provenance).toEqual(started.provenance);

    // Once: a second finish leaves the record as the first wrote it.
    await recorder.finish({ status: 'failed', counts: {}, error: 'late' });
    expect(readRecord(file).outcome.status).toBe('ok');
  });

  it('never holds a secret: a registered key in a model spec, a setting or an error is redacted', async () => {
    const secret = 'plens-test-secret-8c1f0b2e';
    registerSecret(secret);
    const root = tempDir('plens-run-record-');
    const spec = modelSpecString(parseModelSpec(`openai:gpt-4o-mini?base_url=http://127.0.0.1:9/${secret}/v1&key_env=MY_KEY&temperature=0`));
    expect(spec).not.toContain(secret);
    const recorder = await RunRecorder.start(root, {
      run_id: 'r1',
      kind: 'stage',
      name: 'dialogues',
      spec: { ...SPEC, models: [{ role: 'assistant', spec: `openai:gpt-4o-mini?base_url=http://127.0.0.1:9/${secret}/v1` }], settings: { note: secret } },
    });
    await recorder.finish({ status: 'failed', counts: {}, error: `E_HTTP: 401 for key ${secret}` });
    const text = readFileSync(recorder.file, 'utf8');
    expect(text).not.toContain(secret);
    expect(text).toContain('[REDACTED]');
    const record = JSON.parse(text) as RunRecord;
    expect(record.spec.models[0]!.spec).toBe('openai:gpt-4o-mini?base_url=http://127.0.0.1:9/[REDACTED]/v1');
    expect(record.spec.settings).toEqual({ note: '[REDACTED]' });
    expect(record.outcome.error).toBe('E_HTTP: 401 for key [REDACTED]');
  });

  it('refuses a run id that is not a plain file name', async () => {
    await expect(RunRecorder.start(tempDir(), { run_id: '../x', kind: 'stage', name: 'judge', spec: SPEC })).rejects.toThrow(/plain file name/);
  });

  it('spells a model spec with every parameter it was given, and the key only by its variable name', () => {
    expect(modelSpecString(parseModelSpec('sim:default'))).toBe('sim:default');
    expect(modelSpecString(parseModelSpec('openai:gpt-4o?temperature=0&max_tokens=800&top_p=0.9&key_env=MY_KEY&price_in=1&price_out=2'))).toBe(
      'openai:gpt-4o?temperature=0&max_tokens=800&top_p=0.9&key_env=MY_KEY&price_in=1&price_out=2',
    );
    // Read back, it is the same spec.
    const odd = parseModelSpec('openai:m?base_url=http://127.0.0.1:8000/v1%3Fa%3D1%26b%3D2');
    expect(modelSpecString(odd)).toBe('openai:m?base_url=http://127.0.0.1:8000/v1?a=1%26b=2');
    expect(parseModelSpec(modelSpecString(odd))).toEqual(odd);
  });

  it('gives run ids that are unique, sortable by time and safe in a file name', () => {
    const a = newRunId(new Date('2025-01-02T03:04:05.678Z'));
    expect(a).toMatch(/^2025-01-02T03-04-05-678Z-[0-9a-f]{8}$/);
    expect(newRunId(new Date('2025-01-02T03:04:05.678Z'))).not.toBe(a);
  });

  it('hashes a prompt set with the folder it falls back on; null when none exists', async () => {
    const dir = tempDir();
    mkdirSync(join(dir, 'a'));
    writeFileSync(join(dir, 'a', 'judge.md'), 'one');
    writeFileSync(join(dir, 'b.jsonl'), '{}\n');
    const h = await hashSources([join(dir, 'a'), join(dir, 'b.jsonl')]);
    expect(h).toMatch(/^[0-9a-f]{64}$/);
    expect(await hashSources([join(dir, 'a'), join(dir, 'b.jsonl')])).toBe(h);
    writeFileSync(join(dir, 'a', 'judge.md'), 'two');
    expect(await hashSources([join(dir, 'a'), join(dir, 'b.jsonl')])).not.toBe(h);
    expect(await hashSources([join(dir, 'missing')])).toBeNull();
  });
});

describe('gitRevision reads the checkout without running git', () => {
  const sha = 'a'.repeat(40);
  const other = 'b'.repeat(40);

  it('follows HEAD to a loose ref, a packed ref, or takes a detached commit; null outside a checkout', () => {
    const root = tempDir();
    expect(gitRevision(root)).toBeNull();
    mkdirSync(join(root, '.git', 'refs', 'heads'), { recursive: true });
    writeFileSync(join(root, '.git', 'HEAD'), 'ref: refs/heads/main\n');
    // An unborn branch names no commit yet.
    expect(gitRevision(root)).toBeNull();
    writeFileSync(join(root, '.git', 'packed-refs'), `# pack-refs with: peeled fully-peeled sorted\n${other} refs/heads/main\n`);
    expect(gitRevision(root)).toBe(other);
    writeFileSync(join(root, '.git', 'refs', 'heads', 'main'), `${sha}\n`);
    expect(gitRevision(root)).toBe(sha);
    writeFileSync(join(root, '.git', 'HEAD'), `${other}\n`);
    expect(gitRevision(root)).toBe(other);
  });

  it('follows a worktree to its repository', () => {
    const root = tempDir();
    const repo = join(root, 'repo', '.git');
    mkdirSync(join(repo, 'refs', 'heads'), { recursive: true });
    mkdirSync(join(repo, 'worktrees', 'wt'), { recursive: true });
    writeFileSync(join(repo, 'refs', 'heads', 'feature'), `${sha}\n`);
    writeFileSync(join(repo, 'worktrees', 'wt', 'HEAD'), 'ref: refs/heads/feature\n');
    writeFileSync(join(repo, 'worktrees', 'wt', 'commondir'), '../..\n');
    mkdirSync(join(root, 'wt'));
    writeFileSync(join(root, 'wt', '.git'), `gitdir: ${join(repo, 'worktrees', 'wt')}\n`);
    expect(gitRevision(join(root, 'wt'))).toBe(sha);
  });
});

/** A stage of one call per question, on a local mock endpoint. */
interface Answer {
  key: string;
  try: number;
  status: 'ok' | 'failed' | 'parse_error';
  error: { kind: string; message: string } | null;
  value: string | null;
}
const COLUMNS: ColumnsOf<Answer> = { key: 'VARCHAR', try: 'INTEGER', status: 'VARCHAR', error: 'STRUCT(kind VARCHAR, message VARCHAR)', value: 'VARCHAR' };

let server: MockLlmServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function askStage(url: string, ws: Workspace, extra: Partial<LlmStageOptions> & { questions?: number; fail?: boolean } = {}) {
  const { questions = 3, fail, ...rest } = extra;
  const options = {
    workspace: ws,
    cache: 'on',
    concurrency: 2,
    signal: new AbortController().signal,
    env: { MOCK_KEY: 'sk-mock-key' },
    ...rest,
    topic: 'sums',
  };
  return LlmStageKit.with(options as LlmStageOptions, 'ask', 'run with --cache on', async (kit) => {
    const model = kit.client(parseModelSpec(`openai:tiny?base_url=${url}/v1&key_env=MOCK_KEY&price_in=1&price_out=2`), 'predictor');
    const partition = Partition.in(join(ws.root, 'answers'), partitionName([model.id], [model.id]), llmStageFormat('answers', COLUMNS));
    const summary = await runSingleCall<number, string>(kit, {
      stage: 'ask',
      items: async function* () {
        for (let i = 0; i < questions; i++) yield i;
      },
      keyOf: (i) => ({ key: hashParts(['ask', i]), partition }),
      client: () => model,
      at: () => ({ turn: null, role: 'ask' }),
      request: (i) => {
        if (fail && i === questions - 1) throw new PlensError('E_INPUT_SCHEMA', 'question broken');
        return {
          system: '',
          messages: [{ role: 'user', content: `question ${i}` }],
          params: { temperature: 0, maxTokens: 10 },
          purpose: 'ask',
          promptVersion: 'v1',
          replicate: 0,
        };
      },
      parse: (text) => ({ ok: true, value: text }),
      record: (_i, a) => ({ status: a.status, error: a.status === 'ok' ? null : a.error, value: a.status === 'ok' ? a.value : null }),
    });
    return { summary, runId: kit.runId };
  });
}

const recordsOf = (ws: Workspace): RunRecord[] =>
  existsSync(runsDir(ws.root)) ? readdirSync(runsDir(ws.root)).map((f) => readRecord(join(runsDir(ws.root), f))) : [];

describe('the LLM-stage kit writes a run record for every real stage run', () => {
  it('names the stage, its models by role, its limits and settings, the parent run, and how it ended', async () => {
    server = await startMockLlm({ reply: () => 'fine' });
    const ws = new Workspace(join(tempDir('plens-kit-record-'), 'out'));
    const { summary, runId } = await askStage(server.url, ws, { parentRunId: 'make-run-1', runRecord: { benchmark: 'test-bench' }, limit: 2 });
    expect(summary.ok).toBe(2);
    const [record, ...more] = recordsOf(ws);
    expect(more).toEqual([]);
    expect(record).toMatchObject({
      run_id: runId,
      kind: 'stage',
      name: 'ask',
      parent_run_id: 'make-run-1',
      spec: {
        benchmark: 'test-bench',
        models: [{ role: 'predictor', spec: `openai:tiny?base_url=${server.url}/v1&key_env=MOCK_KEY&price_in=1&price_out=2` }],
        prompts: null,
        limits: { concurrency: 2, cache: 'on', limit: 2, retry_failed: false, max_cost_usd: null },
        // The stage's own options; never the workspace, the signal or the environment.
        settings: { topic: 'sums' },
      },
      outcome: { status: 'ok', counts: { planned: 2, ok: 2, failed: 0, already_done: 0, calls: 2 }, error: null },
    });
    expect(record!.outcome.spend.by_role).toEqual({ ask: { calls: 2, cached_calls: 0, cost_usd: expect.any(Number) } });
    expect(JSON.stringify(record)).not.toContain('sk-mock-key');

    // Every call event of the run carries its run id.
    const events = readdirSync(join(ws.root, 'answers'), { recursive: true, encoding: 'utf8' })
      .filter((f) => /events.*\.jsonl$/.test(f))
      .flatMap((f) =>
        readFileSync(join(ws.root, 'answers', f), 'utf8')
          .trim()
          .split('\n'),
      )
      .map((line) => (JSON.parse(line) as { run_id: string }).run_id);
    expect(events).toEqual([runId, runId]);

    // A second run is a second record; a dry run writes none.
    await askStage(server.url, ws);
    await askStage(server.url, ws, { dryRun: true });
    const records = recordsOf(ws);
    expect(records).toHaveLength(2);
    expect(records.find((r) => r.run_id !== runId)!.outcome.counts).toMatchObject({ planned: 1, ok: 1, already_done: 2 });
  });

  it('records a run that stopped on an error as failed, and one stopped by a signal as interrupted', async () => {
    server = await startMockLlm({ reply: () => 'fine' });
    const ws = new Workspace(join(tempDir('plens-kit-record-'), 'out'));
    await expect(askStage(server.url, ws, { fail: true, concurrency: 1 })).rejects.toThrow(/question broken/);
    expect(recordsOf(ws)).toMatchObject([{ outcome: { status: 'failed', error: 'E_INPUT_SCHEMA: question broken' } }]);

    const ws2 = new Workspace(join(tempDir('plens-kit-record-'), 'out'));
    const stop = new AbortController();
    stop.abort();
    await askStage(server.url, ws2, { signal: stop.signal });
    expect(recordsOf(ws2)).toMatchObject([{ outcome: { status: 'interrupted' } }]);
  });
});
