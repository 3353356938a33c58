import { randomBytes } from 'node:crypto';
import { existsSync, statSync } from 'node:fs';
import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { basename, join, relative } from 'node:path';
import { tempSibling, writeFileAtomic } from '../../../core/atomic.js';
import { PlensError } from '../../../core/errors.js';
import type { Workspace } from '../../../core/workspace.js';
import { Database, sqlList, type SqlParams } from '../../../db/database.js';
import { hashParts, slugName } from '../../../engine/llm-stage.js';
import { jsonlQuery, Partition, type Columns } from '../../../engine/partition.js';
import { parseJudgment } from '../judge-parse.js';
import {
  DIALOGUE_COLUMNS,
  dialogueRecord,
  type DialogueRecord,
  type JudgmentRecord,
  DIALOGUES_FORMAT,
  dialoguesRoot,
  judgeFolder,
  JUDGMENT_COLUMNS,
  judgmentRecord,
  JUDGMENTS_FORMAT,
  judgmentsRoot,
} from '../records.js';
import { originalScore } from '../original-scoring.js';
import { SETTING_NAMES, type Setting } from '../settings.js';
import { describeSuffixes, settingSuffixes, walkLayout, type LegacyDialogueFile, type LegacyJudgmentFile } from './layout.js';
import { readLegacyDialogue, readLegacyReply, type LegacyMessage } from './read.js';
import { datasetFile, requireDataset } from '../dataset/workspace-files.js';

/** Recorded in place of the unknown prompts and sampling, so a legacy run never shares a `run` id with a native one. */
export const LEGACY_PROMPT_VERSION = 'legacy';
export const LEGACY_PREFIX = 'legacy:';
export const DEFAULT_LEGACY_USER_MODEL = 'legacy:unknown';

export interface LegacyImportOptions {
  workspace: Workspace;
  /** The scripts' output folder (holds dialogue/ and evaluation/), or the folder above it. */
  from: string;
  /** `SUFFIX=SETTING` entries over the default suffix map. */
  settingMap?: string[];
  /** The user-agent model the dialogues were made with, when known. */
  userModel?: string;
  dryRun?: boolean;
}

export interface LegacyProblem {
  code: string;
  message: string;
  file?: string;
  line?: number;
  pointer?: string;
  hint?: string;
}

export interface LegacyCellSummary {
  model: string;
  setting: Setting;
  /** The model folders it was read from, e.g. gpt-4o_d. */
  folders: string[];
  dir: string;
  dialogues: number;
  sd: number;
  md: number;
}

export interface LegacyCountRow {
  model: string;
  setting: Setting;
  judge: string;
  dimension: string;
  target: string;
  ok: number;
  parse_error: number;
}

export interface LegacyJudgeSummary {
  judge: string;
  dir: string;
  judgments: number;
  parse_errors: number;
  /** Rows of other cells already in the judge's file (from another output folder), kept. */
  kept_rows: number;
}

export interface LegacyImportSummary {
  source: string;
  workspace: string;
  dry_run: boolean;
  setting_suffixes: Record<string, Setting>;
  dialogues: number;
  judgments: number;
  parse_errors: number;
  cells: LegacyCellSummary[];
  judges: LegacyJudgeSummary[];
  /** Judgments per model, setting, judge, dimension and target. */
  counts: LegacyCountRow[];
  /** Replies that did not parse: imported as parse_error with their raw text, never scored. */
  unparsed: Array<{ file: string; dimension: string; error: string }>;
  warnings: string[];
  problems: LegacyProblem[];
  written: string[];
  /** Other legacy judges' files that held rows of the cells written now; those rows are removed. */
  pruned: Array<{ dir: string; removed_rows: number }>;
  elapsed_ms: number;
}

/** All problems of an import at once; the first decides the code (and exit status), --json lists every one. */
export class LegacyImportError extends PlensError {
  readonly problems: PlensError[];

