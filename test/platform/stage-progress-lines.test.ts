import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startMockLlm, type MockLlmServer } from '../../src/testkit/mock-server.js';
import { cliPath, repoRoot, runCliProcess, tempDir } from '../helpers/cli.js';

// A stage command on its own (`plens dialogues`), with stderr a pipe as under nohup or a
// scheduler: the assistant is a real HTTP endpoint on 127.0.0.1 answering after 150 ms, so the
// stage runs for a few seconds and its progress lines show how far it is.

const SCENARIOS = 6; // users 0-1, MD (data/sample/README.md)

let server: MockLlmServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function workspace(): Promise<{ dir: string; assistant: string }> {
  server = await startMockLlm({ latencyMs: 150, keepRequests: false });
  const dir = tempDir('plens-stage-progress-');
  const file = join(dir, 'pipeline.yaml');
  writeFileSync(
    file,
    `name: stage-progress\nworkspace: ${dir}/out\nwarehouse: ${dir}/w.duckdb\ndata:\n  from: sample\nscenarios:\n  kind: md\n  users: "0-1"\n`,
  );
  const made = await runCliProcess(['make', 'scenarios', '-p', file, '--quiet']);
  expect(made.code, made.stderr).toBe(0);
  return { dir, assistant: `openai:slow?base_url=${server.url}/v1&price_in=1&price_out=2` };
}

const dialogues = (dir: string, assistant: string, ...extra: string[]) =>
  runCliProcess(['dialogues', '-w', join(dir, 'out'), '--assistant', assistant, '--user', 'sim:default', '--concurrency', '2', ...extra], {
    env: { OPENAI_API_KEY: 'sk-progress' },
  });

/** `progress 0:00:02 dialogues base | openai_slow: 2/6 (33%), 1.07/s, ETA 0:00:04, 0 failed, 15.4k tokens, $0.0062` */
const CELL_LINE =
  /^progress \d+:\d\d:\d\d dialogues base \| openai_slow: (\d+)\/(\d+) \((\d+)%\), [\d.]+\/s, ETA (?:\d+:\d\d:\d\d|\?), (\d+) failed, [\d.]+[kM]? tokens, \$[\d.]+$/gm;

describe('a stage command with stderr not a terminal', () => {
  it('writes a progress line when the stage starts and ends, and every --progress-interval seconds how far it is', async () => {
    const { dir, assistant } = await workspace();
    const r = await dialogues(dir, assistant, '--progress-interval', '0.2');
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stderr.trimEnd().split('\n');
    // Nothing else on stderr; the summary is on stdout.
    expect(
      lines.every((l) => l.startsWith('progress ')),
      r.stderr,
    ).toBe(true);
    expect(lines[0]).toMatch(/^progress \d+:\d\d:\d\d dialogues: started$/);
    expect(lines.at(-1)).toMatch(new RegExp(`^progress \\d+:\\d\\d:\\d\\d dialogues: done in \\d+\\.\\d s, ${SCENARIOS}/${SCENARIOS} \\(100%\\)`));
    const periodic = [...r.stderr.matchAll(CELL_LINE)];
    expect(periodic.length).toBeGreaterThan(1);
    let before = 0;
    for (const [, done, total, pct, failed] of periodic) {
      expect(Number(total)).toBe(SCENARIOS);
      expect(Number(done)).toBeGreaterThanOrEqual(before);
      expect(Number(pct)).toBe(Math.floor((100 * Number(done)) / SCENARIOS));
      expect(Number(failed)).toBe(0);
      before = Number(done);
    }
    expect(r.stdout).toMatch(/6 ok, 0 failed of 6 planned/);
  });

  it('says the stage stopped when Ctrl-C ends it early, and exits 130', async () => {
    const { dir, assistant } = await workspace();
    const child = spawn(
      process.execPath,
      [cliPath, 'dialogues', '-w', join(dir, 'out'), '--assistant', assistant, '--user', 'sim:default', '--concurrency', '1', '--progress-interval', '0.2'],
      { cwd: repoRoot, env: { ...process.env, PLENS_WORKSPACE: '', PLENS_STATE_DIR: 'off', OPENAI_API_KEY: 'sk-progress' }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stderr = '';
    const code = await new Promise<number | null>((resolve) => {
      child.stderr.on('data', (d) => {
        stderr += d;
        // Once a dialogue is done, the run is stopped as a user would stop it.
        if (/: [1-5]\/6 /.test(stderr) && !child.killed) child.kill('SIGINT');
      });
      child.on('close', resolve);
    });
    expect(code, stderr).toBe(130);
    expect(stderr).toMatch(/^progress \d+:\d\d:\d\d dialogues: stopped in \d+\.\d s, [1-5]\/6 /m);
    expect(stderr).not.toMatch(/dialogues: done/);
  });

  it('writes none with --progress-interval 0, none for a bad flag, none when nothing is left to do', async () => {
    const { dir, assistant } = await workspace();
    const off = await dialogues(dir, assistant, '--progress-interval', '0');
    expect(off.code, off.stderr).toBe(0);
    expect(off.stderr).not.toMatch(/^progress /m);
    const again = await dialogues(dir, assistant, '--progress-interval', '0.2');
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).not.toMatch(/^progress /m);
    const bad = await dialogues(dir, 'openai:slow?base_url=/v1', '--progress-interval', '0.2');
    expect(bad.code).toBe(2);
    expect(bad.stderr).not.toMatch(/^progress /m);
    expect(bad.stderr).toMatch(/E_USAGE/);
  });
});
