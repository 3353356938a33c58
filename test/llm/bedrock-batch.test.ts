import { afterEach, describe, expect, it } from 'vitest';
import type { BatchLine } from '../../src/llm/batch.js';
import { BedrockBatchApi } from '../../src/llm/bedrock-batch.js';
import { startMockBedrockBatch, type MockBedrockBatchServer, type MockBedrockJobPlan } from '../../src/testkit/mock-bedrock-batch.js';

/* The Bedrock batch API (S3 + model invocation jobs) through the AWS SDK against the mock store and control plane. */
const ENV = {
  AWS_PROFILE: '',
  AWS_EC2_METADATA_DISABLED: 'true',
  AWS_CONFIG_FILE: '/nonexistent/plens-config',
  AWS_SHARED_CREDENTIALS_FILE: '/nonexistent/plens-credentials',
  AWS_ACCESS_KEY_ID: 'AKIAPLENSBATCHUNIT01',
  AWS_SECRET_ACCESS_KEY: 'plensBatchUnitSecret/abcdefghijklmnopqrstuvw',
};
const ROLE = 'arn:aws:iam::123456789012:role/PlensBatch';

let mock: MockBedrockBatchServer | undefined;
afterEach(async () => {
  await mock?.close();
  mock = undefined;
});

async function api(plan: (n: number) => MockBedrockJobPlan, minRecords = 2): Promise<BedrockBatchApi> {
  mock = await startMockBedrockBatch({ plan, minRecords, reply: (b) => `answer to ${b.messages[0]!.content}` });
  return new BedrockBatchApi({
    model: 'claude-3-5-haiku-v1',
    baseUrl: mock.bedrockUrl,
    apiKey: undefined,
    timeoutMs: 10_000,
    sdk: { region: 'us-west-2', env: ENV, bucket: 's3://plens-b/runs/', roleArn: ROLE, s3Endpoint: mock.s3Url, controlEndpoint: mock.bedrockUrl },
  });
}

const lines = (n: number): BatchLine[] =>
  Array.from({ length: n }, (_, i) => ({
    id: `key-${i}`,
    request: { system: i === 0 ? 'Be brief.' : '', messages: [{ role: 'user' as const, content: `q${i}` }], params: { temperature: 0, maxTokens: 50 } },
  }));