  constructor(problems: PlensError[]) {
    const [first, ...rest] = problems;
    const shown = rest.slice(0, 10).map((p) => `${p.where ? `${p.where}: ` : ''}${p.message}`);
    const more = rest.length > 10 ? `\n  ... and ${rest.length - 10} more (--json lists every one)` : '';
    super(
      first!.code,
      rest.length
        ? `${first!.message} (and ${rest.length} more problem${rest.length === 1 ? '' : 's'}; nothing was written)`
        : `${first!.message} (nothing was written)`,
      {
        location: first!.location,
        hint: rest.length ? `also:\n  ${shown.join('\n  ')}${more}` : (first!.hint ?? 'fix the file and run the import again'),
      },
    );
    this.problems = problems;
  }

  override toJSON(): Record<string, unknown> {
    return { ...super.toJSON(), problems: this.problems.map(problemJson) };
  }
}

function problemJson(p: PlensError): LegacyProblem {
  return { code: p.code, message: p.message, ...p.location, ...(p.hint ? { hint: p.hint } : {}) } as LegacyProblem;
}

interface PoolRow {
  scenario_id: string;
  kind: 'SD' | 'MD';
  relevant_domains: string[];
}

interface Dialogue {
  source: LegacyDialogueFile;
  key: string;
  scenario: PoolRow;
  cell: string;
  messages: LegacyMessage[];
}

interface Judgment {
  source: LegacyJudgmentFile;
  key: string;
  dialogue: Dialogue;
  judgeDir: string;
  status: 'ok' | 'parse_error';
  error: { kind: string; message: string } | null;
  verdict: boolean | null;
  score: number | null;
  justification: string | null;
  raw: string | null;
  /** The reply as the released gather script reads it. */
  original_score: number | null;
}

const hashKey = (...parts: string[]) => hashParts(parts);

/** `<workspace>/dialogues/<this>`: one cell per model and setting. */
export const legacyCellDir = (model: string, setting: Setting) => `legacy-${slugName(model)}-${setting}`;
/** `<workspace>/judgments/<this>`: one folder per judge. */
export const legacyJudgeDir = (judge: string) => `legacy-${slugName(judge)}`;

/**
 * `plens import-legacy`: reads a run of the original PersonaLens scripts into the dialogue and
 * judgment Parquet the warehouse reads. Every file is read and checked before anything is written;
 * any problem stops the import with all problems listed. Keys hash the source path, so importing the
 * same folder again rewrites the same files.
 */
