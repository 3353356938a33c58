/**
 * Amazon Bedrock batch inference (model invocation jobs): the requests are written as one JSONL
 * object to S3 (`{"recordId", "modelInput"}`, the model's native InvokeModel body), a job is
 * created on it (CreateModelInvocationJob, run as the user's IAM service role), polled
 * (GetModelInvocationJob), and its answers read from `<input file>.out` under the output prefix
 * (`<prefix>/output/<job id>/`). The S3 and control-plane clients are the AWS SDK's, with the
 * settings of the Converse provider (credential chain, region, no SDK retries); an S3-compatible
 * store (path-style) and a control-plane endpoint can be named in the spec. Only Anthropic Claude
 * models are batched: plens builds their native body (the Messages API) and reads their answers
 * with the Anthropic provider's code.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { BedrockClient, GetModelInvocationJobCommandOutput, ModelInvocationJobSummary } from '@aws-sdk/client-bedrock';
import type { S3Client } from '@aws-sdk/client-s3';
import { PlensError } from '../core/errors.js';
import { readAnthropicReply } from './anthropic.js';
import type { BatchApi, BatchInit, BatchLine, BatchResult, BatchState, BatchStatus } from './batch.js';
import { summariseBody } from './http.js';
import { awsClientSettings, bedrockError } from './bedrock.js';
import { BEDROCK_MIN_RECORDS, bedrockModelId } from './bedrock-models.js';
import { LlmCallError } from './errors.js';
import type { ChatRequest } from './types.js';

/** The Messages API version Bedrock's Claude models take in an InvokeModel body. */
export const BEDROCK_ANTHROPIC_VERSION = 'bedrock-2023-05-31';

/** The native InvokeModel body of a Claude model on Bedrock: the Messages API without `model`, with Bedrock's version. */
export function bedrockClaudeBody(request: ChatRequest): Record<string, unknown> {
  return {
    anthropic_version: BEDROCK_ANTHROPIC_VERSION,
    // As the Converse provider sends it: an empty system prompt is no system prompt.
    ...(request.system ? { system: request.system } : {}),
    messages: request.messages,
    temperature: request.params.temperature,
    max_tokens: request.params.maxTokens,
    ...(request.params.topP !== undefined ? { top_p: request.params.topP } : {}),
  };
}

type Job = Pick<
  GetModelInvocationJobCommandOutput,
  'jobArn' | 'status' | 'message' | 'inputDataConfig' | 'outputDataConfig' | 'totalRecordCount' | 'successRecordCount' | 'errorRecordCount'
>;

interface Clients {
  s3: S3Client;
  bedrock: BedrockClient;
  s3sdk: typeof import('@aws-sdk/client-s3');
  bsdk: typeof import('@aws-sdk/client-bedrock');
}

interface OutputLine {
  recordId?: string;
  modelOutput?: unknown;
  error?: { errorCode?: number | string; errorMessage?: string } | string;
}

export class BedrockBatchApi implements BatchApi {
  readonly minItems: number;
  private readonly modelId: string;
  private readonly bucket: string;
  /** '' or 'some/prefix/'. */
  private readonly prefix: string;
  private clients: Promise<Clients> | undefined;

  constructor(private readonly init: BatchInit) {
    if (!init.sdk) throw new PlensError('E_INTERNAL', `a Bedrock batch API for ${init.model} was made without its S3 settings`);
    this.modelId = bedrockModelId(init.model);
    this.minItems = init.sdk.minRecords ?? BEDROCK_MIN_RECORDS;
    const m = /^s3:\/\/([^/]+)\/?(.*)$/.exec(init.sdk.bucket)!;
    this.bucket = m[1]!;
    this.prefix = m[2] ? `${m[2].replace(/\/+$/, '')}/` : '';
  }

  /** Writes the records to S3; the staged token is the input's S3 URI (the job is found by it after a crash). */
  async stage(lines: BatchLine[], signal: AbortSignal): Promise<string> {
    const name = `plens-${Date.now().toString(36)}-${randomBytes(4).toString('hex')}`;
    const key = `${this.prefix}input/${name}.jsonl`;
    const body = lines.map((l) => JSON.stringify({ recordId: l.id, modelInput: bedrockClaudeBody(l.request) })).join('\n');
    const { s3, s3sdk } = await this.connect();
    await this.call(
      () =>
        s3.send(new s3sdk.PutObjectCommand({ Bucket: this.bucket, Key: key, Body: `${body}\n`, ContentType: 'application/jsonl' }), { abortSignal: signal }),
      signal,
    );
    return `s3://${this.bucket}/${key}`;
  }

