import { existsSync, mkdirSync, readdirSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Database } from '../../../src/db/database.js';
import { startMockLlm, type MockLlmServer } from '../../../src/testkit/mock-server.js';
import { repoRoot, runCli, tempDir } from '../../helpers/cli.js';

/**
 * The warehouse pools every answer folder of a workspace. A model's cell answered once with one
 * setting (here requests: chat) and again with another (requests: original) would be counted as one
 * cell: the second run is refused, in its plan, naming the folder (status shows it as blocked);
 * moved out, its answers and their checks leave the tables.
 */
describe('prefeval: answers made with other settings in the same workspace', () => {
  let mock: MockLlmServer;
  let dir: string;
  const pipeline = (requests: 'chat' | 'original') => {
    const file = join(dir, `p-${requests}.yaml`);
    writeFileSync(
      file,
      [
        'name: mixed',
        `workspace: ${dir}/out`,
        `warehouse: ${dir}/w.duckdb`,
        'benchmark: prefeval',
        'prefeval:',
        `  data: ${join(repoRoot, 'data', 'prefeval-sample')}`,
        '  topics: [travel_restaurant]',
        '  limit: 2',
        '  inter_turns: [2]',
        `  requests: ${requests}`,
        `  models: ["openai:gpt-4o-mini?base_url=${mock.url}/v1"]`,
        '  judge: sim:default',
        'report: false',
        '',
      ].join('\n'),
    );
    return file;
  };
  const env = { OPENAI_API_KEY: 'sk-plens-mixed-test' };
  const results = async () => {
    const db = await Database.open(join(dir, 'w.duckdb'), { readOnly: true });
    try {
      return await db.all<{ n: number; n_checks: number }>(
        'SELECT (SELECT n::INT FROM prefeval_results) AS n, (SELECT count(*)::INT FROM prefeval_checks) AS n_checks',
      );
    } finally {
      await db.close();
    }
  };

  beforeAll(async () => {
    mock = await startMockLlm({});
    dir = tempDir('plens-prefeval-mixed-');
  });
  afterAll(async () => mock?.close());

  it('refuses the second setting in the plan and calls nothing; moved out, the tables hold the new answers alone', async () => {
    const first = await runCli(['make', 'warehouse', '-p', pipeline('chat'), '--no-progress'], { env });
    expect(first.code, first.stderr).toBe(0);
    expect(await results()).toEqual([{ n: 2, n_checks: 2 }]);
    const sent = mock.requests.length;

    const plan = await runCli(['make', 'all', '-p', pipeline('original'), '--dry-run'], { env });
    expect(plan.code).toBe(2);
    const root = join(dir, 'out', 'prefeval', 'responses');
    const [old] = readdirSync(root);
    expect(plan.stderr).toContain(join(root, old!));
    expect(plan.stderr).toMatch(/other settings \(prompts, requests or retrieval\).*count as one/);
    // status reports the clash as the state the pipeline is in, with make's reason and hint.
    const status = await runCli(['status', '-p', pipeline('original')], { env });
    expect(status.code, status.stderr).toBe(0);
    expect(status.stdout).toMatch(/^blocked {4}prefeval: this folder holds .*other settings/m);
    expect(status.stdout).toContain(join(root, old!));
    expect(status.stdout).toMatch(/^ {2}hint: move those folders out of the workspace/m);
    const json = await runCli(['status', '-p', pipeline('original'), '--json'], { env });
    expect(json.code, json.stderr).toBe(0);
    expect(JSON.parse(json.stdout)).toMatchObject({
      ok: true,
      responses: [],
      blocked: { message: expect.stringContaining(join(root, old!)), hint: expect.any(String) },
    });
    const run = await runCli(['make', 'warehouse', '-p', pipeline('original'), '--no-progress'], { env });
    expect(run.code).toBe(2);
    expect(mock.requests).toHaveLength(sent);

    mkdirSync(join(dir, 'kept'));
    renameSync(join(root, old!), join(dir, 'kept', old!));
    const again = await runCli(['make', 'warehouse', '-p', pipeline('original'), '--no-progress'], { env });
    expect(again.code, again.stderr).toBe(0);
    // The new answers alone: 2 records and their checks (the judge's partition still holds the old ones).
    expect(await results()).toEqual([{ n: 2, n_checks: 2 }]);
    expect(mock.requests.length).toBeGreaterThan(sent);
    expect(mock.requests.slice(sent).every((r) => !r.systemSent && r.temperature === undefined && r.maxTokens === undefined)).toBe(true);
    expect(existsSync(join(dir, 'kept', old!))).toBe(true);
  });
});