export async function importLegacy(options: LegacyImportOptions): Promise<LegacyImportSummary> {
  const started = performance.now();
  const root = resolveRoot(options.from);
  requireDataset(options.workspace);
  const suffixes = settingSuffixes(options.settingMap);
  const userModel = options.userModel ?? DEFAULT_LEGACY_USER_MODEL;
  const layout = walkLayout(root, suffixes);
  const problems = [...layout.problems];
  const fileOf = (f: string) => relative(root, f);

  // Dialogues: read, then checked against the imported dataset.
  const read = await mapLimit(layout.dialogues, 32, async (d) => ({ d, ...(await readLegacyDialogue(d.file)) }));
  const pool = await loadPool(options.workspace, [...new Set(layout.dialogues.map((d) => d.userId))]);
  const dialogues = new Map<string, Dialogue>();
  const cellModels = new Map<string, { model: string; setting: Setting; folders: Set<string> }>();
  const inCell = new Map<string, string>();
  for (const { d, messages, problems: p } of read) {
    problems.push(...p);
    const scenarioId = `${d.userId}:${d.taskId}`;
    const scenario = pool.get(scenarioId);
    if (!scenario) {
      problems.push(
        new PlensError('E_INPUT_REFERENCE', `scenario ${scenarioId} is not in the imported dataset (user ${d.userId}, task ${d.taskId})`, {
          location: { file: d.file },
          hint: 'import the PersonaLens data the run was made on (`plens import --from <data dir>`); task ids look like SD-Alarm-task-1 or MD-task-3',
        }),
      );
      continue;
    }
    const cell = legacyCellDir(d.model, d.setting);
    const owner = cellModels.get(cell);
    if (owner && (owner.model !== d.model || owner.setting !== d.setting)) {
      problems.push(
        new PlensError('E_INPUT_DUPLICATE', `models "${owner.model}" and "${d.model}" would share the folder dialogues/${cell}`, {
          location: { file: d.file },
          hint: 'rename one of the model folders',
        }),
      );
      continue;
    }
    if (!owner) cellModels.set(cell, { model: d.model, setting: d.setting, folders: new Set([d.modelFolder]) });
    else owner.folders.add(d.modelFolder);
    const other = inCell.get(`${cell}\n${scenarioId}`);
    if (other !== undefined) {
      problems.push(
        new PlensError('E_INPUT_DUPLICATE', `scenario ${scenarioId} appears twice for ${LEGACY_PREFIX}${d.model} ${d.setting} (also ${other})`, {
          location: { file: d.file },
        }),
      );
      continue;
    }
    inCell.set(`${cell}\n${scenarioId}`, d.rel);
    if (messages) dialogues.set(d.rel, { source: d, key: hashKey('legacy-dialogue-v1', d.rel), scenario, cell, messages });
  }
  const invalidDialogues = new Set(layout.dialogues.map((d) => d.rel).filter((rel) => !dialogues.has(rel)));

  // Judgments: each is the raw reply of the judge, parsed as the judge stage parses replies.
  const judgments: Judgment[] = [];
  const judgeOwners = new Map<string, string>();
  const seen = new Map<string, string>();
  const replies = await mapLimit(layout.judgments, 32, async (j) => ({ j, reply: await readLegacyReply(j.file) }));
  for (const { j, reply } of replies) {
    const dialogue = dialogues.get(j.dialogueRel);
    if (!dialogue) {
      // A dialogue that is there but broken has its own problem already.
      if (!invalidDialogues.has(j.dialogueRel)) {
        problems.push(new PlensError('E_INPUT_REFERENCE', `no dialogue for this judgment: ${j.dialogueRel} does not exist`, { location: { file: j.file } }));
      }
      continue;
    }
    if ('problem' in reply) {
      problems.push(reply.problem);
      continue;
    }
    const judgeDir = legacyJudgeDir(j.judge);
    const owner = judgeOwners.get(judgeDir);
    if (owner !== undefined && owner !== j.judge) {
      problems.push(
        new PlensError('E_INPUT_DUPLICATE', `judges "${owner}" and "${j.judge}" would share the folder judgments/${judgeDir}`, {
          location: { file: j.file },
          hint: 'rename one of the judge folders',
        }),
      );
      continue;
    }
    judgeOwners.set(judgeDir, j.judge);
    // Two files for one judgment (e.g. folders tc/ and task_completion/) would be averaged away: refuse.
    const identity = `${j.dialogueRel}\n${j.judge}\n${j.dimension}\n${j.target}`;
    const twin = seen.get(identity);
    if (twin !== undefined) {
      problems.push(
        new PlensError(
          'E_INPUT_DUPLICATE',
          `a second ${j.dimension}${j.target === 'dialogue' ? '' : ` (${j.target})`} judgment by ${j.judge} of the same dialogue (also ${twin})`,
          { location: { file: j.file } },
        ),
      );
      continue;
    }
    seen.set(identity, j.rel);
    const parsed = parseJudgment(j.dimension, reply.text);
    const base = { source: j, key: hashKey('legacy-judgment-v1', j.rel), dialogue, judgeDir, original_score: originalScore(j.dimension, reply.text) };
    judgments.push(
      parsed.ok
        ? {
            ...base,
            status: 'ok',
            error: null,
            verdict: parsed.dimension === 'task_completion' ? (parsed as { verdict: boolean }).verdict : null,
            score: parsed.score,
            justification: parsed.justification,
            raw: null,
          }
        : {
            ...base,
            status: 'parse_error',
            error: { kind: 'parse_error', message: parsed.error },
            verdict: null,
            score: null,
            justification: null,
            raw: reply.text,
          },
    );
  }
  if (layout.dialogues.length === 0 && problems.length === 0) {
    problems.push(
      new PlensError('E_INPUT_LAYOUT', 'no dialogue files (<user>/<model>/<task>_dialogue.json) under dialogue/', {
        location: { file: join(root, 'dialogue') },
      }),
    );
  }
  if (problems.length > 0) {
    // In path order, so a listing reads like the folder tree whatever stage found each problem.
    problems.sort((a, b) => cmp(a.location.file ?? '', b.location.file ?? '') || (a.location.line ?? 0) - (b.location.line ?? 0));
    throw new LegacyImportError(problems);
  }

  const summary = summarise(options, root, suffixes, [...dialogues.values()], judgments, cellModels, fileOf);
  if (!options.dryRun) {
    const written = await writeAll(options.workspace, root, userModel, [...dialogues.values()], judgments, cellModels, summary);
    summary.written = written;
  }
  summary.elapsed_ms = Math.round(performance.now() - started);
  return summary;
}

