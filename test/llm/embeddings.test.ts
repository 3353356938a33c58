// The OpenAI-compatible embeddings client against a local /v1/embeddings server on 127.0.0.1
// (real HTTP): batching, order by index, retries, the key in the header only, the vector cache,
// and failures that are never cached.
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { EmbeddingsClient, embeddingKey } from '../../src/llm/embeddings.js';
import type { RetryPolicy } from '../../src/llm/retry-policy.js';

const KEY = 'sk-embed-test-0123456789';
const FAST_RETRY: RetryPolicy = { retries: 2, minDelayMs: 1, maxDelayMs: 5, factor: 1, maxTotalMs: 5_000, maxRetryAfterMs: 5 };

/** Vectors chosen per text; anything else gets [len, 1]. */
const VECTORS: Record<string, number[]> = {
  alpha: [1, 0, 0],
  beta: [0, 2, 0],
  gamma: [0, 0, 3],
  delta: [1, 1, 1],
  epsilon: [3, 4, 0],
};

interface Seen {
  body: { model: string; input: string[]; encoding_format?: string };
  authorization: string | undefined;
}

let server: Server;
let url: string;
let seen: Seen[] = [];
/** Per request number (1-based): what to answer instead of the vectors. */
let script: Record<number, (res: import('node:http').ServerResponse, seen: Seen) => void> = {};
let dir: string;

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

beforeAll(async () => {
  server = createServer(async (req, res) => {
    const body = JSON.parse(await readBody(req)) as Seen['body'];
    const entry = { body, authorization: req.headers.authorization };
    seen.push(entry);
    const override = script[seen.length];
    if (override) return override(res, entry);
    // Items listed in reverse order with their index, as a server may: the client must order them.
    const data = body.input.map((text, index) => ({ object: 'embedding', index, embedding: VECTORS[text] ?? [text.length, 1, 0] })).reverse();
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ object: 'list', model: body.model, data }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});

afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

afterEach(() => {
  seen = [];
  script = {};
  if (dir) rmSync(dir, { recursive: true, force: true });
});

function client(options: Partial<ConstructorParameters<typeof EmbeddingsClient>[0]> = {}): EmbeddingsClient {
  dir = mkdtempSync(join(tmpdir(), 'plens-embeddings-'));
  return new EmbeddingsClient({
    model: 'all-MiniLM-L6-v2',
    baseUrl: url,
    batchSize: 2,
    concurrency: 1,
    retry: FAST_RETRY,
    cacheDir: join(dir, 'cache'),
    ...options,
  });
}

describe('EmbeddingsClient over HTTP', () => {
  it('sends batches of batchSize, distinct texts once, and returns vectors in input order', async () => {
    const c = client();
    const vectors = await c.embed(['alpha', 'beta', 'alpha', 'gamma', 'delta', 'epsilon']);
    await c.close();
    expect(vectors.map((v) => [...v])).toEqual([
      [1, 0, 0],
      [0, 2, 0],
      [1, 0, 0],
      [0, 0, 3],
      [1, 1, 1],
      [3, 4, 0],
    ]);
    expect(seen.map((s) => s.body.input)).toEqual([['alpha', 'beta'], ['gamma', 'delta'], ['epsilon']]);
    expect(seen.every((s) => s.body.model === 'all-MiniLM-L6-v2' && s.body.encoding_format === 'float')).toBe(true);
    expect(seen[0]!.authorization).toBeUndefined();
  });

  it('serves repeated texts from the cache, keyed by model and endpoint', async () => {
    let c = client();
    await c.embed(['alpha', 'beta', 'gamma']);
    await c.close();
    expect(seen).toHaveLength(2);
    const cacheDir = join(dir, 'cache');
    c = new EmbeddingsClient({ model: 'all-MiniLM-L6-v2', baseUrl: url, batchSize: 2, retry: FAST_RETRY, cacheDir });
    const again = await c.embed(['gamma', 'alpha', 'delta']);
    expect(c.stats).toEqual({ requests: 1, cached: 2, embedded: 1 });
    await c.close();
    expect(again.map((v) => [...v])).toEqual([
      [0, 0, 3],
      [1, 0, 0],
      [1, 1, 1],
    ]);
    expect(seen[2]!.body.input).toEqual(['delta']);
    // Another model on the same server shares nothing.
    c = new EmbeddingsClient({ model: 'other-model', baseUrl: url, retry: FAST_RETRY, cacheDir });
    await c.embed(['alpha']);
    await c.close();
    expect(seen).toHaveLength(4);
    expect(embeddingKey('m', 'http://a/v1/embeddings', 'x')).not.toBe(embeddingKey('m', 'http://b/v1/embeddings', 'x'));
  });

  it('sends the key from the named variable as a Bearer token and keeps it out of errors', async () => {
    script = {
      1: (res, s) => {
        res.statusCode = 401;
        res.end(JSON.stringify({ error: `bad key ${s.authorization}` }));
      },
    };
    const c = client({ keyEnv: 'EMBED_KEY', env: { EMBED_KEY: KEY } });
    const failure = await c.embed(['alpha']).catch((error: unknown) => error as Error);
    await c.close();
    expect(seen[0]!.authorization).toBe(`Bearer ${KEY}`);
    expect(failure).toBeInstanceOf(Error);
    expect(failure.message).toContain('HTTP 401');
    expect(failure.message).not.toContain(KEY);
    // 401 is not retried.
    expect(seen).toHaveLength(1);
    expect(() => client({ keyEnv: 'EMBED_KEY', env: {} })).toThrow(/set EMBED_KEY/);
  });

  it('retries a 503 and a malformed answer, then succeeds', async () => {
    script = {
      1: (res) => {
        res.statusCode = 503;
        res.end('busy');
      },
      2: (res) => {
        res.setHeader('content-type', 'application/json');
        res.end(
          JSON.stringify({
            data: [
              { index: 0, embedding: [1, 'x'] },
              { index: 1, embedding: [1, 2] },
            ],
          }),
        );
      },
    };
    const c = client();
    const vectors = await c.embed(['alpha', 'beta']);
    await c.close();
    expect(seen).toHaveLength(3);
    expect(vectors.map((v) => [...v])).toEqual([
      [1, 0, 0],
      [0, 2, 0],
    ]);
  });

  it('fails after the retries on answers of the wrong size, and caches nothing from them', async () => {
    const short = (res: import('node:http').ServerResponse) => {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ data: [{ index: 0, embedding: [9, 9, 9] }] }));
    };
    script = { 1: short, 2: short, 3: short };
    let c = client();
    await expect(c.embed(['alpha', 'beta'])).rejects.toThrow(/expected data with 2 embeddings, got 1/);
    await c.close();
    expect(seen).toHaveLength(3);
    c = new EmbeddingsClient({ model: 'all-MiniLM-L6-v2', baseUrl: url, retry: FAST_RETRY, cacheDir: join(dir, 'cache') });
    const vectors = await c.embed(['alpha', 'beta']);
    await c.close();
    expect(c.stats.cached).toBe(0);
    expect(vectors.map((v) => [...v])).toEqual([
      [1, 0, 0],
      [0, 2, 0],
    ]);
  });

  it('refuses a base URL that is not http(s) or carries credentials', () => {
    expect(() => new EmbeddingsClient({ model: 'm', baseUrl: 'file:///tmp/x' })).toThrow(/scheme/);
    expect(() => new EmbeddingsClient({ model: 'm', baseUrl: 'http://user:pw@127.0.0.1:1/v1' })).toThrow(/credentials/);
  });
});
