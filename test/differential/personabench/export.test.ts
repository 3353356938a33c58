import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runPersonaExport } from '../../../src/benchmarks/personabench/export-stage.js';
import { LAYOUT_FILES } from '../../../src/benchmarks/personabench/original-layout.js';
import { repoRoot, tempDir } from '../../helpers/cli.js';
import { ORIGINAL, drawCorpus, originalAvailable, runMaker } from './original.js';

// biome-ignore lint/suspicious/noExplicitAny: the files' JSON, of any shape, read field by field
type Json = any;

/*
 * `persona export` against the original makers' own files: every line's data, field by field
 * and in the makers' key order (post_data_store with its hidden scores and ids, prediction_task,
 * few_shot_info, the NP-Conv fields), with three things left out because they are text, not
 * data: the prompt text (plens's own wording), the default example's post in P-Conv stores and
 * the sentence 3.1_RandPrompt writes as a minimal context's content (plens's own stand-ins).
 * The grouped file must be byte for byte what Raw_Data_Process.py writes. Only hashes and field
 * paths are reported. Needs PERSONABENCH_ORIGINAL; skipped without it.
 */
const available = originalAvailable() && originalAvailable('Raw_Data_Process.py');
const sha = (text: string | Buffer): string => createHash('sha256').update(text).digest('hex').slice(0, 12);

/** A line without what is text: the prompt, the default example's store post, the minimal context's content. */
function dataOf(line: Record<string, unknown>, npSign: boolean): unknown {
  const copy = JSON.parse(JSON.stringify(line)) as Record<string, Json>;
  delete copy['prompt'];
  const task = copy['prediction_task'] as Record<string, Json> | undefined;
  if (task) delete task['prompt_text'];
  const store = copy['post_data_store'] as Record<string, Json> | undefined;
  if (store) {
    delete store['default_fs_post1'];
    delete store['default_fs_post1_with_convo'];
    // 3.1_RandPrompt's minimal context for a reply to a comment carries a sentence as content.
    const minimal = npSign && task ? store[task['target_post_reference_id']] : undefined;
    if (minimal && Array.isArray(minimal['comments']) && minimal['comments'][0]?.['type'] === 'comment') delete minimal['content'];
  }
  return copy;
}

function makers(input: string, seed: number): string {
  const dir = tempDir('plens-pb-export-theirs-');
  copyFileSync(input, join(dir, 'merged_posts_remapped.json'));
  for (const script of ['3.1PromptMaker.py', '3.1_RandPrompt.py', '3.2PromptMaker.py', '3.2_RandPrompt.py', '3.3PromptMaker.py', '3.3_RandPrompt.py']) {
    const r = runMaker(dir, script, seed);
    if (r.status !== 0 && /Traceback/.test(r.stderr)) throw new Error(`${script}: ${r.stderr.slice(-800)}`);
  }
  return dir;
}

async function compare(input: string, seed: number): Promise<string[]> {
  const theirs = makers(input, seed);
  const out = join(tempDir('plens-pb-export-ours-'), 'export');
  await runPersonaExport({ from: input, out, fidelity: 'original', seed });
  const problems: string[] = [];
  for (const f of LAYOUT_FILES) {
    const read = (dir: string) =>
      existsSync(join(dir, f.name))
        ? readFileSync(join(dir, f.name), 'utf8')
            .split('\n')
            .filter(Boolean)
            .map((l) => JSON.parse(l) as Record<string, unknown>)
        : [];
    const a = read(theirs);
    const b = read(out);
    if (a.length !== b.length) problems.push(`${f.name}: ${a.length} lines in the original's, ${b.length} in plens's`);
    a.forEach((line, i) => {
      const np = f.task === '3.1' && f.setting === 'NP-Conv';
      const x = JSON.stringify(dataOf(line, np));
      const y = JSON.stringify(dataOf(b[i] ?? {}, np));
      if (x !== y) {
        let at = 0;
        while (at < x.length && x[at] === y[at]) at++;
        problems.push(
          `${f.name} line ${i + 1}: data differ from character ${at} (${sha(x)} vs ${sha(y)}): ...${x.slice(Math.max(0, at - 60), at + 40)}... vs ...${y.slice(Math.max(0, at - 60), at + 40)}...`,
        );
      }
    });
  }
  return problems;
}

describe.skipIf(!available)("persona export: the original's formats, against the makers' files", () => {
  it('the grouped file is what Raw_Data_Process.py writes, byte for byte', async () => {
    const dir = tempDir('plens-pb-export-group-');
    copyFileSync(join(repoRoot, 'data', 'personabench-sample', 'raw.json'), join(dir, 'Raw_Data_Postized.json'));
    const r = spawnSync('/usr/bin/python3', [join(ORIGINAL, 'Raw_Data_Process.py')], { cwd: dir, env: { PATH: '/usr/bin:/bin', PYTHONIOENCODING: 'utf-8' } });
    expect(r.status).toBe(0);
    const out = join(dir, 'export');
    await runPersonaExport({ from: join(dir, 'Raw_Data_Postized.json'), out, fidelity: 'original', seed: 0 });
    expect(sha(readFileSync(join(out, 'merged_posts_remapped.json')))).toBe(sha(readFileSync(join(dir, 'merged_posts_remapped.json'))));
  });

  it("every line's data on the fixtures and drawn corpora", async () => {
    const dir = tempDir('plens-pb-export-drawn-');
    const inputs: Array<[string, number]> = [
      [join(repoRoot, 'test', 'fixtures', 'personabench', 'grouped.json'), 14],
      [join(repoRoot, 'data', 'personabench-sample', 'grouped.json'), 3],
      [join(repoRoot, 'test', 'fixtures', 'personabench', 'odd-shapes.json'), 2],
      [join(repoRoot, 'test', 'fixtures', 'personabench', 'edge-cases.json'), 3],
    ];
    for (const seed of (process.env['PLENS_PB_EXPORT_SEEDS'] ?? '1,2,3,101,102').split(',').map(Number)) {
      const file = join(dir, `corpus-${seed}.json`);
      writeFileSync(file, JSON.stringify(drawCorpus(seed, seed >= 100)));
      inputs.push([file, seed]);
    }
    for (const [input, seed] of inputs) expect((await compare(input, seed)).slice(0, 6), input).toEqual([]);
  }, 300_000);
});
