import { copyFileSync, existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ORIGINAL_MAKERS } from '../../../src/benchmarks/personabench/original-makers.js';
import type { PromptRecord } from '../../../src/benchmarks/personabench/build-prompts.js';
import { readPromptFiles } from '../../../src/benchmarks/personabench/import-prompts.js';
import { compareWithOriginal, runPersonaSelect } from '../../../src/benchmarks/personabench/select-stage.js';
import { repoRoot, tempDir } from '../../helpers/cli.js';
import { ORIGINAL, drawCorpus, originalAvailable, runMaker } from './original.js';

/*
 * The original-wording route (`persona select --original CHECKOUT`) against the original makers
 * run by hand: the nine files plens keeps must be byte for byte the files the makers write when
 * run directly, unmodified, on the same input with the same seed (a raw list going through
 * Raw_Data_Process.py first); prompts.jsonl must carry their prompt text line by line; and
 * plens's own selection must agree with every record. Only hashes are compared and printed,
 * never the original's text. Needs PERSONABENCH_ORIGINAL; skipped without it.
 */
const available = originalAvailable() && originalAvailable('Raw_Data_Process.py');

const sha = (file: string): string => createHash('sha256').update(readFileSync(file)).digest('hex');

/** The makers run directly, as a user of the original would: grouped input in, nine files out. */
function byHand(input: string, seed: number, raw: boolean): string {
  const dir = tempDir('plens-pb-byhand-');
  if (raw) {
    copyFileSync(input, join(dir, 'Raw_Data_Postized.json'));
    const r = spawnSync('/usr/bin/python3', [join(ORIGINAL, 'Raw_Data_Process.py')], {
      cwd: dir,
      encoding: 'utf8',
      env: { PATH: '/usr/bin:/bin', PYTHONIOENCODING: 'utf-8' },
    });
    if (r.status !== 0) throw new Error(r.stderr);
  } else copyFileSync(input, join(dir, 'merged_posts_remapped.json'));
  // A maker that finds nothing to select exits 1 and writes nothing; a crash is a test failure.
  for (const maker of ORIGINAL_MAKERS) {
    const r = runMaker(dir, maker.script, seed);
    if (r.status !== 0 && /Traceback/.test(r.stderr)) throw new Error(`${maker.script}: ${r.stderr.slice(-1000)}`);
  }
  return dir;
}

/** The JSON blocks a prompt embeds: from a line that is "{" or "[" to the first line that closes it. */
function jsonBlocks(text: string): string[] {
  const lines = text.split('\n');
  const blocks: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    const close = lines[i] === '{' ? '}' : lines[i] === '[' ? ']' : null;
    if (close === null) continue;
    const end = lines.indexOf(close, i + 1);
    if (end === -1) break;
    blocks.push(
      createHash('sha256')
        .update(lines.slice(i, end + 1).join('\n'))
        .digest('hex'),
    );
    i = end;
  }
  return blocks;
}