describe('BedrockBatchApi', () => {
  it('stage writes the records to S3; submit is idempotent for one input; a completed job reads back every answer with its usage', async () => {
    const b = await api(() => ({ polls: 1, itemError: (_id, i) => i === 2 }));
    expect(b.minItems).toBe(100);
    const staged = await b.stage(lines(4), AbortSignal.timeout(10_000));
    expect(staged).toMatch(/^s3:\/\/plens-b\/runs\/input\/plens-[\w-]+\.jsonl$/);
    expect(mock!.records).toHaveLength(0);
    const first = await b.submit(staged, AbortSignal.timeout(10_000));
    // A repeated create with the same input (the same client token) is the same job, not a second one.
    const second = await b.submit(staged, AbortSignal.timeout(10_000));
    expect(second.batchId).toBe(first.batchId);
    expect(mock!.submissions).toBe(1);
    expect(mock!.jobs()[0]).toMatchObject({ modelId: 'us.anthropic.claude-3-5-haiku-20241022-v1:0', roleArn: ROLE });
    expect(mock!.records[0]!.body).toEqual({
      anthropic_version: 'bedrock-2023-05-31',
      system: 'Be brief.',
      messages: [{ role: 'user', content: 'q0' }],
      temperature: 0,
      max_tokens: 50,
    });
    expect(mock!.records[1]!.body.system).toBeUndefined();

    expect((await b.status(first.batchId, AbortSignal.timeout(10_000))).status).toBe('in_progress');
    const done = await b.status(first.batchId, AbortSignal.timeout(10_000));
    expect(done).toMatchObject({ status: 'completed', counts: { total: 4, completed: 3, failed: 1 } });
    expect(done.outputFileId).toBe(`s3://plens-b/runs/output/${first.batchId.split('/').pop()}/${staged.split('/').pop()}.out`);
    const results = await b.results(done, AbortSignal.timeout(10_000));
    expect(results.map((r) => [r.id, r.ok])).toEqual([
      ['key-0', true],
      ['key-1', true],
      ['key-2', false],
      ['key-3', true],
    ]);
    const r0 = results[0]!;
    expect(r0.ok && r0.response.text).toBe('answer to q0');
    expect(r0.ok && r0.response.usage.outputTokens).toBeGreaterThan(0);
    expect(results[2]).toMatchObject({ ok: false, kind: 'batch_errored' });
    expect(mock!.unsigned).toBe(0);

    // The store lists what is under a prefix (ListObjectsV2, path-style), as S3 does: the input, the output and its manifest.
    const { S3Client, ListObjectsV2Command } = await import('@aws-sdk/client-s3');
    const s3 = new S3Client({
      endpoint: mock!.s3Url,
      forcePathStyle: true,
      region: 'us-west-2',
      credentials: { accessKeyId: ENV.AWS_ACCESS_KEY_ID, secretAccessKey: ENV.AWS_SECRET_ACCESS_KEY },
      maxAttempts: 1,
    });
    const listed = await s3.send(new ListObjectsV2Command({ Bucket: 'plens-b', Prefix: 'runs/' }));
    expect((listed.Contents ?? []).map((c) => c.Key).sort()).toEqual(
      [staged, done.outputFileId!, done.outputFileId!.replace(/[^/]+$/, 'manifest.json.out')].map((u) => u.replace('s3://plens-b/', '')).sort(),
    );
    s3.destroy();
  });

  it('the mock refuses a request without a SigV4 Authorization header', async () => {
    mock = await startMockBedrockBatch();
    const res = await fetch(`${mock.s3Url}/plens-b/x`, { method: 'PUT', body: 'x' });
    expect(res.status).toBe(403);
    expect(await res.text()).toContain('AccessDenied');
    expect((await fetch(`${mock.bedrockUrl}/model-invocation-jobs`)).status).toBe(403);
    expect(mock.unsigned).toBe(2);
    expect(mock.uploads).toBe(0);
  });

  it('recover finds the job made from a staged input unless a ledger holds it; cancel stops a job (StopModelInvocationJob)', async () => {
    const b = await api(() => ({ hold: true, answered: (_id, i) => i === 0 }));
    const staged = await b.stage(lines(3), AbortSignal.timeout(10_000));
    const other = await b.stage(lines(3), AbortSignal.timeout(10_000));
    expect(await b.recover(staged, new Set(), AbortSignal.timeout(10_000))).toBeUndefined();
    const made = await b.submit(staged, AbortSignal.timeout(10_000));
    await b.submit(other, AbortSignal.timeout(10_000));
    expect((await b.recover(staged, new Set(), AbortSignal.timeout(10_000)))?.batchId).toBe(made.batchId);
    expect(await b.recover(staged, new Set([made.batchId]), AbortSignal.timeout(10_000))).toBeUndefined();

    const stopping = await b.cancel(made.batchId, AbortSignal.timeout(10_000));
    expect(['cancelling', 'cancelled']).toContain(stopping.status);
    const stopped = await b.status(made.batchId, AbortSignal.timeout(10_000));
    expect(stopped.status).toBe('cancelled');
    const results = await b.results(stopped, AbortSignal.timeout(10_000));
    expect(results.map((r) => r.id)).toEqual(['key-0']);
  });

  it('a job that fails validation (fewer records than the minimum) has no output: no results, no error', async () => {
    const b = await api(() => ({}), 100);
    const made = await b.submit(await b.stage(lines(3), AbortSignal.timeout(10_000)), AbortSignal.timeout(10_000));
    const failed = await b.status(made.batchId, AbortSignal.timeout(10_000));
    expect(failed.status).toBe('failed');
    expect(await b.results(failed, AbortSignal.timeout(10_000))).toEqual([]);
  });

  it('without a region the error says where to set one', async () => {
    mock = await startMockBedrockBatch();
    const b = new BedrockBatchApi({
      model: 'claude-3-sonnet-v1',
      baseUrl: '',
      apiKey: undefined,
      timeoutMs: 10_000,
      sdk: {
        env: { ...ENV, AWS_REGION: '', AWS_DEFAULT_REGION: '' },
        bucket: 's3://plens-b',
        roleArn: ROLE,
        s3Endpoint: mock.s3Url,
        controlEndpoint: mock.bedrockUrl,
      },
    });
    await expect(b.stage(lines(1), AbortSignal.timeout(10_000))).rejects.toMatchObject({ kind: 'config', message: expect.stringContaining('AWS_REGION') });
    expect(mock.uploads).toBe(0);
  });
});
