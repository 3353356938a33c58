import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { logEval31, logEval32, pythonFileLines } from '../../../src/benchmarks/personabench/logeval.js';
import { runScoreOutputs } from '../../../src/benchmarks/personabench/score-outputs.js';
import { csvRow, pythonFloatRepr } from '../../../src/core/python-format.js';
import { runCli, tempDir } from '../../helpers/cli.js';

// LogEval's rules on hand-made outputs files, values worked out by hand (the spec's toy
// checks, §5.6). The scripts themselves are compared in test/differential/personabench/logeval.test.ts.
const lines = (...records: unknown[]) => pythonFileLines(records.map((r) => (typeof r === 'string' ? r : JSON.stringify(r))).join('\n'));

describe('Python number and CSV formatting', () => {
  it('prints floats as repr does', () => {
    const cases: Array<[number, string]> = [
      [0, '0.0'],
      [1, '1.0'],
      [-0, '-0.0'],
      [0.1, '0.1'],
      [1e-5, '1e-05'],
      [0.0001, '0.0001'],
      [1e16, '1e+16'],
      [1.5e16, '1.5e+16'],
      [123456789012345.6, '123456789012345.6'],
      [2 / 3, '0.6666666666666666'],
      [1.2345e-7, '1.2345e-07'],
      [1e100, '1e+100'],
      [Number.NaN, 'nan'],
      [Number.NEGATIVE_INFINITY, '-inf'],
    ];
    for (const [x, want] of cases) expect(pythonFloatRepr(x), String(x)).toBe(want);
  });

  it('quotes CSV fields as the csv module does', () => {
    expect(csvRow(['a,b', 'say "hi"', 'plain', 'two\nlines', ''], '\r\n')).toBe('"a,b","say ""hi""",plain,"two\nlines",\r\n');
  });

  it('splits lines as Python text files do (\\n, \\r\\n and a lone \\r)', () => {
    expect(pythonFileLines('a\r\nb\rc\n\nd').map((l) => l.text)).toEqual(['a', 'b', 'c', '', 'd']);
    expect(pythonFileLines('a\n').map((l) => l.text)).toEqual(['a']);
  });
});

describe('LogEval3.1', () => {
  it("the spec's toy check: true [neg, pos, pos], pred [neg, pos, neg]", () => {
    const r = logEval31(
      lines(
        { output: 'negative', true_label: 'negative', subreddit: 'books' },
        { output: '<think>negative</think>Positive', true_label: 'Positive', subreddit: 'books' },
        { output: 'positive then NEGATIVE', true_label: 'positive', subreddit: 'books' },
      ),
    );
    const all = r.rows.at(-1)!;
    expect(all.domain).toBe('ALL');
    expect(all.accuracy).toBeCloseTo(2 / 3, 15);
    expect(all.f1_score).toBeCloseTo(2 / 3, 15);
    expect(all.mcc).toBeCloseTo(0.5, 15);
    expect(r.mcc_integers).toBe(false);
  });

  it('ignores what the script ignores; a null domain counts in ALL only; one class: binary F1, MCC 0', () => {
    const r = logEval31(
      lines(
        { output: 'positive', true_label: 'positive', subreddit: 'b' },
        { output: 'negative', true_label: 'positive', subreddit: 'b' },
        { output: 'positive', true_label: 'positive', subreddit: null },
        { output: '中negative', true_label: 'negative', subreddit: 'a' }, // no whole-word match
        { output: null, true_label: 'negative' },
        { output: 'negative', true_label: 5 },
        { output: 'negative', true_label: 'neg' },
        'not json',
        '',
        { output: 'positive', true_label: 'positive', domain: 'a' },
      ),
    );
    expect(r.ignored).toBe(6);
    expect(r.processed).toBe(4);
    expect(r.rows.map((x) => [x.domain, x.count])).toEqual([
      ['a', 1],
      ['b', 2],
      ['ALL', 4],
    ]);
    // b: truth [pos, pos], pred [pos, neg]: binary F1 for positive = 2/3.
    expect(r.rows[1]).toMatchObject({ accuracy: 0.5, mcc: 0 });
    expect(r.rows[1]!.f1_score).toBeCloseTo(2 / 3, 15);
    expect(r.mcc_integers).toBe(true);
  });
});

describe('LogEval3.2', () => {
  it("the spec's toy check: true [-20, 15], pred [-12, 10]", () => {
    const r = logEval32(
      lines({ output: 'about -12 points', true_label: -20, subreddit: 's' }, { output: '<think>99</think>10', true_label: '15', subreddit: 's' }),
    );
    expect(r.stop).toBeNull();
    expect(r.rows.at(-1)).toEqual({ domain: 'ALL', rmse: Math.sqrt((64 + 25) / 2), mae: 6.5, count: 2 });
  });

  it('reads labels as float() does, numbers as the last -?\\d+(\\.\\d+)?; stops where the script raises', () => {
    const r = logEval32(
      lines(
        { output: '.5', true_label: ' 1_0 ', subreddit: 's' }, // pred 5, true 10
        { output: 'score 1e3', true_label: true, subreddit: 's' }, // pred 3, true 1
        { output: '１２', true_label: 'abc', subreddit: 's' }, // label ignored
        { output: 'none', true_label: 3, subreddit: 's' }, // no number
      ),
    );
    expect(r.ignored).toBe(2);
    expect(r.rows.at(-1)).toMatchObject({ count: 2, mae: 3.5 });
    const stopped = logEval32(lines({ output: '1', true_label: 1 }, { output: null, true_label: 1 }));
    expect(stopped.stop).toEqual({ line: 2, reason: 'an output that is not text (re.sub raises)' });
    expect(logEval32(lines({ output: '1', true_label: 1 }, { output: null, true_label: 1 }), { skipInvalid: true }).rows.at(-1)!.count).toBe(1);
  });
});