  async submit(staged: string, signal: AbortSignal): Promise<BatchState> {
    const { bedrock, bsdk } = await this.connect();
    const out = await this.call(
      () =>
        bedrock.send(
          new bsdk.CreateModelInvocationJobCommand({
            jobName: jobNameOf(staged),
            roleArn: this.init.sdk!.roleArn,
            modelId: this.modelId,
            inputDataConfig: { s3InputDataConfig: { s3Uri: staged, s3InputFormat: 'JSONL' } },
            outputDataConfig: { s3OutputDataConfig: { s3Uri: this.outputUri() } },
            // The same input gives the same token: Bedrock makes no second job for a repeated create (idempotency).
            clientRequestToken: createHash('sha256').update(staged).digest('hex').slice(0, 64),
          }),
          { abortSignal: signal },
        ),
      signal,
    );
    if (!out.jobArn) throw new LlmCallError('bad_response', `Bedrock ${this.modelId}: CreateModelInvocationJob answered without a jobArn`, { retryable: true });
    return { batchId: out.jobArn, status: 'validating' };
  }

  /** The job made from this input by a run killed before recording it: listed by its name, matched on its input URI. */
  async recover(staged: string, known: ReadonlySet<string>, signal: AbortSignal): Promise<BatchState | undefined> {
    const { bedrock, bsdk } = await this.connect();
    const fits: ModelInvocationJobSummary[] = [];
    let nextToken: string | undefined;
    for (let page = 0; page < 20; page++) {
      const out = await this.call(
        () =>
          bedrock.send(new bsdk.ListModelInvocationJobsCommand({ nameContains: jobNameOf(staged), maxResults: 100, ...(nextToken ? { nextToken } : {}) }), {
            abortSignal: signal,
          }),
        signal,
      );
      for (const j of out.invocationJobSummaries ?? [])
        if (j.jobArn && !known.has(j.jobArn) && j.inputDataConfig?.s3InputDataConfig?.s3Uri === staged) fits.push(j);
      nextToken = out.nextToken;
      if (!nextToken) break;
    }
    return fits.length === 1 ? stateOf(fits[0]!) : undefined;
  }

  async status(batchId: string, signal: AbortSignal): Promise<BatchState> {
    const { bedrock, bsdk } = await this.connect();
    return stateOf(await this.call(() => bedrock.send(new bsdk.GetModelInvocationJobCommand({ jobIdentifier: batchId }), { abortSignal: signal }), signal));
  }

  async cancel(batchId: string, signal: AbortSignal): Promise<BatchState> {
    const { bedrock, bsdk } = await this.connect();
    await this.call(() => bedrock.send(new bsdk.StopModelInvocationJobCommand({ jobIdentifier: batchId }), { abortSignal: signal }), signal);
    return this.status(batchId, signal);
  }

  /** The job's output file: an answer or an error per record it reached; none at all when it wrote nothing (failed before running). */
  async results(state: BatchState, signal: AbortSignal): Promise<BatchResult[]> {
    if (!state.outputFileId) return [];
    const m = /^s3:\/\/([^/]+)\/(.+)$/.exec(state.outputFileId);
    if (!m) return [];
    const { s3, s3sdk } = await this.connect();
    let text: string;
    try {
      const out = await s3.send(new s3sdk.GetObjectCommand({ Bucket: m[1]!, Key: m[2]! }), { abortSignal: signal });
      text = (await out.Body?.transformToString('utf8')) ?? '';
    } catch (error) {
      const e = error as { name?: string; $metadata?: { httpStatusCode?: number } };
      if (e.name === 'NoSuchKey' || e.$metadata?.httpStatusCode === 404) return [];
      throw bedrockError(error, this.modelId, signal);
    }
    return text
      .split('\n')
      .filter((l) => l.trim())
      .map(resultOf);
  }

