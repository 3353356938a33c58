import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { defaultReply, startMockLlm, type MockLlmServer, type MockRequest } from '../../src/testkit/mock-server.js';
import { runCli } from '../helpers/cli.js';
import { expectTablesCsvGolden } from '../helpers/golden.js';
import { sampleWorkspace } from '../helpers/workspace.js';

/**
 * Every table of a run against a mock endpoint (real HTTP: LLM assistant and judge, simulated user),
 * pinned byte for byte; test/make/demo.test.ts pins the demo's the same way.
 */
let server: MockLlmServer;
beforeAll(async () => {
  server = await startMockLlm({ reply, keepRequests: false });
});
afterAll(async () => {
  await server?.close();
});

/** Deterministic per request; the judge's scores vary and some replies do not parse, so every table has content. */
function reply(r: MockRequest): string {
  if (r.model !== 'judge') return defaultReply(r);
  const prompt = r.messages[0]!.content;
  const h = createHash('sha256').update(prompt).digest().readUInt32BE(0);
  if (/VERDICT/.test(prompt)) return `VERDICT: ${h % 3 === 0 ? 'False' : 'True'}\nEXPLANATION: checked against the goal.`;
  if (/Personalization Score/.test(prompt)) {
    if (h % 7 === 0) return 'Reasonably personal, I suppose.';
    return `<response>\nPersonalization Score: ${1 + (h % 4)}\nKey Observations: some.\nJustification: because.\nImprovement Suggestions: none.\n</response>`;
  }
  return `Score: ${1 + (h % 5)}\nJustification: reads fine.`;
}

it('plens tables --format csv on a mock-endpoint run is byte-identical to the committed tables', { timeout: 300_000 }, async () => {
  const ws = await sampleWorkspace(['--users', '0-3']);
  const env = { OPENAI_API_KEY: 'sk-golden' };
  for (const assistant of ['a', 'b']) {
    const d = await runCli(
      [
        'dialogues',
        '-w',
        ws,
        '--assistant',
        `openai:${assistant}?base_url=${server.url}/v1`,
        '--user',
        'sim:default',
        '--setting',
        'base,base+all',
        '--concurrency',
        '8',
        '--no-progress',
      ],
      { env },
    );
    expect(d.code, d.stderr).toBe(0);
  }
  const j = await runCli(['judge', '-w', ws, '--judge', `openai:judge?base_url=${server.url}/v1`, '--concurrency', '8', '--no-progress'], { env });
  expect(j.code, j.stderr).toBe(0);
  const db = join(ws, '..', 'plens.duckdb');
  const w = await runCli(['warehouse', '-w', ws, '--db', db]);
  expect(w.code, w.stderr).toBe(0);
  await expectTablesCsvGolden(db, 'mock-endpoint-tables');

  // The result views compute each distinct histogram's interval once and join it back to its groups:
  // every group of Figure 4 gets exactly the interval of its own scores (histogram_ci95), and groups with the same
  // scores share it.
  const check = await runCli([
    'sql',
    `WITH d AS (SELECT *, unnest(relevant_domains) AS domain FROM dialogue_scores),
     g AS (SELECT judge_model, run, assistant_model, setting, kind, domain, map_entries(histogram(p)) AS h,
       histogram_ci95(map_entries(histogram(tc))) AS tc_ci, histogram_ci95(map_entries(histogram(p))) AS p_ci FROM d GROUP BY ALL)
     SELECT count(*)::INTEGER AS groups, count(DISTINCT h)::INTEGER AS histograms, count(f.p_lo)::INTEGER AS with_interval,
       count(*) FILTER (f.p_lo IS NOT DISTINCT FROM g.p_ci.lo AND f.p_hi IS NOT DISTINCT FROM g.p_ci.hi
         AND f.tcr_lo IS NOT DISTINCT FROM 100 * g.tc_ci.lo AND f.tcr_hi IS NOT DISTINCT FROM 100 * g.tc_ci.hi)::INTEGER AS same
     FROM figure4 f JOIN g USING (judge_model, run, assistant_model, setting, kind, domain)`,
    '--db',
    db,
    '--json',
  ]);
  expect(check.code, check.stderr).toBe(0);
  const [c] = JSON.parse(check.stdout) as Array<{ groups: number; histograms: number; with_interval: number; same: number }>;
  expect(c!.same).toBe(c!.groups);
  expect(c!.with_interval).toBeGreaterThan(0);
  // Some groups share a histogram, so the shared computation is exercised.
  expect(c!.histograms).toBeLessThan(c!.groups);
});
