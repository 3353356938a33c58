import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startMockLlm, type MockLlmServer } from '../../src/testkit/mock-server.js';
import { runCli, runCliJson, tempDir } from '../helpers/cli.js';

let server: MockLlmServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

interface SpendLine {
  calls: number;
  cached_calls: number;
  cost_usd: number;
}
interface Spend {
  by_role: Record<string, SpendLine>;
  by_model: Record<string, SpendLine>;
}
interface MakeJson {
  ok: boolean;
  spend_capped: boolean;
  max_cost_usd: number | null;
  spend: Spend;
  spent_usd: number;
  failed: string[];
  steps: Array<{ step: string; status: string; work: number; detail: string; spend_capped?: boolean }>;
  error?: { code: string; message: string };
}
interface StatusJson {
  totals: { dialogues: { done: number; pending: number }; judge: { done: number; pending: number; spent: { cost_usd: number } } };
  spend: Spend;
}

// The dialogues run on the simulator at $100 per 1M tokens (its usage is counted like a model's:
// about $0.8 a dialogue); the judge is a real HTTP endpoint at $1,000 per 1M tokens (about $0.5-1.1 a judgment).
const SIM = 'sim:default?price_in=100&price_out=100';
const JUDGE_TOKEN_USD = 0.001;
const SCENARIOS = 6; // users 0-1, MD (data/sample/README.md)
const CELLS = 2;

function pipeline(judge: string, maxCost: string): string {
  const dir = tempDir('plens-cap-');
  const file = join(dir, 'pipeline.yaml');
  writeFileSync(
    file,
    `name: cap
workspace: ${dir}/out
warehouse: ${dir}/w.duckdb
data:
  from: sample
scenarios:
  kind: md
  users: "0-1"
dialogues:
  user: "${SIM}"
  assistants: ["${SIM}"]
  settings: [base, base+all]
judge:
  model: "${judge}"
  dimensions: [task_completion]
limits:
  cells: 1
  concurrency: 2
  retry_delay_ms: 1
${maxCost}
statistics:
  lexical: []
report: false
`,
  );
  return file;
}

const step = (r: MakeJson, name: string) => r.steps.find((s) => s.step === name)!;

