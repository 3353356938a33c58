import { existsSync, readdirSync, statSync, type Dirent } from 'node:fs';
import { join } from 'node:path';
import { PlensError, usageError } from '../../../core/errors.js';
import type { JudgeDimension } from '../judge-parse.js';
import { parseSetting, type Setting } from '../settings.js';

/**
 * The layout of an output folder written by the original PersonaLens scripts, as we read its path
 * pattern (their file contents are not published, so this is our documented reading; docs/personalens.md,
 * "Importing runs of the original scripts"):
 *
 *   <output>/dialogue/<user>/<model>[_d][_p][_s]/<task>_dialogue.json
 *   <output>/evaluation/<user>/<model>[_d][_p][_s]/<dimension>/<judge>/<task>[_user|_asst].txt
 *
 * This module only walks and classifies paths; it reads no file.
 */

/** Model-folder suffix -> setting. `_p` is the past-interactions block (our `base+i`). */
export const DEFAULT_SETTING_SUFFIXES: Readonly<Record<string, Setting>> = Object.freeze({
  '': 'base',
  _d: 'base+d',
  _p: 'base+i',
  _s: 'base+s',
  _d_p_s: 'base+all',
});

/** Dimension folder names (lower case, `-` and spaces read as `_`) -> our dimension. */
export const DIMENSION_ALIASES: Readonly<Record<string, JudgeDimension>> = Object.freeze({
  task_completion: 'task_completion',
  taskcompletion: 'task_completion',
  completion: 'task_completion',
  tc: 'task_completion',
  personalization: 'personalization',
  personalisation: 'personalization',
  pers: 'personalization',
  naturalness: 'naturalness',
  nat: 'naturalness',
  coherence: 'coherence',
  coh: 'coherence',
});

export type Target = 'dialogue' | 'user' | 'assistant';

export interface LegacyDialogueFile {
  /** Path relative to the output folder, with `/` separators: the source of the record's key. */
  rel: string;
  file: string;
  userId: string;
  taskId: string;
  /** The model folder as written, suffix included (links judgments to their dialogue). */
  modelFolder: string;
  model: string;
  setting: Setting;
}

/** A judge reply: the same path parts as its dialogue, plus the dimension, target and judge. */
export interface LegacyJudgmentFile extends LegacyDialogueFile {
  /** The dialogue this judgment is of, as a `rel` of a LegacyDialogueFile. */
  dialogueRel: string;
  dimensionFolder: string;
  dimension: JudgeDimension;
  target: Target;
  judge: string;
}

export interface LegacyLayout {
  /** The folder holding dialogue/ (and evaluation/). */
  root: string;
  dialogues: LegacyDialogueFile[];
  judgments: LegacyJudgmentFile[];
  problems: PlensError[];
}

/**
 * Parses `--setting-map` entries (`SUFFIX=SETTING`, e.g. `_v=vanilla`, `=vanilla` for no suffix)
 * over the defaults. A suffix is a chain of `_<letter>` flags.
 */
export function settingSuffixes(entries: readonly string[] = []): Record<string, Setting> {
  const map: Record<string, Setting> = { ...DEFAULT_SETTING_SUFFIXES };
  for (const entry of entries.flatMap((e) => e.split(','))) {
    const eq = entry.indexOf('=');
    if (eq < 0) throw usageError(`--setting-map "${entry}": write SUFFIX=SETTING, e.g. _v=vanilla (an empty SUFFIX is the folder without one)`);
    const suffix = entry.slice(0, eq).trim();
    if (!/^(?:_[a-z])*$/.test(suffix)) throw usageError(`--setting-map "${entry}": a suffix is a chain of _<letter> flags such as _d or _d_p_s`);
    map[suffix] = parseSetting(entry.slice(eq + 1));
  }
  return map;
}

export function describeSuffixes(map: Record<string, Setting>): string {
  return Object.entries(map)
    .map(([s, setting]) => `${s === '' ? '(none)' : s} -> ${setting}`)
    .join(', ');
}