async function check(input: string, seed: number, raw: boolean): Promise<void> {
  const out = join(tempDir('plens-pb-route-'), 'selection');
  const summary = await runPersonaSelect({ from: input, out, fidelity: 'original', seed, original: ORIGINAL, python: '/usr/bin/python3' });
  const hand = byHand(input, seed, raw);
  const names = ORIGINAL_MAKERS.flatMap((m) => m.outputs).filter((name) => existsSync(join(hand, name)));
  expect(readdirSync(join(out, 'original-files')).sort()).toEqual([...names].sort());
  expect(
    summary.original!.files.length + summary.original!.stopped.reduce((n, s) => n + ORIGINAL_MAKERS.find((m) => m.script === s.script)!.outputs.length, 0),
  ).toBe(9);
  for (const name of names) expect(sha(join(out, 'original-files', name)), `${input} ${name}`).toBe(sha(join(hand, name)));

  // prompts.jsonl: the makers' prompt text, in the files' order.
  const theirs = names.flatMap((name) =>
    readFileSync(join(hand, name), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => {
        const v = JSON.parse(line) as { prompt?: string; prediction_task?: { prompt_text: string } };
        return v.prediction_task?.prompt_text ?? v.prompt!;
      }),
  );
  const ours = readFileSync(join(out, 'prompts.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => (JSON.parse(line) as { prompt: string }).prompt);
  expect(ours.length).toBe(theirs.length);
  expect(ours.map((p) => createHash('sha256').update(p).digest('hex'))).toEqual(theirs.map((p) => createHash('sha256').update(p).digest('hex')));

  // The JSON the 3.3 prompts embed is data: plens's own wording must carry the same blocks.
  const own = join(tempDir('plens-pb-own-'), 'selection');
  await runPersonaSelect({ from: input, out: own, fidelity: 'original', seed });
  const records = (file: string) =>
    readFileSync(file, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as { task: string; setting: string; prompt: string });
  const mine = records(join(own, 'prompts.jsonl'));
  const made = records(join(out, 'prompts.jsonl'));
  expect(mine.length).toBe(made.length);
  made.forEach((r, i) => {
    if (r.task === '3.3') expect(jsonBlocks(mine[i]!.prompt), `${input} ${r.setting} ${i}`).toEqual(jsonBlocks(r.prompt));
  });

  // plens's own selection agrees with every record the makers wrote.
  for (const [key, a] of Object.entries(summary.original!.agreement)) {
    expect(a.first_difference, `${input} ${key}`).toBeNull();
    expect(a.records.plens, `${input} ${key}`).toBe(a.records.original);
  }
}

describe.skipIf(!available)('PERSONA-bench --replay-order: an earlier run of the original, replayed', () => {
  it("plens with another seed, given the makers' NP-Conv files, agrees with every record of theirs", async () => {
    const dir = tempDir('plens-pb-replay-');
    for (const [seed, variants] of [
      [4, false],
      [5, false],
      [103, true],
    ] as const) {
      const input = join(dir, `corpus-${seed}.json`);
      writeFileSync(input, JSON.stringify(drawCorpus(seed, variants)));
      // The "earlier run": the makers under a seed plens is not told.
      const hand = byHand(input, 1000 + seed, false);
      const npFiles = [
        'WithConversationPrompts_ScorePrediction_PseudoRandomContext.jsonl',
        'WithConversationPrompts_PseudoRandomContext_ExactScorePrediction.jsonl',
      ]
        .map((name) => join(hand, name))
        .filter((f) => existsSync(f));
      const out = join(dir, `sel-${seed}`);
      await runPersonaSelect({ from: input, out, fidelity: 'original', seed: 0, replayOrder: npFiles });
      const theirs = (await readPromptFiles(npFiles)).records;
      const ours = readFileSync(join(out, 'prompts.jsonl'), 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as PromptRecord)
        .filter((r) => r.setting === 'NP-Conv' && r.task !== '3.3');
      for (const [key, a] of Object.entries(compareWithOriginal(ours, theirs))) {
        expect(a.first_difference, `seed ${seed} ${key}`).toBeNull();
        expect(a.records.plens, `seed ${seed} ${key}`).toBe(a.records.original);
      }
    }
  }, 120_000);
});

describe.skipIf(!available)("PERSONA-bench original route: the makers' nine files, byte for byte", () => {
  it('on the hand-made fixture (grouped) and the bundled sample (a raw list, grouped by Raw_Data_Process.py)', async () => {
    await check(join(repoRoot, 'test', 'fixtures', 'personabench', 'grouped.json'), 14, false);
    await check(join(repoRoot, 'data', 'personabench-sample', 'raw.json'), 5, true);
    // Shapes the original reads without complaint: entries that are not objects, replies that
    // are not a list, null comments, float/bool/string scores, selftext, created_utc.
    await check(join(repoRoot, 'test', 'fixtures', 'personabench', 'odd-shapes.json'), 2, false);
    // Non-ASCII and emoji, ISO week / date-only / basic / offset / 7-digit-fraction timestamps,
    // an empty latest author reply, a missing title, string/float/bool scores, _x and __x keys.
    await check(join(repoRoot, 'test', 'fixtures', 'personabench', 'edge-cases.json'), 3, false);
  }, 120_000);

  it('on drawn corpora, plain and with the other shapes the original reads', async () => {
    const dir = tempDir('plens-pb-route-drawn-');
    // PLENS_PB_ROUTE_SEEDS=1,2,105 draws others (100 and up: with the other shapes).
    const seeds = (process.env['PLENS_PB_ROUTE_SEEDS'] ?? '1,2,3,101,102').split(',').map(Number);
    for (const [seed, variants] of seeds.map((s) => [s, s >= 100] as const)) {
      const file = join(dir, `corpus-${seed}.json`);
      writeFileSync(file, JSON.stringify(drawCorpus(seed, variants)));
      await check(file, seed, false);
    }
  }, 300_000);
});
