/**
 * Amazon Bedrock batch inference on 127.0.0.1 (real HTTP, node:http), for tests and demos: a
 * minimal S3-compatible store (path-style PutObject, GetObject, ListObjectsV2) and the Bedrock
 * control plane's model-invocation-job routes (create, get, list, stop), as the AWS SDK sends them
 * (the REST paths and JSON shapes of @aws-sdk/client-bedrock's serializers). Every request must
 * carry a SigV4 Authorization header (AWS4-HMAC-SHA256, for the right service); the signature itself
 * is not checked here (the Converse mock checks it). A job reads its input from the store, follows
 * its plan (polls before it ends, hold, how it ends) and writes `<input>.out` to the output prefix,
 * each record answered with the reply function as a Claude Messages body. It counts submissions.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface MockBedrockJobPlan {
  /** Status checks that see the job in progress before it ends (default 1). */
  polls?: number;
  /** Stay in progress until the test calls release(). */
  hold?: boolean;
  /** How it ends (default Completed). */
  end?: 'Completed' | 'PartiallyCompleted' | 'Expired' | 'Failed' | 'Stopped';
  /** For a job that does not complete: the records answered before it ended (default none). */
  answered?: (recordId: string, index: number) => boolean;
  /** A record's own error (its output line has `error` instead of `modelOutput`). */
  itemError?: (recordId: string, index: number) => boolean;
}

export interface MockBedrockBatchOptions {
  /** The plan of the n-th job created (0-based); default: completed after one status check. */
  plan?: (jobIndex: number) => MockBedrockJobPlan;
  /** The answer to one record (its Claude Messages body); default a fixed sentence. */
  reply?: (body: MockClaudeBody, recordId: string) => string;
  /** The fewest records a job may have, as Bedrock's quota (default 100): fewer and the job fails validation. */
  minRecords?: number;
  region?: string;
}

export interface MockClaudeBody {
  anthropic_version?: string;
  system?: string;
  messages: Array<{ role: string; content: string }>;
  temperature?: number;
  max_tokens?: number;
}

export interface MockBedrockJobInfo {
  jobArn: string;
  jobName: string;
  modelId: string;
  roleArn: string;
  status: string;
  inputUri: string;
  records: number;
  polls: number;
}

export interface MockBedrockBatchServer {
  /** The S3-compatible endpoint (s3_endpoint=) and the control plane (bedrock_endpoint=). */
  s3Url: string;
  bedrockUrl: string;
  /** Jobs created (paid work); a repeated clientRequestToken is not a new one. */
  readonly submissions: number;
  /** Objects written. */
  readonly uploads: number;
  /** Requests refused for want of a SigV4 Authorization header. */
  readonly unsigned: number;
  /** ListModelInvocationJobs calls (how a crash between create and its record is recovered). */
  readonly lists: number;
  /** The Claude bodies of every record of every job, in order. */
  readonly records: Array<{ recordId: string; body: MockClaudeBody }>;
  jobs(): MockBedrockJobInfo[];
  /** The store's objects: `bucket/key` -> content. */
  objects: Map<string, string>;
  /** Held jobs end at their next status check. */
  release(): void;
  close(): Promise<void>;
}

interface Job extends MockBedrockJobInfo {
  index: number;
  plan: MockBedrockJobPlan;
  outputUri: string;
  clientRequestToken?: string;
  submitTime: string;
  endTime?: string;
  message?: string;
  stopRequested: boolean;
  total?: number;
  success?: number;
  errors?: number;
}

const TERMINAL = new Set(['Completed', 'PartiallyCompleted', 'Expired', 'Failed', 'Stopped']);