const isDir = (p: string) => existsSync(p) && statSync(p).isDirectory();

/** The folder holding dialogue/: the one given, or its output/ subfolder. */
function resolveRoot(from: string): string {
  if (!existsSync(from)) throw new PlensError('E_INPUT_NOT_FOUND', 'no such folder', { location: { file: from } });
  if (!isDir(from)) throw new PlensError('E_INPUT_LAYOUT', 'not a folder: name the output folder of the PersonaLens scripts', { location: { file: from } });
  if (isDir(join(from, 'dialogue'))) return from;
  if (isDir(join(from, 'output', 'dialogue'))) return join(from, 'output');
  throw new PlensError('E_INPUT_LAYOUT', 'no dialogue/ folder here (nor in output/)', {
    location: { file: from },
    hint: "name the scripts' output folder, the one holding dialogue/<user>/<model>/<task>_dialogue.json and evaluation/",
  });
}

async function loadPool(workspace: Workspace, users: string[]): Promise<Map<string, PoolRow>> {
  const out = new Map<string, PoolRow>();
  if (users.length === 0) return out;
  const db = await Database.open(':memory:', { threads: 1 });
  try {
    const rows = await db.all<PoolRow>(
      `SELECT scenario_id, kind, relevant_domains FROM read_parquet($1)
       WHERE list_contains($2, user_id)`,
      undefined,
      [datasetFile(workspace, 'scenario_pool'), sqlList(users)],
    );
    for (const r of rows) out.set(r.scenario_id, r);
    return out;
  } finally {
    db.close();
  }
}

function summarise(
  options: LegacyImportOptions,
  root: string,
  suffixes: Record<string, Setting>,
  dialogues: Dialogue[],
  judgments: Judgment[],
  cellModels: Map<string, { model: string; setting: Setting; folders: Set<string> }>,
  fileOf: (f: string) => string,
): LegacyImportSummary {
  const cells: LegacyCellSummary[] = [...cellModels.entries()]
    .map(([cell, c]) => {
      const ds = dialogues.filter((d) => d.cell === cell);
      return {
        model: `${LEGACY_PREFIX}${c.model}`,
        setting: c.setting,
        folders: [...c.folders].sort(),
        dir: Partition.in(dialoguesRoot(options.workspace), cell, DIALOGUES_FORMAT).dir,
        dialogues: ds.length,
        sd: ds.filter((d) => d.scenario.kind === 'SD').length,
        md: ds.filter((d) => d.scenario.kind === 'MD').length,
      };
    })
    .sort((a, b) => cmp(a.model, b.model) || SETTING_NAMES.indexOf(a.setting) - SETTING_NAMES.indexOf(b.setting));
  const counts = new Map<string, LegacyCountRow>();
  for (const j of judgments) {
    const s = j.source;
    const id = [s.model, s.setting, s.judge, s.dimension, s.target].join('\n');
    const row = counts.get(id) ?? {
      model: `${LEGACY_PREFIX}${s.model}`,
      setting: s.setting,
      judge: `${LEGACY_PREFIX}${s.judge}`,
      dimension: s.dimension,
      target: s.target,
      ok: 0,
      parse_error: 0,
    };
    row[j.status]++;
    counts.set(id, row);
  }
  const judges = [...new Set(judgments.map((j) => j.source.judge))].sort().map((judge) => {
    const mine = judgments.filter((j) => j.source.judge === judge);
    return {
      judge: `${LEGACY_PREFIX}${judge}`,
      dir: Partition.in(judgmentsRoot(options.workspace), legacyJudgeDir(judge), JUDGMENTS_FORMAT).dir,
      judgments: mine.length,
      parse_errors: mine.filter((j) => j.status === 'parse_error').length,
      kept_rows: 0,
    };
  });
  return {
    source: root,
    workspace: options.workspace.root,
    dry_run: Boolean(options.dryRun),
    setting_suffixes: suffixes,
    dialogues: dialogues.length,
    judgments: judgments.length,
    parse_errors: judgments.filter((j) => j.status === 'parse_error').length,
    cells,
    judges,
    counts: [...counts.values()].sort(
      (a, b) =>
        cmp(a.model, b.model) ||
        SETTING_NAMES.indexOf(a.setting) - SETTING_NAMES.indexOf(b.setting) ||
        cmp(a.judge, b.judge) ||
        cmp(a.dimension, b.dimension) ||
        cmp(a.target, b.target),
    ),
    unparsed: judgments
      .filter((j) => j.status === 'parse_error')
      .map((j) => ({ file: fileOf(j.source.file), dimension: j.source.dimension, error: j.error!.message })),
    warnings: coverageWarnings(dialogues, judgments),
    problems: [],
    written: [],
    pruned: [],
    elapsed_ms: 0,
  };
}

