import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startMockLlm, type MockLlmServer } from '../../src/testkit/mock-server.js';
import { cliPath, repoRoot, runCli, runCliProcess, tempDir } from '../helpers/cli.js';

// `plens make`'s progress (src/platform/progress-view.ts) over a real two-cell grid: the assistant is
// a real HTTP endpoint on 127.0.0.1 that answers after 100 ms, so each cell runs for a second or
// two and both run at once (limits.cells: 2). The CLI runs as its own process (dist/): once with
// stderr a pipe (a log), once under a pseudo-terminal (script).

const SCENARIOS = 6; // users 0-1, MD (data/sample/README.md)
const CELLS = ['base', 'base+all'];

let server: MockLlmServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function pipeline(): Promise<{ file: string; env: Record<string, string> }> {
  server = await startMockLlm({ latencyMs: 100, keepRequests: false });
  const dir = tempDir('plens-progress-');
  const file = join(dir, 'pipeline.yaml');
  writeFileSync(
    file,
    `name: progress
workspace: ${dir}/out
warehouse: ${dir}/w.duckdb
data:
  from: sample
scenarios:
  kind: md
  users: "0-1"
dialogues:
  user: sim:default
  assistants: ["openai:slow?base_url=${server.url}/v1&price_in=1&price_out=2"]
  settings: [${CELLS.join(', ')}]
judge:
  model: sim:default
  dimensions: [task_completion]
limits:
  cells: 2
  concurrency: 2
  retries: 0
statistics:
  lexical: []
report: false
`,
  );
  return { file, env: { OPENAI_API_KEY: 'sk-progress' } };
}

/** `progress 0:00:01 dialogues base | openai_slow: 2/6 (33%), 1.20/s, ETA 0:00:03, 0 failed, 1.2k tokens, $0.0012` */
const CELL_LINE =
  /^progress \d+:\d\d:\d\d dialogues (base|base\+all) \| openai_slow: (\d+)\/(\d+) \((\d+)%\), ([\d.]+)\/s, ETA (\d+:\d\d:\d\d|\?), (\d+) failed, ([\d.]+[kM]?) tokens, \$([\d.]+)$/gm;

