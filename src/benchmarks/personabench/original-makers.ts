/**
 * The original-wording route: runs the original prompt makers, unmodified, from the user's
 * checkout of the PERSONA-bench code (branch `Latest`) on the user's input, in a scratch
 * folder, with the user's Python. Their nine JSONL files come back byte for byte; plens
 * never ships their text. The shuffles the makers leave unseeded are seeded with
 * `random.seed(seed)` before each script runs, the same seed plens's own selection uses.
 */
import { spawn } from 'node:child_process';
import { copyFile, link, mkdir, mkdtemp, rm, stat } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { PlensError } from '../../core/errors.js';
import type { InputFormat } from './read.js';

/** Each maker script and the files it writes, in the original's names. */
export const ORIGINAL_MAKERS: ReadonlyArray<{ script: string; outputs: readonly string[] }> = [
  {
    script: '3.1PromptMaker.py',
    outputs: ['WithConversationPrompts_ScorePrediction_Refactored.jsonl', 'WithoutConversationPrompts_ScorePrediction_Refactored.jsonl'],
  },
  { script: '3.1_RandPrompt.py', outputs: ['WithConversationPrompts_ScorePrediction_PseudoRandomContext.jsonl'] },
  {
    script: '3.2PromptMaker.py',
    outputs: ['WithConversationPrompts_ExactScorePrediction.jsonl', 'WithoutConversationPrompts_ExactScorePrediction.jsonl'],
  },
  { script: '3.2_RandPrompt.py', outputs: ['WithConversationPrompts_PseudoRandomContext_ExactScorePrediction.jsonl'] },
  { script: '3.3PromptMaker.py', outputs: ['WithConversationPrompts_BodyPrediction_v2.jsonl', 'WithoutConversationPrompts_BodyPrediction_v2.jsonl'] },
  { script: '3.3_RandPrompt.py', outputs: ['WithPseudoRandomConversationPrompts_BodyPrediction.jsonl'] },
];

/** The grouping script, used when the input is the raw list of posts. */
const GROUPING_SCRIPT = 'Raw_Data_Process.py';
const GROUPED_NAME = 'merged_posts_remapped.json';
const RAW_NAME = 'Raw_Data_Postized.json';

/** Seeds `random`, then runs the script as `__main__` with its own name as argv[0]. */
const PRELUDE = 'import random, runpy, sys; random.seed(int(sys.argv[1])); sys.argv = sys.argv[2:]; runpy.run_path(sys.argv[0], run_name="__main__")';

export interface OriginalMakersOptions {
  checkout: string;
  input: string;
  format: InputFormat;
  seed: number;
  /** The Python to run them with; default `python3` on PATH. */
  python?: string;
  /** Called as each script starts and ends. */
  onProgress?: (line: string) => void;
}

export interface OriginalMakersRun {
  /** A scratch folder holding every output; the caller removes it with `dispose`. */
  dir: string;
  /** Output file name -> its path in the scratch folder, in the makers' order. */
  files: Array<{ name: string; path: string }>;
  /**
   * Makers that stopped without writing their files, with their last message: the makers exit 1
   * when a setting has nothing to select ("No valid samples found ..."), and then the original
   * has no such file either.
   */
  stopped: Array<{ script: string; exit: string; message: string }>;
  python: string;
  dispose: () => Promise<void>;
}

/** Checks the checkout has every script this run needs; names the first that is missing. */
export function checkCheckout(checkout: string, format: InputFormat): void {
  const needed = [...ORIGINAL_MAKERS.map((m) => join('PromptMakers', m.script)), ...(format === 'raw' ? [GROUPING_SCRIPT] : [])];
  for (const file of needed) {
    if (!existsSync(join(checkout, file)))
      throw new PlensError('E_INPUT_NOT_FOUND', `the original's checkout has no ${file}`, {
        location: { file: join(checkout, file) },
        hint: 'pass --original the root of a clone of github.com/PERSONA-bench/PERSONA (branch Latest), the folder holding PromptMakers/',
      });
  }
}

/**
 * Runs every maker (the grouping script first when the input is a raw list) and returns
 * where their files are. A script that fails stops the run with its stderr's last lines.
 */