export async function startMockBedrockBatch(options: MockBedrockBatchOptions = {}): Promise<MockBedrockBatchServer> {
  const region = options.region ?? 'us-west-2';
  const minRecords = options.minRecords ?? 100;
  const objects = new Map<string, string>();
  const jobs: Job[] = [];
  const records: Array<{ recordId: string; body: MockClaudeBody }> = [];
  const counts = { submissions: 0, uploads: 0, unsigned: 0, lists: 0 };
  let released = false;

  const parseS3 = (uri: string): { bucket: string; key: string } | undefined => {
    const m = /^s3:\/\/([^/]+)\/(.*)$/.exec(uri);
    return m ? { bucket: m[1]!, key: m[2]! } : undefined;
  };

  /** Ends a job as planned: reads its input, answers what it reached, writes the output file. */
  const finish = (job: Job, end: NonNullable<MockBedrockJobPlan['end']>): void => {
    job.status = end;
    job.endTime = new Date().toISOString();
    if (end === 'Failed') return;
    const input = parseS3(job.inputUri);
    const text = input ? objects.get(`${input.bucket}/${input.key}`) : undefined;
    const lines = (text ?? '').split('\n').filter((l) => l.trim());
    const out: string[] = [];
    let success = 0;
    let errors = 0;
    lines.forEach((line, i) => {
      const r = JSON.parse(line) as { recordId: string; modelInput: MockClaudeBody };
      if (end !== 'Completed' && !(job.plan.answered?.(r.recordId, i) ?? false)) return;
      if (r.modelInput.anthropic_version !== 'bedrock-2023-05-31' || job.plan.itemError?.(r.recordId, i)) {
        errors++;
        out.push(JSON.stringify({ recordId: r.recordId, modelInput: r.modelInput, error: { errorCode: 400, errorMessage: 'Malformed input request' } }));
        return;
      }
      success++;
      const answer = options.reply ? options.reply(r.modelInput, r.recordId) : `Mock Bedrock batch answer from ${job.modelId}.`;
      const chars = (r.modelInput.system ?? '').length + r.modelInput.messages.reduce((n, m) => n + m.content.length, 0);
      out.push(
        JSON.stringify({
          recordId: r.recordId,
          modelInput: r.modelInput,
          modelOutput: {
            id: `msg_bdrk_${i}`,
            type: 'message',
            role: 'assistant',
            model: job.modelId,
            content: [{ type: 'text', text: answer }],
            stop_reason: 'end_turn',
            usage: { input_tokens: Math.ceil(chars / 4), output_tokens: Math.ceil(answer.length / 4) },
          },
        }),
      );
    });
    job.total = lines.length;
    job.success = success;
    job.errors = errors;
    const output = parseS3(job.outputUri.replace(/\/*$/, '/'));
    const jobId = job.jobArn.split('/').pop()!;
    if (output && input) {
      const name = input.key.split('/').pop()!;
      objects.set(`${output.bucket}/${output.key}${jobId}/${name}.out`, out.length ? `${out.join('\n')}\n` : '');
      objects.set(
        `${output.bucket}/${output.key}${jobId}/manifest.json.out`,
        JSON.stringify({ totalRecordCount: lines.length, processedRecordCount: success + errors, successRecordCount: success, errorRecordCount: errors }),
      );
    }
  };

  /** A status check moves the job along its plan. */
  const advance = (job: Job): void => {
    if (TERMINAL.has(job.status)) return;
    job.polls++;
    if (job.stopRequested) {
      finish(job, 'Stopped');
      return;
    }
    if (job.status === 'Submitted' && job.records < minRecords) {
      job.status = 'Failed';
      job.message = `The number of records in the input file is less than the minimum of ${minRecords}.`;
      job.endTime = new Date().toISOString();
      return;
    }
    if (job.plan.hold && !released) {
      job.status = 'InProgress';
      return;
    }
    if (job.polls <= (job.plan.polls ?? 1)) {
      job.status = 'InProgress';
      return;
    }
    finish(job, job.plan.end ?? 'Completed');
  };

  const view = (j: Job) => ({
    jobArn: j.jobArn,
    jobName: j.jobName,
    modelId: j.modelId,
    roleArn: j.roleArn,
    status: j.status,
    ...(j.message ? { message: j.message } : {}),
    ...(j.clientRequestToken ? { clientRequestToken: j.clientRequestToken } : {}),
    submitTime: j.submitTime,
    lastModifiedTime: j.endTime ?? j.submitTime,
    ...(j.endTime ? { endTime: j.endTime } : {}),
    inputDataConfig: { s3InputDataConfig: { s3Uri: j.inputUri, s3InputFormat: 'JSONL' } },
    outputDataConfig: { s3OutputDataConfig: { s3Uri: j.outputUri } },
    ...(j.total !== undefined
      ? { totalRecordCount: j.total, processedRecordCount: j.success! + j.errors!, successRecordCount: j.success, errorRecordCount: j.errors }
      : {}),
  });

  const signedFor = (req: IncomingMessage, service: string): boolean => {
    const auth = req.headers['authorization'];
    const ok = typeof auth === 'string' && new RegExp(`^AWS4-HMAC-SHA256 Credential=[^/]+/\\d{8}/[^/]+/${service}/aws4_request, ?SignedHeaders=`).test(auth);
    if (!ok) counts.unsigned++;
    return ok;
  };

  const s3 = createServer((req, res) =>
    body(req, (data) => {
      const xmlError = (status: number, code: string, message: string) => {
        const text = `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${code}</Code><Message>${message}</Message></Error>`;
        res.writeHead(status, { 'content-type': 'application/xml', 'content-length': Buffer.byteLength(text) });
        res.end(text);
      };
      if (!signedFor(req, 's3')) return xmlError(403, 'AccessDenied', 'The request is not signed with AWS Signature Version 4');
      const url = new URL(req.url ?? '/', 'http://localhost');
      const [, bucket, ...rest] = url.pathname.split('/');
      const key = rest.map(decodeURIComponent).join('/');
      if (!bucket) return xmlError(400, 'InvalidRequest', 'path-style requests only: /bucket/key');
      if (req.method === 'PUT' && key) {
        objects.set(`${bucket}/${key}`, data.toString('utf8'));
        counts.uploads++;
        res.writeHead(200, { etag: `"${randomBytes(8).toString('hex')}"`, 'content-length': 0 });
        return res.end();
      }
      if (req.method === 'GET' && key) {
        const text = objects.get(`${bucket}/${key}`);
        if (text === undefined) return xmlError(404, 'NoSuchKey', 'The specified key does not exist.');
        res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': Buffer.byteLength(text) });
        return res.end(text);
      }
      if (req.method === 'GET' && url.searchParams.get('list-type') === '2') {
        const prefix = url.searchParams.get('prefix') ?? '';
        const keys = [...objects.keys()].filter((k) => k.startsWith(`${bucket}/${prefix}`)).map((k) => k.slice(bucket.length + 1));
        const contents = keys
          .map((k) => `<Contents><Key>${escapeXml(k)}</Key><Size>${Buffer.byteLength(objects.get(`${bucket}/${k}`)!)}</Size></Contents>`)
          .join('');
        const text = `<?xml version="1.0" encoding="UTF-8"?>\n<ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Name>${escapeXml(bucket)}</Name><Prefix>${escapeXml(prefix)}</Prefix><KeyCount>${keys.length}</KeyCount><MaxKeys>1000</MaxKeys><IsTruncated>false</IsTruncated>${contents}</ListBucketResult>`;
        res.writeHead(200, { 'content-type': 'application/xml', 'content-length': Buffer.byteLength(text) });
        return res.end(text);
      }
      return xmlError(405, 'MethodNotAllowed', `${req.method} ${url.pathname} is not supported by the mock`);
    }),
  );

  const bedrock = createServer((req, res) =>
    body(req, (data) => {
      const send = (status: number, json: unknown, errorType?: string) => {
        const text = JSON.stringify(json);
        res.writeHead(status, {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(text),
          ...(errorType ? { 'x-amzn-errortype': errorType } : {}),
        });
        res.end(text);
      };
      if (!signedFor(req, 'bedrock')) return send(403, { message: 'Missing Authentication Token' }, 'AccessDeniedException');
      const url = new URL(req.url ?? '/', 'http://localhost');
      const path = url.pathname;
      const byId = (raw: string) => {
        const id = decodeURIComponent(raw);
        return jobs.find((j) => j.jobArn === id || j.jobArn.endsWith(`/${id}`));
      };
      if (req.method === 'POST' && path === '/model-invocation-job') {
        let b: {
          jobName?: string;
          roleArn?: string;
          modelId?: string;
          clientRequestToken?: string;
          inputDataConfig?: { s3InputDataConfig?: { s3Uri?: string } };
          outputDataConfig?: { s3OutputDataConfig?: { s3Uri?: string } };
        };
        try {
          b = JSON.parse(data.toString('utf8'));
        } catch {
          return send(400, { message: 'body is not JSON' }, 'ValidationException');
        }
        const inputUri = b.inputDataConfig?.s3InputDataConfig?.s3Uri;
        const outputUri = b.outputDataConfig?.s3OutputDataConfig?.s3Uri;
        if (!b.jobName || !b.roleArn || !b.modelId || !inputUri || !outputUri)
          return send(400, { message: 'jobName, roleArn, modelId, inputDataConfig and outputDataConfig are required' }, 'ValidationException');
        const same = b.clientRequestToken ? jobs.find((j) => j.clientRequestToken === b.clientRequestToken) : undefined;
        if (same) return send(200, { jobArn: same.jobArn });
        const input = parseS3(inputUri);
        const text = input ? objects.get(`${input.bucket}/${input.key}`) : undefined;
        if (text === undefined) return send(400, { message: `the input ${inputUri} does not exist` }, 'ValidationException');
        const lines = text.split('\n').filter((l) => l.trim());
        for (const l of lines) {
          const r = JSON.parse(l) as { recordId: string; modelInput: MockClaudeBody };
          records.push({ recordId: r.recordId, body: r.modelInput });
        }
        const index = jobs.length;
        const job: Job = {
          index,
          jobArn: `arn:aws:bedrock:${region}:123456789012:model-invocation-job/${randomBytes(6).toString('hex')}`,
          jobName: b.jobName,
          modelId: b.modelId,
          roleArn: b.roleArn,
          status: 'Submitted',
          inputUri,
          outputUri,
          records: lines.length,
          polls: 0,
          plan: options.plan?.(index) ?? {},
          submitTime: new Date().toISOString(),
          stopRequested: false,
          ...(b.clientRequestToken ? { clientRequestToken: b.clientRequestToken } : {}),
        };
        jobs.push(job);
        counts.submissions++;
        return send(200, { jobArn: job.jobArn });
      }
      if (req.method === 'GET' && path === '/model-invocation-jobs') {
        counts.lists++;
        const name = url.searchParams.get('nameContains');
        const status = url.searchParams.get('statusEquals');
        const fits = jobs.filter((j) => (!name || j.jobName.includes(name)) && (!status || j.status === status));
        return send(200, { invocationJobSummaries: fits.map(view) });
      }
      const stop = /^\/model-invocation-job\/([^/]+)\/stop$/.exec(path);
      if (req.method === 'POST' && stop) {
        const job = byId(stop[1]!);
        if (!job) return send(404, { message: 'no such job' }, 'ResourceNotFoundException');
        if (!TERMINAL.has(job.status)) {
          job.stopRequested = true;
          job.status = 'Stopping';
        }
        return send(200, {});
      }
      const get = /^\/model-invocation-job\/([^/]+)$/.exec(path);
      if (req.method === 'GET' && get) {
        const job = byId(get[1]!);
        if (!job) return send(404, { message: 'no such job' }, 'ResourceNotFoundException');
        advance(job);
        return send(200, view(job));
      }
      return send(404, { message: `no route ${req.method} ${path}` }, 'UnknownOperationException');
    }),
  );

  const listen = async (server: Server): Promise<string> => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  };
  const close = (server: Server) =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  const [s3Url, bedrockUrl] = [await listen(s3), await listen(bedrock)];
  return {
    s3Url,
    bedrockUrl,
    get submissions() {
      return counts.submissions;
    },
    get uploads() {
      return counts.uploads;
    },
    get unsigned() {
      return counts.unsigned;
    },
    get lists() {
      return counts.lists;
    },
    records,
    objects,
    jobs: () =>
      jobs.map((j) => ({
        jobArn: j.jobArn,
        jobName: j.jobName,
        modelId: j.modelId,
        roleArn: j.roleArn,
        status: j.status,
        inputUri: j.inputUri,
        records: j.records,
        polls: j.polls,
      })),
    release: () => {
      released = true;
    },
    close: async () => {
      await Promise.all([close(s3), close(bedrock)]);
    },
  };
}

function body(req: IncomingMessage, then: (data: Buffer) => void): void {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => then(Buffer.concat(chunks)));
}

function escapeXml(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}