const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** A judge that scored some dialogues of a cell on a dimension but not others: worth knowing, not an error. */
function coverageWarnings(dialogues: Dialogue[], judgments: Judgment[]): string[] {
  const perCell = new Map<string, number>();
  for (const d of dialogues) perCell.set(d.cell, (perCell.get(d.cell) ?? 0) + 1);
  const covered = new Map<string, { judge: string; cell: string; what: string; model: string; setting: string; n: number }>();
  for (const j of judgments) {
    const what = j.source.target === 'dialogue' || j.source.dimension === 'personalization' ? j.source.dimension : `${j.source.dimension}/${j.source.target}`;
    const id = `${j.source.judge}\n${j.dialogue.cell}\n${what}`;
    const c = covered.get(id) ?? { judge: j.source.judge, cell: j.dialogue.cell, what, model: j.source.model, setting: j.source.setting, n: 0 };
    c.n++;
    covered.set(id, c);
  }
  return [...covered.values()]
    .filter((c) => c.n < perCell.get(c.cell)!)
    .map(
      (c) =>
        `${LEGACY_PREFIX}${c.judge}: ${perCell.get(c.cell)! - c.n} of ${perCell.get(c.cell)} dialogues of ${LEGACY_PREFIX}${c.model} ${c.setting} have no ${c.what} judgment`,
    )
    .sort();
}

/**
 * Writes every cell's dialogues.parquet and every judge's judgments.parquet with the columns the
 * stages write (NULL where the scripts kept nothing: tokens, latency, sampling). All files are
 * built as temp siblings first and renamed into place at the end. A judge's file keeps the rows of
 * cells this import does not write (another output folder judged by the same judge).
 */