export async function runOriginalMakers(options: OriginalMakersOptions): Promise<OriginalMakersRun> {
  const checkout = resolve(options.checkout);
  checkCheckout(checkout, options.format);
  const python = options.python ?? 'python3';
  const dir = await mkdtemp(join(tmpdir(), 'plens-persona-original-'));
  const dispose = (): Promise<void> => rm(dir, { recursive: true, force: true });
  try {
    const grouped = join(dir, GROUPED_NAME);
    if (options.format === 'raw') {
      const groupDir = join(dir, 'group');
      await mkdir(groupDir);
      await copyFile(options.input, join(groupDir, RAW_NAME));
      await runScript(python, join(checkout, GROUPING_SCRIPT), groupDir, options.seed, options.onProgress);
      // The script reports its own failures on stdout and exits 0: its output must exist.
      if (!existsSync(join(groupDir, GROUPED_NAME)))
        throw new PlensError('E_PREREQUISITE', `the original's ${GROUPING_SCRIPT} wrote no ${GROUPED_NAME}`, {
          location: { file: options.input },
          hint: 'run it by hand in a folder holding the input as Raw_Data_Postized.json to see why',
        });
      await copyFile(join(groupDir, GROUPED_NAME), grouped);
    } else {
      // The makers read the file as given, byte for byte.
      await copyFile(options.input, grouped);
    }
    // Each maker runs in a folder of its own, so they run side by side.
    const stopped: OriginalMakersRun['stopped'] = [];
    await Promise.all(
      ORIGINAL_MAKERS.map(async (maker) => {
        const work = join(dir, maker.script.replace(/\.py$/, ''));
        await mkdir(work);
        // A hard link: no copy of a large input, and no privilege needed (a symlink needs one on Windows).
        await link(grouped, join(work, GROUPED_NAME)).catch(() => copyFile(grouped, join(work, GROUPED_NAME)));
        const result = await runScript(python, join(checkout, 'PromptMakers', maker.script), work, options.seed, options.onProgress);
        if (result !== null) stopped.push({ script: maker.script, ...result });
      }),
    );
    if (stopped.length === ORIGINAL_MAKERS.length)
      throw new PlensError('E_PREREQUISITE', `every original maker failed; the first said:\n${stopped[0]!.message}`, {
        location: { file: join(checkout, 'PromptMakers', stopped[0]!.script) },
        hint: 'the original scripts need Python 3.9 or later (pass --python PATH); run one by hand on the input to see more',
      });
    const files: OriginalMakersRun['files'] = [];
    for (const maker of ORIGINAL_MAKERS) {
      if (stopped.some((s) => s.script === maker.script)) continue;
      for (const name of maker.outputs) {
        const path = join(dir, maker.script.replace(/\.py$/, ''), name);
        if (!(await stat(path).catch(() => null))?.isFile())
          throw new PlensError('E_PREREQUISITE', `the original's ${maker.script} wrote no ${name}`, {
            location: { file: join(checkout, 'PromptMakers', maker.script) },
            hint: 'is the checkout the branch Latest of github.com/PERSONA-bench/PERSONA?',
          });
        files.push({ name, path });
      }
    }
    stopped.sort((a, b) => a.script.localeCompare(b.script));
    return { dir, files, stopped, python, dispose };
  } catch (error) {
    await dispose();
    throw error;
  }
}

/**
 * One script, unmodified, in `cwd`. Only what Python needs reaches it: no API keys or other
 * secrets of the caller's environment.
 */
function runScript(
  python: string,
  script: string,
  cwd: string,
  seed: number,
  onProgress?: (line: string) => void,
): Promise<{ exit: string; message: string } | null> {
  const env: NodeJS.ProcessEnv = { PYTHONDONTWRITEBYTECODE: '1', PYTHONIOENCODING: 'utf-8' };
  for (const name of ['PATH', 'HOME', 'LANG', 'LC_ALL', 'SYSTEMROOT', 'TMPDIR']) if (process.env[name] !== undefined) env[name] = process.env[name];
  const name = script.split(/[\\/]/).pop()!;
  onProgress?.(`running the original's ${name}`);
  const started = performance.now();
  return new Promise((done, failed) => {
    const child = spawn(python, ['-c', PRELUDE, String(seed), script], { cwd, env, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (chunk: string) => {
      stderr = (stderr + chunk).slice(-4000);
    });
    child.once('error', (error: NodeJS.ErrnoException) =>
      failed(
        new PlensError('E_PREREQUISITE', `cannot run ${python}: ${error.code ?? error.message}`, {
          hint: 'the original route runs the original scripts with Python 3; install python3 or pass --python PATH',
          cause: error,
        }),
      ),
    );
    child.once('close', (code, signal) => {
      if (code === 0) {
        onProgress?.(`finished the original's ${name} in ${((performance.now() - started) / 1000).toFixed(1)} s`);
        done(null);
        return;
      }
      const message = stderr.trim().split('\n').slice(-6).join('\n');
      onProgress?.(`the original's ${name} stopped (${signal ?? `exit ${code}`}): ${message.split('\n').pop() ?? ''}`);
      done({ exit: signal ?? `exit ${code}`, message });
    });
  });
}