/**
 * Splits `<model>[_d][_p][_s]` into model and setting. The suffix is the longest trailing chain of
 * `_<flag>` segments whose flags appear in the map; a chain the map does not name is an error
 * (never a shorter reading: `gpt_d_p` is not `gpt_d` under base+i).
 */
export function splitModelFolder(name: string, map: Record<string, Setting>): { model: string; setting: Setting } | { error: string } {
  const flags = [...new Set(Object.keys(map).join('').replace(/_/g, ''))].join('');
  const chain = flags ? (new RegExp(`(?:_[${flags}])+$`).exec(name)?.[0] ?? '') : '';
  const model = name.slice(0, name.length - chain.length);
  if (model === '') return { error: `model folder "${name}" has no model name before its setting suffix` };
  const setting = map[chain];
  if (setting === undefined) return { error: `model folder "${name}": setting suffix "${chain}" is not one we accept (${describeSuffixes(map)})` };
  return { model, setting };
}

/** `user7` as is; a bare index `7` reads as `user7`. */
function userIdOf(folder: string): string | undefined {
  if (/^user\d+$/.test(folder)) return folder;
  if (/^\d+$/.test(folder)) return `user${Number(folder)}`;
  return undefined;
}

export function dimensionOf(folder: string): JudgeDimension | undefined {
  return DIMENSION_ALIASES[
    folder
      .trim()
      .toLowerCase()
      .replace(/[-\s]+/g, '_')
  ];
}

const DIMENSION_NAMES = (): string => {
  const by = new Map<string, string[]>();
  for (const [alias, d] of Object.entries(DIMENSION_ALIASES)) by.set(d, [...(by.get(d) ?? []), alias]);
  return [...by.values()].map((a) => a.join('|')).join(', ');
};