async function writeAll(
  workspace: Workspace,
  root: string,
  userModel: string,
  dialogues: Dialogue[],
  judgments: Judgment[],
  cellModels: Map<string, { model: string; setting: Setting; folders: Set<string> }>,
  summary: LegacyImportSummary,
): Promise<string[]> {
  const staging = join(workspace.root, `.import-legacy-${process.pid}-${randomBytes(4).toString('hex')}`);
  await mkdir(staging, { recursive: true });
  const renames: Array<[string, string]> = [];
  // Written after the Parquet is in place, so a failed import leaves no description of a missing file.
  const notes: Array<[string, object]> = [];
  const db = await Database.open(':memory:', { threads: 1 });
  try {
    const copy = async (records: object[], columns: Columns, out: string, keep?: { sql: string; params: SqlParams }) => {
      const jsonl = join(staging, `${renames.length}.jsonl`);
      await writeFile(jsonl, records.map((r) => JSON.stringify(r)).join('\n') + '\n');
      await mkdir(join(out, '..'), { recursive: true });
      const tmp = tempSibling(out);
      const fresh = jsonlQuery([jsonl], columns);
      await db.run(
        `COPY (SELECT * FROM (${fresh}${keep ? ` UNION ALL BY NAME ${keep.sql}` : ''}) ORDER BY "key") TO $tmp (FORMAT parquet, COMPRESSION zstd)`,
        undefined,
        { ...keep?.params, tmp },
      );
      renames.push([tmp, out]);
    };

    for (const [cell, c] of [...cellModels.entries()].sort(([a], [b]) => cmp(a, b))) {
      const records = dialogues.filter((d) => d.cell === cell).map((d) => legacyDialogueRecord(d, userModel));
      const partition = Partition.in(dialoguesRoot(workspace), cell, DIALOGUES_FORMAT);
      await copy(records, DIALOGUE_COLUMNS, partition.outputFile);
      const about = {
        legacy: true,
        source: root,
        model: `${LEGACY_PREFIX}${c.model}`,
        setting: c.setting,
        folders: [...c.folders].sort(),
        user_model: userModel,
        prompt_version: LEGACY_PROMPT_VERSION,
      };
      notes.push([partition.file('legacy.json'), about]);
    }

    const cellsWritten = [...cellModels.values()].map((c) => `${LEGACY_PREFIX}${c.model} | ${c.setting}`);
    // A judgment row of a cell written now: replaced by this import.
    const stale = "list_contains($cells, assistant_model || ' | ' || setting)";
    const cells = sqlList(cellsWritten);
    for (const judge of summary.judges) {
      const name = judge.judge.slice(LEGACY_PREFIX.length);
      const out = judgeFolder(judge.dir).outputFile;
      let keep: { sql: string; params: SqlParams } | undefined;
      if (existsSync(out)) {
        // Rows of the cells written now are replaced; rows of other cells stay.
        keep = { sql: `SELECT * FROM read_parquet($old) WHERE NOT ${stale}`, params: { old: out, cells } };
        judge.kept_rows = (await db.all<{ n: number }>(`SELECT count(*)::INTEGER AS n FROM (${keep.sql})`, undefined, keep.params))[0]!.n;
      }
      const records = judgments.filter((j) => j.source.judge === name).map((j) => legacyJudgmentRecord(j, userModel));
      await copy(records, JUDGMENT_COLUMNS, out, keep);
      notes.push([judgeFolder(judge.dir).file('legacy.json'), { legacy: true, judge: judge.judge, prompt_version: LEGACY_PROMPT_VERSION }]);
    }
    // Another legacy judge's rows of the cells written now would outlive their replacement: drop them.
    const mine = new Set(summary.judges.map((j) => j.dir));
    const others = Partition.list(judgmentsRoot(workspace), JUDGMENTS_FORMAT, true).filter(
      (p) => basename(p.dir).startsWith('legacy-') && !mine.has(p.dir) && existsSync(p.file('legacy.json')),
    );
    for (const other of others) {
      const dir = other.dir;
      const out = other.outputFile;
      const removed = (await db.all<{ n: number }>(`SELECT count(*)::INTEGER AS n FROM read_parquet($old) WHERE ${stale}`, undefined, { old: out, cells }))[0]!
        .n;
      if (removed === 0) continue;
      const tmp = tempSibling(out);
      await db.run(`COPY (SELECT * FROM read_parquet($old) WHERE NOT ${stale} ORDER BY "key") TO $tmp (FORMAT parquet, COMPRESSION zstd)`, undefined, {
        old: out,
        cells,
        tmp,
      });
      renames.push([tmp, out]);
      summary.pruned.push({ dir, removed_rows: removed });
    }
    for (const [tmp, out] of renames) await rename(tmp, out);
    for (const [file, about] of notes) await writeFileAtomic(file, JSON.stringify(about, null, 2) + '\n');
    return renames.map(([, out]) => out);
  } catch (error) {
    await Promise.all(renames.map(([tmp]) => rm(tmp, { force: true })));
    throw error;
  } finally {
    db.close();
    await rm(staging, { recursive: true, force: true });
  }
}

function legacyDialogueRecord(d: Dialogue, userModel: string): DialogueRecord {
  const s = d.source;
  const body = dialogueRecord(
    {
      scenario_id: d.scenario.scenario_id,
      user_id: s.userId,
      task_id: s.taskId,
      kind: d.scenario.kind,
      setting: s.setting,
      replicate: 0,
      assistant_model: `${LEGACY_PREFIX}${s.model}`,
      assistant_temperature: null,
      assistant_max_tokens: null,
      user_model: userModel,
      user_temperature: null,
      user_max_tokens: null,
      prompt_version: LEGACY_PROMPT_VERSION,
      simulated: false,
    },
    {
      status: 'ok',
      error: null,
      // The files do not say how a dialogue ended, but the original loop does: the user's TERMINATE
      // is always followed by one final assistant answer, and a dialogue that runs out of rounds ends
      // on the user's message.
      end_reason: d.messages.at(-1)!.role === 'assistant' ? 'terminated' : 'round_limit',
      rounds: d.messages.filter((m) => m.role === 'assistant').length,
      messages: d.messages.map((m) => ({ role: m.role, content: m.content, input_tokens: null, output_tokens: null, latency_ms: null, finish_reason: null })),
      input_tokens: null,
      output_tokens: null,
      cost_usd: null,
    },
  );
  return { key: d.key, try: 1, ...body };
}

