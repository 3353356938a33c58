import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * An OpenAI-compatible `POST /v1/embeddings` endpoint on 127.0.0.1 serving the vectors a test
 * chooses: `vectorOf(text)`, or a 400 naming the first text it has none for. Records each
 * request's texts.
 */
export async function startEmbeddingsServer(
  vectorOf: (text: string) => number[] | undefined,
): Promise<{ url: string; requests: string[][]; close: () => Promise<void> }> {
  const requests: string[][] = [];
  const server = createServer((req, res) => {
    let raw = '';
    req.on('data', (chunk) => (raw += chunk));
    req.on('end', () => {
      const input = (JSON.parse(raw) as { input: string[] }).input;
      requests.push(input);
      const unknown = input.find((text) => vectorOf(text) === undefined);
      if (unknown !== undefined) {
        res.statusCode = 400;
        return res.end(JSON.stringify({ error: `no vector for ${unknown}` }));
      }
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ data: input.map((text, index) => ({ index, embedding: vectorOf(text) })) }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    requests,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
