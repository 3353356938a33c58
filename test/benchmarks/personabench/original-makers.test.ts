import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ORIGINAL_MAKERS } from '../../../src/benchmarks/personabench/original-makers.js';
import { runPersonaSelect } from '../../../src/benchmarks/personabench/select-stage.js';
import { repoRoot, runCli, tempDir } from '../../helpers/cli.js';
import { standIn } from '../../helpers/personabench-standin.js';

/*
 * How `persona select --original` runs scripts and reports them, on a stand-in checkout whose
 * scripts are a few lines of our own Python (the fidelity of the route itself is tested against
 * the real original in test/differential/personabench/original-route.test.ts). Each stand-in
 * writes what it was given, so the test sees the seed, the input bytes and the environment.
 */
const sample = join(repoRoot, 'test', 'fixtures', 'personabench', 'grouped.json');
const python = '/usr/bin/python3';
const hasPython = existsSync(python);

describe.skipIf(!hasPython)('persona select --original: running the original scripts', () => {
  it('seeds each script with --seed, gives it the input byte for byte and no API keys, and keeps its files', async () => {
    const out = join(tempDir('plens-pb-route-'), 'sel');
    process.env['OPENAI_API_KEY'] = 'sk-test-never-passed';
    try {
      const checkout = standIn();
      const summary = await runPersonaSelect({ from: sample, out, fidelity: 'original', seed: 7, original: checkout, python });
      expect(summary.original!.files).toHaveLength(9);
      expect(summary.original!.stopped).toEqual([]);
      const line = JSON.parse(readFileSync(join(out, 'original-files', 'WithPseudoRandomConversationPrompts_BodyPrediction.jsonl'), 'utf8')) as Record<
        string,
        unknown
      >;
      // random.seed(7); random.random() in CPython.
      expect(line['draw']).toBe(0.32383276483316237);
      expect(line['env']).toEqual([]);
      expect(line['size']).toBe(readFileSync(sample).length);
      const prompts = readFileSync(join(out, 'prompts.jsonl'), 'utf8').trim().split('\n');
      expect(prompts).toHaveLength(9);
      // Each record names the kept copy of its file (the predictions' partitions are keyed by it):
      // selecting again gives the same records, not a new scratch path.
      const sources = prompts.map((l) => (JSON.parse(l) as { source: { file: string } }).source.file);
      for (const file of sources) expect(file.startsWith(join(out, 'original-files'))).toBe(true);
      await runPersonaSelect({ from: sample, out, fidelity: 'original', seed: 7, original: checkout, python });
      expect(readFileSync(join(out, 'prompts.jsonl'), 'utf8').trim().split('\n')).toEqual(prompts);
    } finally {
      delete process.env['OPENAI_API_KEY'];
    }
  });

  it('a maker that stops (as the original does when a setting has no samples) leaves its files out and says so', async () => {
    const out = join(tempDir('plens-pb-route-'), 'sel');
    const checkout = standIn({
      '3.2_RandPrompt.py': 'import sys\nprint("No valid samples found after initial collection and filtering. Exiting.", file=sys.stderr)\nsys.exit(1)',
    });
    const summary = await runPersonaSelect({ from: sample, out, fidelity: 'original', seed: 1, original: checkout, python });
    expect(summary.original!.stopped).toEqual([
      { script: '3.2_RandPrompt.py', exit: 'exit 1', message: 'No valid samples found after initial collection and filtering. Exiting.' },
    ]);
    expect(summary.original!.files).toHaveLength(8);
    expect(existsSync(join(out, 'original-files', 'WithConversationPrompts_PseudoRandomContext_ExactScorePrediction.jsonl'))).toBe(false);
  });

  it('when every script fails, or one is missing, nothing is written and the error names the script', async () => {
    const out = join(tempDir('plens-pb-route-'), 'sel');
    const broken = Object.fromEntries(ORIGINAL_MAKERS.map((m) => [m.script, 'raise SystemExit("this Python is too old")']));
    await expect(runPersonaSelect({ from: sample, out, fidelity: 'original', seed: 1, original: standIn(broken), python })).rejects.toThrow(
      /every original maker failed; the first said:\nthis Python is too old/,
    );
    expect(existsSync(out)).toBe(false);

    const r = await runCli(['persona', 'select', '--from', sample, '--out', out, '--original', join(repoRoot, 'data')]);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/the original's checkout has no PromptMakers[\\/]3\.1PromptMaker\.py/);
    expect(r.stderr).toMatch(/branch Latest/);
    expect(existsSync(out)).toBe(false);
  });

  it("a raw list goes through the checkout's Raw_Data_Process.py first; --fidelity fixed is refused", async () => {
    const out = join(tempDir('plens-pb-route-'), 'sel');
    const summary = await runPersonaSelect({
      from: join(repoRoot, 'data', 'personabench-sample', 'raw.json'),
      out,
      fidelity: 'original',
      seed: 1,
      original: standIn(),
      python,
    });
    const line = JSON.parse(readFileSync(join(out, 'original-files', 'WithConversationPrompts_BodyPrediction_v2.jsonl'), 'utf8')) as Record<string, unknown>;
    // The stand-in grouping script writes compact JSON: its size, not the raw file's, reaches the makers.
    const raw = JSON.parse(readFileSync(join(repoRoot, 'data', 'personabench-sample', 'raw.json'), 'utf8')) as unknown[];
    expect(line['size']).not.toBe(readFileSync(join(repoRoot, 'data', 'personabench-sample', 'raw.json')).length);
    expect(raw.length).toBeGreaterThan(0);
    expect(summary.original!.files).toHaveLength(9);

    const r = await runCli(['persona', 'select', '--from', sample, '--out', join(out, 'x'), '--fidelity', 'fixed', '--original', standIn()]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/no fixed variant/);
  });
});