describe("the API evaluators' figures on an outputs file", () => {
  it('3.1/GPT.py: only an exact label parses, unparsed replies are counted, domains lower-cased', async () => {
    const file = join(tempDir('plens-logeval-api-'), 'o.jsonl');
    writeFileSync(
      file,
      [
        { output: ' Positive\n', true_label: 'positive', subreddit: 'Books' },
        { output: 'I think negative', true_label: 'negative', subreddit: 'books' },
        { output: 'negative', true_label: 'positive', subreddit: 'books' },
        { output: 'negative', true_label: 'neg', subreddit: 'books' },
      ]
        .map((r) => JSON.stringify(r))
        .join('\n'),
    );
    const r = await runScoreOutputs({ file, task: '3.1', out: null, cacheDir: tempDir('plens-cache-') });
    expect(r.api).toMatchObject({ script: '3.1/GPT.py', parsed: 2, unparsed: 1 });
    expect(r.api!.rows).toEqual([
      { domain: 'books', count: 2, accuracy: 0.5, f1: 2 / 3, mcc: 0 },
      { domain: 'ALL', count: 2, accuracy: 0.5, f1: 2 / 3, mcc: 0 },
    ]);
  });
});

describe('persona score --outputs (CLI)', () => {
  it('3.3 without SBERT: error rows, list outputs, think blocks, CSVs with a BOM and CRLF', async () => {
    const dir = tempDir('plens-logeval-cli-');
    const file = join(dir, 'DS_3.3_results.jsonl');
    writeFileSync(
      file,
      [
        { output: 'the cat sat', true_label: 'the cat sat', subreddit: 'b' },
        { output: ['  ', 'the dog', 'x'], true_label: 'the cat', subreddit: 'b' },
        { output: '<think>hmm</think>   ', true_label: 'the cat', subreddit: 'a' },
        { output: 'Error: Max retries reached', true_label: 'x', subreddit: 'a' },
        { output: '', true_label: 'x', subreddit: 'a' },
        { output: 'y', true_label: null, subreddit: 'a' },
      ]
        .map((r) => JSON.stringify(r))
        .join('\n'),
    );
    const out = join(dir, 'csv');
    const r = await runCli(['persona', 'score', '--outputs', file, '--task', '3.3', '--out', out, '--json']);
    expect(r.code, r.stderr).toBe(0);
    const summary = JSON.parse(r.stdout) as { logeval: { summary: Array<Record<string, unknown>> } };
    expect(summary.logeval.summary.map((s) => [s['identifier'], s['count'], s['output_errors'], s['valid_evals']])).toEqual([
      ['a', 4, 4, 0],
      ['b', 2, 0, 2],
      ['All Data', 6, 4, 2],
    ]);
    const csv = readFileSync(join(out, 'DS_3.3_results.LogEval3.3.summary.csv'), 'utf8');
    expect(csv.startsWith('\ufeffScope,Identifier,count,output_errors,avg_rougeL,')).toBe(true);
    expect(csv).toContain('\r\nDomain,a,4,4,0.0,0.0,0,0.0,0,0.0,0\r\n');
    const individual = readFileSync(join(out, 'DS_3.3_results.LogEval3.3.individual.csv'), 'utf8').split('\r\n');
    // Two scored rows and two error rows ("" and the null label have no row).
    expect(individual.filter((l) => l.includes('Empty or Error Output'))).toHaveLength(2);
    expect(individual[1]).toMatch(/^b,\.\.\.,the cat sat,the cat sat,0\.0,1\.0,1\.0,/);
    expect(individual[2]).toMatch(/^b,\.\.\.,the cat,the dog,/);
  });

  it('needs --task with --outputs; a 3.2 file the script cannot read stops with its line', async () => {
    const dir = tempDir('plens-logeval-cli-');
    const file = join(dir, 'o.jsonl');
    writeFileSync(file, '{"output": "1", "true_label": 2}\n\n{"output": "1", "true_label": 2}\n');
    const noTask = await runCli(['persona', 'score', '--outputs', file]);
    expect(noTask.code).toBe(2);
    expect(noTask.stderr).toMatch(/--outputs needs --task/);
    const r = await runCli(['persona', 'score', '--outputs', file, '--task', '3.2', '--out', join(dir, 'csv')]);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/o\.jsonl:2/);
    expect(r.stderr).toMatch(/--skip-invalid/);
    const skipped = await runCli(['persona', 'score', '--outputs', file, '--task', '3.2', '--out', join(dir, 'csv'), '--skip-invalid']);
    expect(skipped.code, skipped.stderr).toBe(0);
    expect(readFileSync(join(dir, 'csv', 'o.LogEval3.2.csv'), 'utf8')).toBe('domain,rmse,mae,count\nUNKNOWN,1.0,1.0,2\nALL,1.0,1.0,2\n');
  });
});