describe('plens make under a spend cap', () => {
  it('shares one cap across the dialogues and the judge, stops (exit 6), shows spend by role and model, and resumes with a higher cap', async () => {
    server = await startMockLlm({ reply: () => 'VERDICT: True\nEXPLANATION: the goal was met.' });
    const cap = 14;
    const file = pipeline(`openai:judge?base_url=${server.url}/v1&max_tokens=50&price_in=1000&price_out=1000`, `  max_cost: ${cap}`);
    const env = { env: { OPENAI_API_KEY: 'sk-cap' } };

    const first = await runCliJson<MakeJson>(['make', 'all', '-p', file, '--no-progress'], env);
    expect(first.code, first.stderr + first.stdout).toBe(6);
    const r1 = first.json;
    expect(r1).toMatchObject({ ok: true, spend_capped: true, max_cost_usd: cap, failed: [] });
    // The dialogues (about $10) fit under the cap; the judge got only what they left.
    expect(step(r1, 'dialogues')).toMatchObject({ status: 'ran', work: SCENARIOS * CELLS });
    expect(step(r1, 'judge')).toMatchObject({ status: 'ran', spend_capped: true });
    expect(step(r1, 'judge').detail).toContain('stopped at the spend cap of $14.00');
    expect(step(r1, 'warehouse')).toMatchObject({ status: 'not-run' });
    expect(step(r1, 'warehouse').detail).toContain('spend cap');
    const dialogueUsd = r1.spend.by_role['user agent']!.cost_usd + r1.spend.by_role['assistant']!.cost_usd;
    const judgeUsd = r1.spend.by_role['judge']!.cost_usd;
    const judged = step(r1, 'judge').work;
    expect(judged).toBeGreaterThan(0);
    expect(judged).toBeLessThan(SCENARIOS * CELLS);
    expect(Object.keys(r1.spend.by_model).sort()).toEqual(['openai:judge', 'sim:default']);
    expect(r1.spent_usd).toBeCloseTo(dialogueUsd + judgeUsd, 9);
    // One cap for the run: together they stay under it. A judge with a cap of its own would have
    // spent up to the whole $14 on top of the dialogues.
    expect(r1.spent_usd).toBeLessThanOrEqual(cap);
    const longest = Math.max(...server.requests.map((q) => q.messages[0]!.content.length));
    const oneJudgment = (Math.ceil((longest + 2500) / 4) + 200) * JUDGE_TOKEN_USD;
    expect(dialogueUsd).toBeGreaterThan(oneJudgment);
    expect(judgeUsd).toBeGreaterThan(cap - dialogueUsd - oneJudgment);
    expect(server.requests).toHaveLength(judged);

    const text = await runCli(['status', '-p', file]);
    expect(text.stdout).toMatch(/spend +(judge|user agent|assistant) \$[\d.]+, .* \| by model: .*openai:judge \$/);
    const status = await runCliJson<StatusJson>(['status', '-p', file]);
    expect(status.json.totals.dialogues).toMatchObject({ done: SCENARIOS * CELLS, pending: 0 });
    expect(status.json.totals.judge).toMatchObject({ done: judged, pending: SCENARIOS * CELLS - judged });
    expect(Object.keys(status.json.spend.by_role).sort()).toEqual(['assistant', 'judge', 'user agent']);
    expect(status.json.spend.by_role['judge']!.cost_usd).toBeCloseTo(judgeUsd, 9);
    expect(status.json.spend.by_role['user agent']!.cost_usd + status.json.spend.by_role['assistant']!.cost_usd).toBeCloseTo(dialogueUsd, 9);
    expect(status.json.spend.by_model['openai:judge']!.calls).toBe(judged);

    // A flag beats the file's limits.max_cost: the rest is judged, nothing is asked twice.
    const second = await runCliJson<MakeJson>(['make', 'all', '-p', file, '--max-cost', '1000', '--no-progress'], env);
    expect(second.code, second.stderr + second.stdout).toBe(0);
    expect(second.json).toMatchObject({ spend_capped: false, max_cost_usd: 1000 });
    expect(step(second.json, 'judge').work).toBe(SCENARIOS * CELLS - judged);
    expect(step(second.json, 'warehouse').status).toBe('ran');
    expect(Object.keys(second.json.spend.by_role)).toEqual(['judge']);
    expect(server.requests).toHaveLength(SCENARIOS * CELLS);
    expect(server.requests.every((q) => q.attempt === 0)).toBe(true);
  });

  it('a cap the dialogues reach stops them, and keeps the judge and the later steps from starting', async () => {
    const file = pipeline('sim:default?price_in=1&price_out=1', '  max_cost: 3');
    const r = await runCliJson<MakeJson>(['make', 'all', '-p', file, '--no-progress']);
    expect(r.code, r.stderr + r.stdout).toBe(6);
    expect(r.json.spend_capped).toBe(true);
    expect(step(r.json, 'dialogues')).toMatchObject({ spend_capped: true });
    expect(step(r.json, 'dialogues').work).toBeLessThan(SCENARIOS * CELLS);
    expect(step(r.json, 'dialogues').detail).toContain('stopped at the spend cap of $3.00');
    expect(['judge', 'warehouse', 'tables'].map((s) => step(r.json, s).status)).toEqual(['not-run', 'not-run', 'not-run']);
    expect(r.json.spent_usd).toBeLessThanOrEqual(3);
    const text = await runCli(['make', 'all', '-p', file, '--no-progress']);
    expect(text.code).toBe(6);
    expect(text.stdout).toMatch(/make: STOPPED at the spend cap of \$3\.00/);
  });

  it('refuses a cap when a model of the pipeline has no price (exit 2, naming it), even for a dry run', async () => {
    const file = pipeline('openai:unpriced-judge?base_url=http://127.0.0.1:9/v1', '  max_cost: 5');
    for (const extra of [[], ['--dry-run']]) {
      const r = await runCliJson<MakeJson>(['make', 'all', '-p', file, ...extra]);
      expect(r.code).toBe(2);
      expect(r.json.error).toMatchObject({ code: 'E_USAGE' });
      expect(r.json.error!.message).toContain('openai:unpriced-judge');
    }
    // A bad limits.max_cost is an input error at its line.
    const bad = pipeline('sim:default', '  max_cost: -2');
    const b = await runCli(['make', '-p', bad, '--dry-run']);
    expect(b.code).toBe(3);
    expect(b.stderr).toMatch(/max_cost/);
  });
});