  private outputUri(): string {
    return `s3://${this.bucket}/${this.prefix}output/`;
  }

  private async call<T>(send: () => Promise<T>, signal: AbortSignal): Promise<T> {
    try {
      return await send();
    } catch (error) {
      throw bedrockError(error, this.modelId, signal);
    }
  }

  private connect(): Promise<Clients> {
    this.clients ??= (async () => {
      const sdk = this.init.sdk!;
      const [s3sdk, bsdk] = await Promise.all([import('@aws-sdk/client-s3'), import('@aws-sdk/client-bedrock')]);
      const settings = { model: this.init.model, env: sdk.env, connections: 4, ...(sdk.region ? { region: sdk.region } : {}) };
      const s3 = new s3sdk.S3Client({
        ...(await awsClientSettings(settings)),
        // An S3-compatible store (MinIO, a local mock) is addressed path-style: http://host:port/bucket/key.
        ...(sdk.s3Endpoint ? { endpoint: sdk.s3Endpoint, forcePathStyle: true } : {}),
        // Checksums only where S3 requires them: S3-compatible stores differ in the flexible ones.
        requestChecksumCalculation: 'WHEN_REQUIRED',
        responseChecksumValidation: 'WHEN_REQUIRED',
      });
      const bedrock = new bsdk.BedrockClient({
        ...(await awsClientSettings(settings)),
        ...(sdk.controlEndpoint ? { endpoint: sdk.controlEndpoint } : {}),
      });
      return { s3, bedrock, s3sdk, bsdk };
    })();
    return this.clients;
  }
}

/** A job's name from its input (plens-<time>-<random>): at most 63 characters, letters, digits and dashes. */
function jobNameOf(staged: string): string {
  return (staged.split('/').pop() ?? staged).replace(/\.jsonl$/, '').slice(0, 63);
}

const STATUSES: Readonly<Record<string, BatchStatus>> = {
  Submitted: 'validating',
  Validating: 'validating',
  Scheduled: 'validating',
  InProgress: 'in_progress',
  Completed: 'completed',
  PartiallyCompleted: 'completed',
  Failed: 'failed',
  Stopping: 'cancelling',
  Stopped: 'cancelled',
  Expired: 'expired',
};

/** A job as the neutral state; an ended job's output file is `<output prefix><job id>/<input file name>.out`. */
function stateOf(job: Job): BatchState {
  const status = STATUSES[job.status ?? ''];
  if (!job.jobArn || !status)
    throw new LlmCallError('bad_response', `a Bedrock model invocation job without jobArn or a known status (${String(job.status)})`, { retryable: true });
  const input = job.inputDataConfig?.s3InputDataConfig?.s3Uri;
  const output = job.outputDataConfig?.s3OutputDataConfig?.s3Uri;
  const ended = status === 'completed' || status === 'failed' || status === 'cancelled' || status === 'expired';
  const jobId = job.jobArn.split('/').pop()!;
  const total = job.totalRecordCount;
  return {
    batchId: job.jobArn,
    status,
    ...(ended && input && output ? { outputFileId: `${output.replace(/\/*$/, '/')}${jobId}/${input.split('/').pop()}.out` } : {}),
    ...(total !== undefined ? { counts: { total, completed: job.successRecordCount ?? 0, failed: job.errorRecordCount ?? 0 } } : {}),
  };
}

function resultOf(line: string): BatchResult {
  let l: OutputLine;
  try {
    l = JSON.parse(line) as OutputLine;
  } catch {
    return { id: '', ok: false, kind: 'bad_response', message: `a batch output line is not JSON: ${summariseBody(line)}` };
  }
  const id = typeof l.recordId === 'string' ? l.recordId : '';
  if (l.error !== undefined) {
    const e = typeof l.error === 'string' ? { errorMessage: l.error } : l.error;
    return { id, ok: false, kind: 'batch_errored', message: summariseBody(`${e.errorCode ?? ''} ${e.errorMessage ?? 'errored'}`.trim()) };
  }
  try {
    return { id, ok: true, response: readAnthropicReply(l.modelOutput) };
  } catch (error) {
    return { id, ok: false, kind: 'bad_response', message: (error as Error).message };
  }
}