/** Visible entries of a folder (dotfiles such as .DS_Store are skipped), sorted for a stable order. */
function entries(dir: string): Dirent[] {
  return readdirSync(dir, { withFileTypes: true })
    .filter((e) => !e.name.startsWith('.'))
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/**
 * Walks dialogue/ and evaluation/ and classifies every file. Anything inside those two trees that
 * does not fit the pattern is a problem (nothing is skipped silently); other folders of the output
 * folder are not looked at.
 */
export function walkLayout(root: string, suffixes: Record<string, Setting>): LegacyLayout {
  const layout: LegacyLayout = { root, dialogues: [], judgments: [], problems: [] };
  const problem = (file: string, message: string, hint?: string) =>
    layout.problems.push(new PlensError('E_INPUT_LAYOUT', message, { location: { file }, ...(hint ? { hint } : {}) }));
  const expectDirs = (dir: string, what: string): Dirent[] => {
    const out: Dirent[] = [];
    for (const e of entries(dir)) {
      if (e.isDirectory()) out.push(e);
      else problem(join(dir, e.name), `unexpected ${e.isFile() ? 'file' : 'entry'} where ${what} folders belong`);
    }
    return out;
  };
  // Path checks shared by both trees: <user>/<model folder>.
  const userAndModel = (dir: string, userFolder: string, modelFolder: string) => {
    const userId = userIdOf(userFolder);
    if (userId === undefined) {
      problem(join(dir, userFolder), `user folder "${userFolder}" is not user<N>`);
      return undefined;
    }
    const split = splitModelFolder(modelFolder, suffixes);
    if ('error' in split) {
      problem(join(dir, userFolder, modelFolder), split.error, 'name the suffix with --setting-map SUFFIX=SETTING, or rename the folder');
      return undefined;
    }
    return { userId, ...split };
  };

  const dialogueDir = join(root, 'dialogue');
  for (const u of expectDirs(dialogueDir, 'user')) {
    for (const m of expectDirs(join(dialogueDir, u.name), 'model')) {
      const who = userAndModel(dialogueDir, u.name, m.name);
      if (!who) continue;
      const dir = join(dialogueDir, u.name, m.name);
      for (const f of entries(dir)) {
        const file = join(dir, f.name);
        const task = /^(.+)_dialogue\.json$/.exec(f.name)?.[1];
        if (!f.isFile() || task === undefined) {
          problem(file, `unexpected ${f.isFile() ? 'file' : 'entry'}: dialogue files are named <task>_dialogue.json`);
          continue;
        }
        layout.dialogues.push({
          rel: `dialogue/${u.name}/${m.name}/${f.name}`,
          file,
          userId: who.userId,
          taskId: task,
          modelFolder: m.name,
          model: who.model,
          setting: who.setting,
        });
      }
    }
  }

  const evalDir = join(root, 'evaluation');
  // Dialogues alone are a valid import (judged later, or never).
  if (!existsSync(evalDir)) return layout;
  if (!statSync(evalDir).isDirectory()) {
    problem(evalDir, 'evaluation is not a folder');
    return layout;
  }
  for (const u of expectDirs(evalDir, 'user')) {
    for (const m of expectDirs(join(evalDir, u.name), 'model')) {
      const who = userAndModel(evalDir, u.name, m.name);
      if (!who) continue;
      for (const d of expectDirs(join(evalDir, u.name, m.name), 'dimension')) {
        const dimension = dimensionOf(d.name);
        if (dimension === undefined) {
          problem(join(evalDir, u.name, m.name, d.name), `unknown dimension folder "${d.name}"; accepted: ${DIMENSION_NAMES()}`);
          continue;
        }
        for (const j of expectDirs(join(evalDir, u.name, m.name, d.name), 'judge')) {
          const dir = join(evalDir, u.name, m.name, d.name, j.name);
          for (const f of entries(dir)) {
            const file = join(dir, f.name);
            const parsed = f.isFile() ? judgmentFileName(f.name, dimension) : { error: 'unexpected entry: judge replies are <task>[_user|_asst].txt files' };
            if ('error' in parsed) {
              problem(file, parsed.error);
              continue;
            }
            layout.judgments.push({
              rel: `evaluation/${u.name}/${m.name}/${d.name}/${j.name}/${f.name}`,
              file,
              userId: who.userId,
              taskId: parsed.taskId,
              modelFolder: m.name,
              model: who.model,
              setting: who.setting,
              dialogueRel: `dialogue/${u.name}/${m.name}/${parsed.taskId}_dialogue.json`,
              dimensionFolder: d.name,
              dimension,
              target: parsed.target,
              judge: j.name,
            });
          }
        }
      }
    }
  }
  return layout;
}

/**
 * `<task>.txt` for task completion and personalization, `<task>_user.txt` / `<task>_asst.txt` for
 * naturalness and coherence. Personalization judges the assistant, so `_asst` is accepted there
 * too; any other combination is an error, never a guess.
 */
export function judgmentFileName(name: string, dimension: JudgeDimension): { taskId: string; target: Target } | { error: string } {
  const m = /^(.+?)(?:_(user|asst|assistant))?\.txt$/.exec(name);
  if (!m) return { error: `unexpected file: judge replies are named <task>.txt, <task>_user.txt or <task>_asst.txt` };
  const taskId = m[1]!;
  const who = m[2] === undefined ? undefined : m[2] === 'user' ? 'user' : 'assistant';
  if (dimension === 'task_completion') {
    return who === undefined
      ? { taskId, target: 'dialogue' }
      : { error: `task_completion judges the whole dialogue: expected ${taskId}.txt, not a _${m[2]} file` };
  }
  if (dimension === 'personalization') {
    return who === 'user'
      ? { error: `personalization judges the assistant: expected ${taskId}.txt (or ${taskId}_asst.txt), not _user` }
      : { taskId, target: 'assistant' };
  }
  if (who === undefined) return { error: `${dimension} needs its target in the name: ${taskId}_user.txt or ${taskId}_asst.txt` };
  return { taskId, target: who };
}
