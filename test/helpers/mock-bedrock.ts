/**
 * A mock Amazon Bedrock Converse endpoint on 127.0.0.1 (real HTTP, node:http) for the bedrock
 * provider's tests. It checks every request's SigV4 signature with its own computation (from the
 * SigV4 specification, not the SDK's signer) against the credentials it is given, answers
 * `POST /model/{modelId}/converse`, and `POST /model/{modelId}/invoke` for Llama and Mistral models
 * in their native bodies (as Bedrock documents them), and fails with Bedrock's error types on demand.
 */
import { createHash, createHmac } from 'node:crypto';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface MockBedrockRequest {
  index: number;
  /** The model id as sent (decoded from the path). */
  modelId: string;
  operation: 'converse' | 'invoke';
  /** InvokeModel's native body (Llama's or Mistral's); the Converse body is then empty. */
  invoke?: { prompt: string; max_gen_len?: number; max_tokens?: number; temperature?: number; top_p?: number };
  body: {
    system?: Array<{ text: string }>;
    messages: Array<{ role: string; content: Array<{ text: string }> }>;
    inferenceConfig?: { temperature?: number; maxTokens?: number; topP?: number };
  };
  headers: Record<string, string | string[] | undefined>;
  authorization: { accessKeyId: string; date: string; region: string; service: string; signedHeaders: string[] } | undefined;
  /** Whether the signature matched the one this mock computed. */
  signatureValid: boolean;
  /** Why not, when it did not. */
  signatureProblem?: string;
}

export interface MockBedrockFault {
  status: number;
  /** Bedrock's error type, e.g. ThrottlingException, ServiceUnavailableException, ValidationException. */
  type: string;
  message?: string;
  retryAfterSeconds?: number;
}

export interface MockBedrockOptions {
  credentials: { accessKeyId: string; secretAccessKey: string; sessionToken?: string };
  reply?: (req: MockBedrockRequest) => string;
  fault?: (req: MockBedrockRequest) => MockBedrockFault | undefined;
  latencyMs?: number;
}

export interface MockBedrockServer {
  url: string;
  requests: MockBedrockRequest[];
  close(): Promise<void>;
}

const sha256 = (data: string | Buffer) => createHash('sha256').update(data).digest('hex');
const hmac = (key: string | Buffer, data: string) => createHmac('sha256', key).update(data).digest();

