/**
 * `plens persona import-prompts FILE...`: reads the prompt JSONL files the original prompt
 * makers write (spec §2.1.4, §2.3.5: `{post_data_store, prediction_task: {prompt_text, ...}}`
 * for 3.1/3.2, `{user, prompt, true_label, subreddit, ...}` for 3.3 and for the flattened
 * lines the batch evaluator reads) and turns each line into a plens prompt record, the
 * prompt text byte for byte as given. Task and setting come from --task/--setting, else
 * the original file name, else the record itself. A bad line stops the import with its
 * file, line and field; nothing is written then.
 */
import { createReadStream, readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { createInterface } from 'node:readline';
import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020.js';
import { replaceDirectoryAtomic } from '../../core/atomic.js';
import { PlensError } from '../../core/errors.js';
import { schemasDir } from '../../core/paths.js';
import { describeSchemaError } from '../../core/validator.js';
import { sampleId, type PromptRecord } from './build-prompts.js';
import { writeJsonl } from '../../core/jsonl.js';
import type { Setting, Task } from './selection.js';

/** The original makers' output file names (spec §2, file -> setting map). */
export const ORIGINAL_PROMPT_FILES: Record<string, { task: Task; setting: Setting }> = {
  'WithConversationPrompts_ScorePrediction_Refactored.jsonl': { task: '3.1', setting: 'P-Conv' },
  'WithoutConversationPrompts_ScorePrediction_Refactored.jsonl': { task: '3.1', setting: 'P-NonConv' },
  'WithConversationPrompts_ScorePrediction_PseudoRandomContext.jsonl': { task: '3.1', setting: 'NP-Conv' },
  'WithConversationPrompts_ExactScorePrediction.jsonl': { task: '3.2', setting: 'P-Conv' },
  'WithoutConversationPrompts_ExactScorePrediction.jsonl': { task: '3.2', setting: 'P-NonConv' },
  'WithConversationPrompts_PseudoRandomContext_ExactScorePrediction.jsonl': { task: '3.2', setting: 'NP-Conv' },
  'WithConversationPrompts_BodyPrediction_v2.jsonl': { task: '3.3', setting: 'P-Conv' },
  'WithoutConversationPrompts_BodyPrediction_v2.jsonl': { task: '3.3', setting: 'P-NonConv' },
  'WithPseudoRandomConversationPrompts_BodyPrediction.jsonl': { task: '3.3', setting: 'NP-Conv' },
};

export interface ImportPromptsOptions {
  files: string[];
  out: string;
  task?: Task;
  setting?: Setting;
  dryRun?: boolean;
}

export interface ImportPromptsSummary {
  dry_run: boolean;
  file: string | null;
  records: number;
  blank_lines: number;
  /** Per input file: how many records of which task x setting, and how that was decided. */
  sources: Array<{ file: string; records: number; counts: Record<string, number>; decided_by: string }>;
}

let validators: { score: ValidateFunction; reply: ValidateFunction } | undefined;
function schemas(): { score: ValidateFunction; reply: ValidateFunction } {
  if (validators) return validators;
  const ajv = new Ajv2020.default({ allErrors: false, strict: true, allowUnionTypes: true });
  for (const name of ['persona-score-prompt.schema.json', 'persona-reply-prompt.schema.json'])
    ajv.addSchema(JSON.parse(readFileSync(join(schemasDir, name), 'utf8')));
  validators = { score: ajv.getSchema('plens:persona-score-prompt')!, reply: ajv.getSchema('plens:persona-reply-prompt')! };
  return validators;
}

type Where = { file: string; line: number };
const fail = (where: Where, message: string, pointer?: string): never => {
  throw new PlensError('E_INPUT_SCHEMA', message, { location: { ...where, ...(pointer !== undefined ? { pointer } : {}) } });
};

function validate(validator: ValidateFunction, value: unknown, where: Where): void {
  if (validator(value)) return;
  const error = validator.errors![0]!;
  fail(where, describeSchemaError(error, value), error.instancePath || '/');
}

/** Task from the record: 3.1's labels are the two signs, 3.2's a number, 3.3's any text. */
function taskOf(label: unknown, envelope: boolean): Task {
  if (typeof label === 'number') return '3.2';
  if (envelope) return '3.1';
  return label === 'positive' || label === 'negative' ? '3.1' : '3.3';
}

/** Setting from the record's fields, then from the section markers the makers print. */
function settingOf(task: Task, record: Record<string, unknown>, prompt: string, fewShotInfo: unknown): Setting | null {
  if (task === '3.3') {
    if ('context_post_used_idx_global' in record || prompt.includes('### CONTEXT FOR PREDICTION TASK ###')) return 'NP-Conv';
    return prompt.startsWith('### FEW-SHOT EXAMPLE ###') ? 'P-Conv' : 'P-NonConv';
  }
  if (fewShotInfo && typeof fewShotInfo === 'object') {
    const info = fewShotInfo as Record<string, unknown>;
    if ('fs_post_ref_id_in_store' in info || info['type'] === 'pseudo_random_context_distant_post') return 'NP-Conv';
    if (info['type'] === 'dynamic' || info['type'] === 'default') return 'P-Conv';
  }
  if (prompt.includes('Pseudo-Random Context') || prompt.includes('DIFFERENT, unrelated post')) return 'NP-Conv';
  if (prompt.includes('(Without Full Conversation Context)')) return 'P-NonConv';
  if (prompt.includes('(With Full Conversation Context)') || prompt.includes('### ACTUAL TASK ###')) return 'P-Conv';
  if (fewShotInfo === undefined && task === '3.1' && !prompt.includes('FEW-SHOT')) return 'P-NonConv';
  return null;
}

function checkLabel(task: Task, label: unknown, where: Where, pointer: string): void {
  if (task === '3.1' && label !== 'positive' && label !== 'negative')
    fail(where, `expected "positive" or "negative" for a 3.1 label (got ${JSON.stringify(label)})`, pointer);
  if (task === '3.2' && !(typeof label === 'number' && Number.isFinite(label)))
    fail(where, `expected a number for a 3.2 label (got ${JSON.stringify(label)})`, pointer);
  if (task === '3.3' && typeof label !== 'string') fail(where, `expected text for a 3.3 label (got ${JSON.stringify(label)})`, pointer);
}

const str = (value: unknown): string | null => (typeof value === 'string' ? value : null);

/** One line of an original prompt file as a plens prompt record (position and id set by the caller). */
export function recordFromLine(
  value: unknown,
  where: Where,
  forced: { task?: Task; setting?: Setting },
): Omit<PromptRecord, 'sampleId' | 'position'> & { decidedBy: string } {
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    fail(where, `expected a JSON object (got ${Array.isArray(value) ? 'an array' : JSON.stringify(value)})`, '/');
  const record = value as Record<string, unknown>;
  const envelope = 'prediction_task' in record;
  validate(envelope ? schemas().score : schemas().reply, record, where);
  const fields = (envelope ? record['prediction_task'] : record) as Record<string, unknown>;
  const prompt = (envelope ? fields['prompt_text'] : fields['prompt']) as string;
  const label = fields['true_label'];
  const labelPointer = envelope ? '/prediction_task/true_label' : '/true_label';
  let decidedBy = 'record';
  const task = forced.task ?? taskOf(label, envelope);
  if (forced.task) decidedBy = 'option';
  checkLabel(task, label, where, labelPointer);
  const setting = forced.setting ?? settingOf(task, record, prompt, fields['few_shot_info']);
  if (setting === null)
    fail(
      where,
      `cannot tell the setting of this ${task} record (no few_shot_info and no known section marker); pass --setting`,
      envelope ? '/prediction_task' : '/',
    );
  if (forced.setting) decidedBy = 'option';

  const targetPostId = str(fields['target_post_reference_id']);
  // 3.1/3.2 lines name no user; the stored post's author is the target user.
  const store =
    envelope && record['post_data_store'] && typeof record['post_data_store'] === 'object'
      ? (record['post_data_store'] as Record<string, { author?: unknown }>)
      : null;
  const user = envelope ? (targetPostId !== null ? str(store?.[targetPostId]?.author) : null) : str(record['user']);
  const known = new Set(
    envelope
      ? ['prompt_text', 'true_label', 'target_post_reference_id', 'target_reply_id', 'subreddit', 'few_shot_info']
      : ['prompt', 'true_label', 'user', 'subreddit'],
  );
  const extra = Object.fromEntries(Object.entries(fields).filter(([key]) => !known.has(key)));
  return {
    task,
    setting: setting!,
    targetPostId,
    targetReplyId: str(fields['target_reply_id']),
    trueLabel: label as string | number,
    subreddit: fields['subreddit'] === null || fields['subreddit'] === undefined ? '' : String(fields['subreddit']),
    user,
    fewShot: fields['few_shot_info'] ?? null,
    prompt,
    extra: Object.keys(extra).length ? extra : null,
    source: where,
    decidedBy,
  };
}

async function* readFile(
  file: string,
  forced: { task?: Task; setting?: Setting },
  blank: { count: number },
): AsyncGenerator<ReturnType<typeof recordFromLine>> {
  const stream = createReadStream(file, 'utf8');
  const opened = new Promise<void>((resolve, reject) => {
    stream.once('open', () => resolve());
    stream.once('error', reject);
  });
  try {
    await opened;
  } catch (error) {
    throw new PlensError('E_INPUT_NOT_FOUND', `cannot read file: ${(error as NodeJS.ErrnoException).code ?? String(error)}`, {
      location: { file },
      cause: error,
    });
  }
  const lines = createInterface({ input: stream, crlfDelay: Infinity });
  let line = 0;
  try {
    for await (const text of lines) {
      line++;
      if (text.trim() === '') {
        blank.count++;
        continue;
      }
      let value: unknown;
      try {
        value = JSON.parse(line === 1 ? text.replace(/^\uFEFF/, '') : text);
      } catch (error) {
        throw new PlensError('E_INPUT_JSON', `not valid JSON: ${(error as Error).message}`, { location: { file, line }, cause: error });
      }
      yield recordFromLine(value, { file, line }, forced);
    }
  } finally {
    lines.close();
    stream.destroy();
  }
}

/** Reads and checks every line of the files, in order; numbers each task x setting from 0. */
export async function readPromptFiles(
  files: readonly string[],
  options: { task?: Task; setting?: Setting } = {},
): Promise<{ records: PromptRecord[]; sources: ImportPromptsSummary['sources']; blankLines: number }> {
  const positions = new Map<string, number>();
  const blank = { count: 0 };
  const sources: ImportPromptsSummary['sources'] = [];
  const records: PromptRecord[] = [];
  for (const file of files) {
    const byName = ORIGINAL_PROMPT_FILES[basename(file)];
    const forced = { task: options.task ?? byName?.task, setting: options.setting ?? byName?.setting };
    const source = {
      file,
      records: 0,
      counts: {} as Record<string, number>,
      decided_by: options.task || options.setting ? 'option' : byName ? 'file name' : 'record',
    };
    for await (const { decidedBy: _, task, setting, ...rest } of readFile(file, forced, blank)) {
      const key = `${task} ${setting}`;
      const position = positions.get(key) ?? 0;
      positions.set(key, position + 1);
      source.records++;
      source.counts[key] = (source.counts[key] ?? 0) + 1;
      records.push({ sampleId: sampleId(task, setting, position), task, setting, position, ...rest });
    }
    sources.push(source);
  }
  return { records, sources, blankLines: blank.count };
}

export async function runImportPrompts(options: ImportPromptsOptions): Promise<ImportPromptsSummary> {
  if (options.files.length === 0) throw new PlensError('E_USAGE', 'name at least one prompt file');
  // Everything is read and checked before anything is written.
  const { records, sources, blankLines } = await readPromptFiles(options.files, {
    ...(options.task ? { task: options.task } : {}),
    ...(options.setting ? { setting: options.setting } : {}),
  });
  const summary: ImportPromptsSummary = {
    dry_run: options.dryRun === true,
    file: options.dryRun ? null : join(options.out, 'prompts.jsonl'),
    records: records.length,
    blank_lines: blankLines,
    sources,
  };
  if (!options.dryRun) {
    await replaceDirectoryAtomic(options.out, async (staging) => {
      await writeJsonl(join(staging, 'prompts.jsonl'), records);
      await writeFile(join(staging, 'summary.json'), JSON.stringify(summary, null, 2) + '\n');
    });
  }
  return summary;
}