function legacyJudgmentRecord(j: Judgment, userModel: string): JudgmentRecord {
  const d = j.dialogue;
  const body = judgmentRecord(
    {
      dialogue_id: d.key,
      scenario_id: d.scenario.scenario_id,
      user_id: d.source.userId,
      task_id: d.source.taskId,
      kind: d.scenario.kind,
      setting: d.source.setting,
      assistant_model: `${LEGACY_PREFIX}${d.source.model}`,
      user_model: userModel,
      dialogue_prompt_version: LEGACY_PROMPT_VERSION,
      replicate: 0,
      relevant_domains: d.scenario.relevant_domains,
      dimension: j.source.dimension,
      target: j.source.target,
      turn: null,
      judge_model: `${LEGACY_PREFIX}${j.source.judge}`,
      judge_temperature: null,
      judge_max_tokens: null,
      judge_prompt_version: LEGACY_PROMPT_VERSION,
      simulated: false,
    },
    {
      status: j.status,
      error: j.error,
      verdict: j.verdict,
      score: j.score,
      turn_scores: null,
      original_score: j.original_score,
      justification: j.justification,
      raw: j.raw,
      reasked: false,
      input_tokens: null,
      output_tokens: null,
      cost_usd: null,
    },
  );
  return { key: j.key, try: 1, ...body };
}

async function mapLimit<T, R>(items: T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) {
        const i = next++;
        out[i] = await fn(items[i]!);
      }
    }),
  );
  return out;
}

export function formatLegacySummary(s: LegacyImportSummary): string {
  const lines: string[] = [];
  lines.push(`${s.dry_run ? 'Would import' : 'Imported'} ${s.dialogues} dialogue(s) and ${s.judgments} judgment(s) from ${s.source}`);
  lines.push(`setting suffixes: ${describeSuffixes(s.setting_suffixes)}`);
  lines.push('', 'dialogues (model, setting: n SD + MD -> folder):');
  for (const c of s.cells) lines.push(`  ${c.model}  ${c.setting}: ${c.dialogues} (${c.sd} SD + ${c.md} MD) from ${c.folders.join(', ')} -> ${c.dir}`);
  if (s.judges.length) {
    lines.push('', 'judgments (model, setting, judge, dimension/target: ok, unparsed):');
    for (const r of s.counts)
      lines.push(`  ${r.model}  ${r.setting}  ${r.judge}  ${r.dimension}/${r.target}: ${r.ok} ok${r.parse_error ? `, ${r.parse_error} unparsed` : ''}`);
    for (const j of s.judges) lines.push(`  ${j.judge} -> ${j.dir}${j.kept_rows ? ` (kept ${j.kept_rows} row(s) of other cells)` : ''}`);
  }
  for (const p of s.pruned) lines.push(`  removed ${p.removed_rows} row(s) of the replaced cells from ${p.dir}`);
  if (s.unparsed.length) {
    lines.push('', `${s.unparsed.length} repl${s.unparsed.length === 1 ? 'y' : 'ies'} did not parse (stored as parse_error with the raw text, never scored):`);
    for (const u of s.unparsed.slice(0, 20)) lines.push(`  ${u.file}: ${u.error}`);
    if (s.unparsed.length > 20) lines.push(`  ... and ${s.unparsed.length - 20} more (--json lists every one)`);
  }
  if (s.warnings.length) {
    lines.push('', 'warnings:');
    for (const w of s.warnings) lines.push(`  ${w}`);
  }
  lines.push('', s.dry_run ? 'Dry run: nothing written.' : `Wrote ${s.written.length} Parquet file(s) in ${s.elapsed_ms} ms; next: plens warehouse`);
  return lines.join('\n');
}