describe('plens make progress', () => {
  it('with stderr not a terminal: a line when each step starts and ends, and every --progress-interval seconds one per running cell', async () => {
    const { file, env } = await pipeline();
    const r = await runCliProcess(['make', 'judge', '-p', file, '--progress-interval', '0.2'], { env });
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stderr.split('\n').filter((l) => l.startsWith('progress '));
    // Every line is a progress line (nothing else was written to stderr).
    expect(lines.length).toBe(r.stderr.trimEnd().split('\n').length);
    for (const step of ['import', 'scenarios', 'dialogues', 'judge']) {
      expect(r.stderr).toMatch(new RegExp(`^progress \\d+:\\d\\d:\\d\\d ${step}: started$`, 'm'));
      expect(r.stderr).toMatch(new RegExp(`^progress \\d+:\\d\\d:\\d\\d ${step}: done in \\d+\\.\\d s`, 'm'));
    }
    // The periodic lines: at least one per cell, with sane numbers.
    const periodic = [...r.stderr.matchAll(CELL_LINE)];
    expect(periodic.length).toBeGreaterThan(0);
    for (const [, , done, total, pct, rate, , failed, , cost] of periodic) {
      expect(Number(total)).toBe(SCENARIOS);
      expect(Number(done)).toBeLessThanOrEqual(SCENARIOS);
      expect(Number(pct)).toBe(Math.floor((100 * Number(done)) / SCENARIOS));
      expect(Number(rate)).toBeGreaterThanOrEqual(0);
      expect(Number(failed)).toBe(0);
      expect(Number(cost)).toBeGreaterThanOrEqual(0);
    }
    // The step's total over both cells, then its end with what it did.
    expect(r.stderr).toMatch(/^progress \S+ dialogues total \(\d running, \d finished so far\): \d+\/\d+ \(\d+%\), [\d.]+\/s, 0 failed, /m);
    const end = /^progress \S+ dialogues: done in [\d.]+ s, (\d+)\/(\d+) \(100%\), [\d.]+\/s, 0 failed, ([\d.]+)k tokens, \$([\d.]+)$/m.exec(r.stderr);
    expect(end, r.stderr).not.toBeNull();
    expect(Number(end![1])).toBe(SCENARIOS * CELLS.length);
    expect(Number(end![2])).toBe(SCENARIOS * CELLS.length);
    expect(Number(end![4])).toBeGreaterThan(0);
    // The judge's stage reports under its own name.
    expect(r.stderr).toMatch(/^progress \S+ judge: done in [\d.]+ s, \d+\/\d+ \(100%\)/m);

    // A rerun finds everything up to date: each step still says it started and ended.
    const again = await runCliProcess(['make', 'judge', '-p', file], { env });
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toMatch(/^progress \S+ dialogues: up to date in [\d.]+ s$/m);
    // 0 turns the lines off, as a flag or from the environment; so do --quiet and --no-progress.
    for (const off of [
      runCli(['make', 'judge', '-p', file, '--progress-interval', '0'], { env }),
      runCli(['make', 'judge', '-p', file], { env: { ...env, PLENS_PROGRESS_INTERVAL: '0' } }),
      runCli(['make', 'judge', '-p', file, '--quiet'], { env }),
      runCli(['make', 'judge', '-p', file, '--no-progress'], { env }),
    ]) {
      const o = await off;
      expect(o.code, o.stderr).toBe(0);
      expect(o.stderr).not.toContain('progress ');
    }
    // A bad interval is refused where it came from.
    const badFlag = await runCli(['make', 'judge', '-p', file, '--progress-interval', '-1'], { env });
    expect(badFlag.code).toBe(2);
    expect(badFlag.stderr).toContain('--progress-interval must be a number of seconds >= 0');
    const badEnv = await runCli(['make', 'judge', '-p', file], { env: { ...env, PLENS_PROGRESS_INTERVAL: 'often' } });
    expect(badEnv.code).toBe(2);
    expect(badEnv.stderr).toContain('PLENS_PROGRESS_INTERVAL="often" must be a number of seconds >= 0');
  });

  it('on a terminal: one live view over both running cells, redrawn in place', async () => {
    const { file, env } = await pipeline();
    // script(1) runs the CLI under a pseudo-terminal and copies what it shows to our stdout.
    const command = `stty cols 160 rows 40; exec ${process.execPath} ${cliPath} make dialogues -p ${file}`;
    const r = await new Promise<{ code: number; out: string }>((resolve, reject) => {
      const child = spawn('script', ['-qfec', command, '/dev/null'], {
        cwd: repoRoot,
        env: { ...process.env, PLENS_WORKSPACE: '', PLENS_WAREHOUSE: '', PLENS_STATE_DIR: 'off', ...env },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let out = '';
      child.stdout.on('data', (d) => (out += d));
      child.stderr.on('data', (d) => (out += d));
      child.on('error', reject);
      child.on('close', (code) => resolve({ code: code ?? -1, out: out.replace(/\r\n/g, '\n') }));
    });
    expect(r.code, r.out).toBe(0);
    // Each redraw moves up over the block it drew and clears to the end of the screen.
    const REDRAW = /\u001b\[\d+A\u001b\[0J/;
    const frames = r.out.split(REDRAW);
    expect(frames.length).toBeGreaterThan(2);
    // A frame with the step's line and a line per running cell, both cells at once.
    const both = frames.find(
      (f) =>
        /^dialogues \d+:\d\d:\d\d \| 2 running, \d finished so far \| \d+\/\d+ /m.test(f) &&
        CELLS.every((c) => new RegExp(`^ {2}dialogues ${c.replace('+', '\\+')} \\| openai_slow +\\[[#-]{20}\\] \\d+/${SCENARIOS} \\(\\d+%\\) `, 'm').test(f)),
    );
    expect(both, r.out.slice(0, 4000)).toBeDefined();
    // What the terminal shows at the end: the view was drawn over itself and cleared, the step's own
    // line took its place; no progress lines (those are for a log).
    const screen = render(r.out);
    expect(
      screen.filter((l) => /\d+ running, \d+ finished so far/.test(l)),
      screen.join('\n'),
    ).toEqual([]);
    expect(
      screen.some((l) => /^dialogues +12 new dialogue\(s\) in 2 of 2 cell\(s\)/.test(l)),
      screen.join('\n'),
    ).toBe(true);
    expect(screen.some((l) => l.startsWith('progress '))).toBe(false);
  });
});

/**
 * The lines a terminal shows after this output: text, newlines, carriage returns, and the cursor
 * and erase sequences the progress views use (up, column, save/restore, erase to the end of the
 * line or the screen). Others (cursor visibility, wrapping) change nothing shown.
 */
function render(out: string): string[] {
  const lines: string[] = [''];
  let row = 0;
  let col = 0;
  let saved = { row: 0, col: 0 };
  const put = (ch: string) => {
    while (lines.length <= row) lines.push('');
    const line = lines[row]!.padEnd(col);
    lines[row] = line.slice(0, col) + ch + line.slice(col + 1);
    col++;
  };
  for (let i = 0; i < out.length; i++) {
    const ch = out[i]!;
    if (ch === '\u001b') {
      const seq = /^\u001b(?:\[([0-9;?]*)([A-Za-z])|([78]))/.exec(out.slice(i));
      if (!seq) continue;
      i += seq[0].length - 1;
      const n = Number(seq[1] || '0');
      if (seq[3] === '7') saved = { row, col };
      else if (seq[3] === '8') ({ row, col } = saved);
      else if (seq[2] === 'A') row = Math.max(0, row - Math.max(1, n));
      else if (seq[2] === 'G') col = Math.max(0, n - 1);
      else if (seq[2] === 'K') lines[row] = (lines[row] ?? '').slice(0, col);
      else if (seq[2] === 'J') lines.splice(row, lines.length, (lines[row] ?? '').slice(0, col));
    } else if (ch === '\n') {
      row++;
      col = 0;
      while (lines.length <= row) lines.push('');
    } else if (ch === '\r') col = 0;
    else put(ch);
  }
  return lines.map((l) => l.trimEnd()).filter((l) => l !== '');
}