/** RFC 3986 encoding as SigV4 wants it: everything but unreserved characters percent-encoded. */
function uriEncode(s: string): string {
  return encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

/**
 * Checks the SigV4 signature of a received request. For services other than S3 the canonical
 * URI is the path with each segment encoded once more (the SDK sent `%3A`, the canonical form
 * has `%253A`).
 */
function verifySigV4(
  req: IncomingMessage,
  body: Buffer,
  secretAccessKey: string,
): { auth: MockBedrockRequest['authorization']; valid: boolean; problem?: string } {
  const header = req.headers['authorization'];
  const m =
    typeof header === 'string'
      ? /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, ?SignedHeaders=([a-z0-9;-]+), ?Signature=([0-9a-f]{64})$/.exec(header)
      : null;
  if (!m) return { auth: undefined, valid: false, problem: `Authorization header is not SigV4: ${String(header)}` };
  const [, accessKeyId, date, region, service, signed, signature] = m as unknown as string[];
  const signedHeaders = signed!.split(';');
  const auth = { accessKeyId: accessKeyId!, date: date!, region: region!, service: service!, signedHeaders };
  const amzDate = req.headers['x-amz-date'];
  if (typeof amzDate !== 'string' || !amzDate.startsWith(date!))
    return { auth, valid: false, problem: `x-amz-date ${String(amzDate)} does not match the credential date ${date}` };
  for (const required of ['host', 'x-amz-date']) if (!signedHeaders.includes(required)) return { auth, valid: false, problem: `${required} is not signed` };
  const [rawPath, rawQuery = ''] = (req.url ?? '/').split('?');
  const canonicalUri = rawPath!.split('/').map(uriEncode).join('/');
  const canonicalQuery = rawQuery
    .split('&')
    .filter(Boolean)
    .map((p) =>
      p
        .split('=')
        .map((x) => uriEncode(decodeURIComponent(x)))
        .join('='),
    )
    .sort()
    .join('&');
  const canonicalHeaders = signedHeaders
    .map(
      (h) =>
        `${h}:${String(req.headers[h] ?? '')
          .trim()
          .replace(/\s+/g, ' ')}\n`,
    )
    .join('');
  const payloadHash = typeof req.headers['x-amz-content-sha256'] === 'string' ? req.headers['x-amz-content-sha256'] : sha256(body);
  if (payloadHash !== sha256(body)) return { auth, valid: false, problem: 'x-amz-content-sha256 is not the hash of the body' };
  const canonicalRequest = [req.method, canonicalUri, canonicalQuery, canonicalHeaders, signed, payloadHash].join('\n');
  const scope = `${date}/${region}/${service}/aws4_request`;
  const stringToSign = ['AWS4-HMAC-SHA256', amzDate, scope, sha256(canonicalRequest)].join('\n');
  const key = hmac(hmac(hmac(hmac(`AWS4${secretAccessKey}`, date!), region!), service!), 'aws4_request');
  const expected = createHmac('sha256', key).update(stringToSign).digest('hex');
  return expected === signature ? { auth, valid: true } : { auth, valid: false, problem: 'signature mismatch' };
}

export async function startMockBedrock(options: MockBedrockOptions): Promise<MockBedrockServer> {
  const requests: MockBedrockRequest[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const send = (status: number, json: unknown, headers: Record<string, string> = {}) => {
        const text = JSON.stringify(json);
        const go = () => {
          if (res.destroyed) return;
          res.writeHead(status, {
            'content-type': 'application/json',
            'content-length': Buffer.byteLength(text),
            'x-amzn-requestid': `req-${requests.length}`,
            ...headers,
          });
          res.end(text);
        };
        if (options.latencyMs) setTimeout(go, options.latencyMs);
        else go();
      };
      const route = /^\/model\/([^/]+)\/(converse|invoke)$/.exec((req.url ?? '').split('?')[0]!);
      if (req.method !== 'POST' || !route)
        return send(404, { message: `no route ${req.method} ${req.url}` }, { 'x-amzn-errortype': 'UnknownOperationException' });
      const check = verifySigV4(req, body, options.credentials.secretAccessKey);
      const operation = route[2] as 'converse' | 'invoke';
      let parsed: MockBedrockRequest['body'];
      let invoke: MockBedrockRequest['invoke'];
      try {
        if (operation === 'converse') parsed = JSON.parse(body.toString('utf8')) as MockBedrockRequest['body'];
        else {
          invoke = JSON.parse(body.toString('utf8')) as MockBedrockRequest['invoke'];
          parsed = { messages: [] };
        }
      } catch {
        return send(400, { message: 'body is not JSON' }, { 'x-amzn-errortype': 'ValidationException' });
      }
      const record: MockBedrockRequest = {
        index: requests.length,
        modelId: decodeURIComponent(route[1]!),
        operation,
        ...(invoke ? { invoke } : {}),
        body: parsed,
        headers: req.headers,
        authorization: check.auth,
        signatureValid: check.valid,
        ...(check.problem ? { signatureProblem: check.problem } : {}),
      };
      requests.push(record);
      if (!check.valid)
        return send(
          403,
          { message: `The request signature we calculated does not match the signature you provided (${check.problem})` },
          { 'x-amzn-errortype': 'InvalidSignatureException' },
        );
      if (check.auth!.accessKeyId !== options.credentials.accessKeyId)
        return send(403, { message: 'The security token included in the request is invalid.' }, { 'x-amzn-errortype': 'UnrecognizedClientException' });
      if (options.credentials.sessionToken !== undefined && req.headers['x-amz-security-token'] !== options.credentials.sessionToken) {
        return send(403, { message: 'The security token included in the request is invalid.' }, { 'x-amzn-errortype': 'UnrecognizedClientException' });
      }
      const fault = options.fault?.(record);
      if (fault) {
        return send(
          fault.status,
          { message: fault.message ?? fault.type },
          {
            'x-amzn-errortype': `${fault.type}:http://internal.amazon.com/coral/com.amazon.bedrock/`,
            ...(fault.retryAfterSeconds !== undefined ? { 'retry-after': String(fault.retryAfterSeconds) } : {}),
          },
        );
      }
      // As Bedrock answers it: Mistral 7B and Mixtral 8x7B Instruct take no system prompt through Converse.
      if (!invoke && (parsed.system ?? []).length > 0 && /^mistral\.(?:mistral-7b-instruct|mixtral-8x7b-instruct)/.test(record.modelId))
        return send(
          400,
          { message: "This model doesn't support system messages. Try again without a system message or use a model that supports system messages." },
          { 'x-amzn-errortype': 'ValidationException:http://internal.amazon.com/coral/com.amazon.bedrock/' },
        );
      const text = options.reply ? options.reply(record) : `Mock Bedrock answer from ${record.modelId}.`;
      if (invoke) {
        // The native answers: Llama's counts its tokens (here a token per 3 prompt characters, so a
        // test tells a count read from an estimate), Mistral's does not (Bedrock puts them in headers).
        if (typeof invoke.prompt !== 'string') return send(400, { message: 'prompt is required' }, { 'x-amzn-errortype': 'ValidationException' });
        if (record.modelId.includes('meta.llama'))
          return send(200, {
            generation: text,
            prompt_token_count: Math.ceil(invoke.prompt.length / 3),
            generation_token_count: Math.ceil(text.length / 4),
            stop_reason: 'stop',
          });
        if (record.modelId.includes('mistral.')) return send(200, { outputs: [{ text, stop_reason: 'stop' }] });
        return send(400, { message: `this mock takes no native body for ${record.modelId}` }, { 'x-amzn-errortype': 'ValidationException' });
      }
      const promptChars =
        (parsed.system ?? []).reduce((n, b) => n + b.text.length, 0) +
        parsed.messages.reduce((n, m) => n + m.content.reduce((k, c) => k + c.text.length, 0), 0);
      const inputTokens = Math.ceil(promptChars / 4);
      const outputTokens = Math.ceil(text.length / 4);
      send(200, {
        output: { message: { role: 'assistant', content: [{ text }] } },
        stopReason: 'end_turn',
        usage: { inputTokens, outputTokens, totalTokens: inputTokens + outputTokens },
        metrics: { latencyMs: options.latencyMs ?? 1 },
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * An environment that takes nothing from the machine (no profile, no shared files, no instance
 * metadata): with `credentials`, their static keys and `region`; without, none at all.
 */
export function isolatedAwsEnv(credentials?: { accessKeyId: string; secretAccessKey: string }, region = 'us-east-1'): Record<string, string> {
  return {
    AWS_PROFILE: '',
    AWS_EC2_METADATA_DISABLED: 'true',
    AWS_CONFIG_FILE: '/nonexistent/plens-config',
    AWS_SHARED_CREDENTIALS_FILE: '/nonexistent/plens-credentials',
    ...(credentials ? { AWS_ACCESS_KEY_ID: credentials.accessKeyId, AWS_SECRET_ACCESS_KEY: credentials.secretAccessKey, AWS_REGION: region } : {}),
  };
}
