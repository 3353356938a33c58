import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCliInProcess, tempDir } from '../../helpers/cli.js';
import { sampleWorkspace } from '../../helpers/workspace.js';

/*
 * A plan and a cost estimate never need a key: with real-provider specs and every key variable
 * empty, --dry-run and `plens status` succeed, nothing is called and nothing is written. A model
 * whose spec gives no price is reported as "price unknown", never counted as free.
 */
const NO_KEYS = { OPENAI_API_KEY: '', ANTHROPIC_API_KEY: '' };
const ASSISTANT = 'openai:gpt-4o-mini?price_in=0.15&price_out=0.6';
const USER = 'anthropic:claude-3-5-sonnet-20241022';
const JUDGE = 'anthropic:claude-3-5-sonnet-20241022?price_in=3&price_out=15';

interface DryRun {
  planned: number;
  estimate: { calls: number; costUsd: number };
  price_unknown: string[];
}

describe('--dry-run with real providers and no API key', () => {
  it('dialogues: plans, estimates from the spec prices, names the model with no price, writes nothing', async () => {
    const ws = await sampleWorkspace();
    const args = ['dialogues', '-w', ws, '--assistant', ASSISTANT, '--user', USER, '--setting', 'base', '--dry-run'];
    const r = await runCliInProcess([...args, '--json'], { env: NO_KEYS });
    expect(r.code, r.stdout + r.stderr).toBe(0);
    const json = JSON.parse(r.stdout) as DryRun;
    expect(json.planned).toBe(49);
    expect(json.estimate.costUsd).toBeGreaterThan(0);
    expect(json.price_unknown).toEqual(['anthropic:claude-3-5-sonnet-20241022']);
    expect(existsSync(join(ws, 'dialogues'))).toBe(false);
    expect(existsSync(join(ws, 'cache'))).toBe(false);

    const text = await runCliInProcess(args, { env: NO_KEYS });
    expect(text.code).toBe(0);
    expect(text.stdout).toContain('for the priced models; price unknown for anthropic:claude-3-5-sonnet-20241022');
    // With no price at all, no dollar figure is printed.
    const unpriced = await runCliInProcess(['dialogues', '-w', ws, '--assistant', 'openai:gpt-4o-mini', '--user', USER, '--dry-run'], { env: NO_KEYS });
    expect(unpriced.code).toBe(0);
    expect(unpriced.stdout).toContain('cost: price unknown for anthropic:claude-3-5-sonnet-20241022, openai:gpt-4o-mini');
    expect(unpriced.stdout).not.toContain('$');
  });

  it('judge: plans and estimates over existing dialogues with no key', async () => {
    const ws = await sampleWorkspace();
    const made = await runCliInProcess(['dialogues', '-w', ws, '--assistant', 'sim:default', '--limit', '4', '--no-progress']);
    expect(made.code, made.stderr).toBe(0);
    const r = await runCliInProcess(['judge', '-w', ws, '--judge', JUDGE, '--dry-run', '--json'], { env: NO_KEYS });
    expect(r.code, r.stdout + r.stderr).toBe(0);
    const json = JSON.parse(r.stdout) as DryRun;
    expect(json.planned).toBe(4 * 6);
    expect(json.estimate.costUsd).toBeGreaterThan(0);
    expect(json.price_unknown).toEqual([]);
    expect(existsSync(join(ws, 'judgments'))).toBe(false);
  });

  it('plens make --dry-run and plens status on a real-provider pipeline with no key', async () => {
    const dir = tempDir('plens-nokey-');
    const file = join(dir, 'p.yaml');
    writeFileSync(
      file,
      `name: nokey
workspace: ${dir}/out
warehouse: ${dir}/w.duckdb
data:
  from: sample
scenarios:
  kind: md
  users: "0-1"
dialogues:
  user: "${USER}"
  assistants: ["${ASSISTANT}"]
  settings: [base]
judge:
  model: "${JUDGE}"
  dimensions: [task_completion]
statistics:
  lexical: []
report: false
`,
    );
    const plan = await runCliInProcess(['make', 'all', '-p', file, '--dry-run'], { env: NO_KEYS });
    expect(plan.code, plan.stdout + plan.stderr).toBe(0);
    expect(plan.stdout).toContain('price unknown for anthropic:claude-3-5-sonnet-20241022');
    expect(existsSync(join(dir, 'out', 'dialogues'))).toBe(false);
    const status = await runCliInProcess(['status', '-p', file, '--json'], { env: NO_KEYS });
    expect(status.code, status.stdout + status.stderr).toBe(0);
  });
});
