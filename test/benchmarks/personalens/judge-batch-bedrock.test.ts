import type { ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startMockBedrockBatch, type MockBedrockBatchServer, type MockBedrockJobPlan, type MockClaudeBody } from '../../../src/testkit/mock-bedrock-batch.js';
import { runCli, runCliJson } from '../../helpers/cli.js';
import { startMockBedrock, type MockBedrockServer, isolatedAwsEnv } from '../../helpers/mock-bedrock.js';
import { judgePartition, judgeReply, judgmentRecordLines, keepStagedOnly, logLines, spawnCli, waitFor } from '../../helpers/batch.js';
import type { JudgeSummary } from '../../../src/benchmarks/personalens/judge-stage.js';
import { simDialoguesWorkspace } from '../../helpers/workspace.js';

/*
 * `plens judge --batch` with a Bedrock model: batch inference through an S3-compatible store and
 * the Bedrock control plane, both mocks on 127.0.0.1 (src/testkit/mock-bedrock-batch.ts), the
 * requests signed by the AWS SDK with fake keys. Nothing reaches AWS.
 */
const CREDS = { accessKeyId: 'AKIAPLENSBATCHTEST01', secretAccessKey: 'plensBatchSecret/abcdefghijklmnopqrstuvwxyz012' };
const ENV = isolatedAwsEnv(CREDS, 'us-west-2');
const ROLE = 'arn:aws:iam::123456789012:role/PlensBatch';
// claude-3-sonnet-v1's listed on-demand price (USD per 1M tokens).
const PRICE_IN = 3;
const PRICE_OUT = 15;

let mock: MockBedrockBatchServer | undefined;
let converse: MockBedrockServer | undefined;
let child: ChildProcess | undefined;
afterEach(async () => {
  child?.kill('SIGKILL');
  child = undefined;
  await mock?.close();
  await converse?.close();
  mock = undefined;
  converse = undefined;
});

const events = (dir: string) => logLines(dir, 'events.jsonl');
const recordLines = judgmentRecordLines;
/** Starts the CLI as its own process (a user's run, to be killed); the test's afterEach kills what is left. */
function start(args: string[]): Promise<number | null> {
  const run = spawnCli(args, ENV);
  child = run.child;
  return run.exit;
}

// What `plens judge --json` prints.
type Summary = JudgeSummary;

/** Dialogues of users 0-1 (49) judged on task completion: 49 requests, against the mocks (a minimum of 10 records a job unless told). */
async function setup(plan: (n: number) => MockBedrockJobPlan = () => ({}), minRecords = 10): Promise<{ ws: string; args: string[] }> {
  mock = await startMockBedrockBatch({ plan, minRecords, reply: (b: MockClaudeBody) => judgeReply(b) });
  converse = await startMockBedrock({
    credentials: CREDS,
    reply: (r) => judgeReply({ messages: r.body.messages.map((m) => ({ content: m.content[0]!.text })) }),
  });
  const ws = await simDialoguesWorkspace();
  const params = new URLSearchParams({
    base_url: converse.url,
    batch_bucket: 's3://plens-batches/judge',
    batch_role_arn: ROLE,
    s3_endpoint: mock.s3Url,
    bedrock_endpoint: mock.bedrockUrl,
    ...(minRecords === 100 ? {} : { batch_min_records: String(minRecords) }),
  });
  const judge = `bedrock:claude-3-sonnet-v1?${params.toString()}`;
  return { ws, args: ['judge', '-w', ws, '--judge', judge, '--dimensions', 'task_completion', '--retry-delay-ms', '5', '--batch', '--poll-interval', '0.01'] };
}

describe('plens judge --batch with a Bedrock model (batch inference through S3)', () => {
  it('stages the records in S3, creates one job, polls it, records every answer at half price; a rerun submits nothing', async () => {
    const { args } = await setup(() => ({ polls: 2 }));
    const first = await runCliJson<Summary>(args, { env: ENV });
    expect(first.code, first.stderr).toBe(0);
    // Two of the 49 prompts are identical: the job carries 48 records, and the 49th key takes its twin's answer free.
    expect(first.json).toMatchObject({ planned: 49, ok: 49, failed: 0, calls: 49, cached_calls: 1 });
    expect(first.json.batch).toMatchObject({ submitted: 1, collected: 1, pending: 0, items_submitted: 48, items_answered: 49, fallback_online: 0 });
    expect(mock!.submissions).toBe(1);
    expect(mock!.unsigned).toBe(0);
    // Nothing online: every answer came from the job's output file.
    expect(converse!.requests).toHaveLength(0);

    // The job: the model's Bedrock id, the role, the input under the prefix; its records are Claude's native body.
    const [job] = mock!.jobs();
    expect(job).toMatchObject({ modelId: 'anthropic.claude-3-sonnet-20240229-v1:0', roleArn: ROLE, records: 48, status: 'Completed' });
    expect(job!.inputUri).toMatch(/^s3:\/\/plens-batches\/judge\/input\/plens-[\w-]+\.jsonl$/);
    expect(mock!.records).toHaveLength(48);
    for (const r of mock!.records) {
      expect(r.body).toMatchObject({ anthropic_version: 'bedrock-2023-05-31', temperature: 0, max_tokens: 4000 });
      expect(r.body.system).toBeUndefined();
      expect(r.body.messages[0]!.role).toBe('user');
    }
    const jobId = job!.jobArn.split('/').pop()!;
    const name = job!.inputUri.split('/').pop()!;
    expect(mock!.objects.has(`plens-batches/judge/output/${jobId}/${name}.out`)).toBe(true);

    // Each call at half the online price of its tokens.
    const calls = await events(first.json.dir);
    expect(calls).toHaveLength(49);
    let total = 0;
    for (const e of calls) {
      expect(e).toMatchObject({ status: 'ok', latency_ms: null });
      const online = ((e['input_tokens'] as number) * PRICE_IN + (e['output_tokens'] as number) * PRICE_OUT) / 1e6;
      expect(online).toBeGreaterThan(0);
      expect(e['cost_usd'] as number).toBeCloseTo(e['cached'] ? 0 : online * 0.5, 12);
      total += e['cost_usd'] as number;
    }
    expect(first.json.batch!.cost_usd).toBeCloseTo(total, 9);
    // No secret in anything written.
    expect(readFileSync(join(first.json.dir, 'batches.jsonl'), 'utf8')).not.toContain(CREDS.secretAccessKey);
    expect(first.stderr).not.toContain(CREDS.secretAccessKey);

    const again = await runCliJson<Summary>(args, { env: ENV });
    expect(again.json).toMatchObject({ planned: 0, already_done: 49, calls: 0 });
    expect(mock!.submissions).toBe(1);
  });

  it('SIGKILL while polling, then a rerun: nothing is submitted again, the job is collected', async () => {
    const { ws, args } = await setup(() => ({ hold: true }));
    const exit = start(args);
    await waitFor('a created job polled twice', () => mock!.submissions === 1 && (mock!.jobs()[0]?.polls ?? 0) >= 2);
    child!.kill('SIGKILL');
    expect(await exit).toBe(-1);
    child = undefined;
    expect(recordLines(ws)).toBe(0);
    mock!.release();
    const r = await runCliJson<Summary>(args, { env: ENV });
    expect(r.code, r.stderr).toBe(0);
    expect(r.json).toMatchObject({ planned: 49, ok: 49, failed: 0 });
    expect(r.json.batch).toMatchObject({ submitted: 0, resumed: 1, collected: 1, items_answered: 49 });
    expect(mock!.submissions).toBe(1);
    expect(mock!.uploads).toBe(1);
    expect(converse!.requests).toHaveLength(0);
  });

  it('a kill between creating the job and recording it: the rerun finds the job by its input and submits nothing', async () => {
    const { ws, args } = await setup(() => ({ hold: true }));
    const exit = start(args);
    await waitFor('a created job polled', () => (mock!.jobs()[0]?.polls ?? 0) >= 1);
    child!.kill('SIGKILL');
    await exit;
    child = undefined;
    // As if the kill had come right after the create: the ledger has only the staging.
    expect(keepStagedOnly(ws)).toHaveLength(1);
    mock!.release();
    const r = await runCliJson<Summary>(args, { env: ENV });
    expect(r.code, r.stderr).toBe(0);
    expect(r.json).toMatchObject({ planned: 49, ok: 49 });
    expect(r.json.batch).toMatchObject({ submitted: 0, resumed: 1, items_answered: 49 });
    // Found by listing the jobs (its input URI), the job the first run made; nothing created again.
    expect(mock!.lists).toBe(1);
    expect(mock!.submissions).toBe(1);
    expect(mock!.jobs()).toHaveLength(1);
    const submitted = readFileSync(join(judgePartition(ws), 'batches.jsonl'), 'utf8')
      .split('\n')
      .filter((l) => l.includes('"type":"submitted"'));
    expect(submitted).toHaveLength(1);
    expect(submitted[0]).toContain(mock!.jobs()[0]!.jobArn);
    expect(converse!.requests).toHaveLength(0);
  });

  it('an expired job: its answers are recorded, the records it never reached are called online (Converse)', async () => {
    const { args } = await setup(() => ({ end: 'Expired', answered: (_id, i) => i % 2 === 0 }));
    const r = await runCliJson<Summary>(args, { env: ENV });
    expect(r.code, r.stderr).toBe(0);
    expect(r.json).toMatchObject({ planned: 49, ok: 49, failed: 0 });
    // Half of the job's 48 records were answered; the 49th key follows its twin.
    const b = r.json.batch!;
    expect(b).toMatchObject({ submitted: 1, items_submitted: 48 });
    expect(b.items_answered).toBeGreaterThanOrEqual(24);
    expect(b.items_answered + b.fallback_online).toBe(49);
    expect(converse!.requests.length).toBeLessThanOrEqual(b.fallback_online);
    expect(converse!.requests.every((q) => q.signatureValid)).toBe(true);
  });

  it("fewer records than Bedrock's minimum (100): no job is made, they are judged online at the full price", async () => {
    const { args } = await setup(() => ({}), 100);
    const r = await runCliJson<Summary>(args, { env: ENV });
    expect(r.code, r.stderr).toBe(0);
    expect(r.json).toMatchObject({ planned: 49, ok: 49, failed: 0 });
    expect(r.json.batch).toMatchObject({ submitted: 0, items_submitted: 0, fallback_online: 49 });
    expect(mock!.submissions).toBe(0);
    expect(mock!.uploads).toBe(0);
    expect(converse!.requests.length + r.json.cached_calls).toBe(49);
    // Online calls: their own latency, the full price.
    for (const e of await events(r.json.dir)) {
      expect(e['latency_ms']).not.toBeNull();
      const online = ((e['input_tokens'] as number) * PRICE_IN + (e['output_tokens'] as number) * PRICE_OUT) / 1e6;
      expect(e['cost_usd'] as number).toBeCloseTo(e['cached'] ? 0 : online, 12);
    }
  });

  it('without batch_bucket and batch_role_arn, --batch is refused naming both parameters (exit 2), a dry run included', async () => {
    const ws = await simDialoguesWorkspace();
    const base = ['judge', '-w', ws, '--dimensions', 'task_completion', '--batch'];
    const none = await runCli([...base, '--judge', 'bedrock:claude-3-sonnet-v1', '--dry-run'], { env: ENV });
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('--batch is not available for bedrock:claude-3-sonnet-v1');
    expect(none.stderr).toContain('S3');
    expect(none.stderr).toContain('batch_bucket=s3://BUCKET/PREFIX');
    expect(none.stderr).toContain('batch_role_arn=arn:aws:iam::ACCOUNT:role/ROLE');
    const noRole = await runCli([...base, '--judge', 'bedrock:claude-3-sonnet-v1?batch_bucket=s3://my-bucket/p'], { env: ENV });
    expect(noRole.code).toBe(2);
    expect(noRole.stderr).toContain('batch_role_arn=');
    expect(noRole.stderr).not.toContain('batch_bucket=s3://BUCKET');
    // A model whose native body plens does not build: refused, saying so.
    const llama = await runCli([...base, '--judge', `bedrock:llama-3-1-70b-instruct-v1?batch_bucket=s3://my-bucket/p&batch_role_arn=${ROLE}`, '--dry-run'], {
      env: ENV,
    });
    expect(llama.code).toBe(2);
    expect(llama.stderr).toContain('Anthropic Claude models only');
    // Malformed settings, and Bedrock's parameters on another provider.
    expect((await runCli([...base, '--judge', 'bedrock:claude-3-sonnet-v1?batch_bucket=my-bucket', '--dry-run'])).stderr).toContain(
      'batch_bucket must be an S3 location',
    );
    expect((await runCli([...base, '--judge', 'openai:gpt-4o?batch_bucket=s3://my-bucket/p', '--dry-run'])).stderr).toContain(
      'batch_bucket is a bedrock parameter',
    );
    expect(existsSync(join(ws, 'judgments'))).toBe(false);
  });

  it('--dry-run --batch with no credentials shows the batch price: half the online one, or the online one below the minimum', async () => {
    const ws = await simDialoguesWorkspace();
    const noCreds = { ...ENV, AWS_ACCESS_KEY_ID: '', AWS_SECRET_ACCESS_KEY: '', AWS_REGION: '' };
    const judge = `bedrock:claude-3-sonnet-v1?batch_bucket=s3://plens-batches/judge&batch_role_arn=${ROLE}`;
    const base = ['judge', '-w', ws, '--dimensions', 'task_completion', '--dry-run', '--batch'];
    const plan = await runCliJson<Summary>([...base, '--judge', `${judge}&batch_min_records=10`], { env: noCreds });
    expect(plan.code, plan.stderr).toBe(0);
    expect(plan.json.planned).toBe(49);
    expect(plan.json.estimate!.costUsd).toBeGreaterThan(0);
    expect(plan.json.batch!.estimate_cost_usd).toBeCloseTo(plan.json.estimate!.costUsd * 0.5, 12);
    // 49 requests, fewer than Bedrock's 100 a job: the plan says they go online, at the online price.
    const few = await runCliJson<Summary & { batch: { min_items?: number } }>([...base, '--judge', judge], { env: noCreds });
    expect(few.json.batch.min_items).toBe(100);
    expect(few.json.batch.estimate_cost_usd).toBeCloseTo(few.json.estimate!.costUsd, 12);
    const text = await runCli([...base, '--judge', judge], { env: noCreds });
    expect(text.stdout).toMatch(/batch +49 requests, fewer than the 100 a batch needs: called online at ~\$\d+\.\d\d/);
    expect(existsSync(join(ws, 'judgments'))).toBe(false);
  });
});
