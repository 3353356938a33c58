/**
 * `plens persona select`: every task x setting selection written as one JSONL file
 * (samples.jsonl), and the same samples with their prompt text (prompts.jsonl, the records
 * the predictions stage sends; build-prompts.ts).
 */
import { copyFile, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { replaceDirectoryAtomic } from '../../core/atomic.js';
import { PlensError } from '../../core/errors.js';
import { writeJsonl } from '../../core/jsonl.js';
import { readPersonaUsers } from './import.js';
import { fewShotIds, promptRecord, type PromptRecord } from './build-prompts.js';
import { readPromptFiles } from './import-prompts.js';
import { runOriginalMakers } from './original-makers.js';
import { FIXED_NP_CONV_PROMPTS } from './np-conv-prompts.js';
import { PromptCorpus } from './prompt-corpus.js';
import { FIXED_CORRECTIONS, selectAll, type Fidelity } from './selection.js';

export interface PersonaSelectOptions {
  from: string;
  out: string;
  fidelity: Fidelity;
  seed: number;
  dryRun?: boolean;
  /**
   * A checkout of the original code: its prompt makers run on the input and their nine files
   * (kept byte for byte under original-files/) become prompts.jsonl, the original's wording.
   */
  original?: string;
  /** The Python that runs them; default python3. */
  python?: string;
  /**
   * The original's 3.1 and/or 3.2 NP-Conv files from an earlier (unseeded) run: their order of
   * target replies replaces the seeded shuffle.
   */
  replayOrder?: string[];
  onProgress?: (line: string) => void;
}

/** How the original makers' records agree with plens's own selection, per task x setting. */
export interface OriginalAgreement {
  records: { plens: number; original: number };
  /** Records equal in target ids, label, subreddit and user, position by position. */
  equal: number;
  first_difference: { position: number; field: string; plens: unknown; original: unknown } | null;
}

export interface PersonaSelectSummary {
  dry_run: boolean;
  fidelity: Fidelity;
  seed: number;
  file: string | null;
  prompts_file: string | null;
  counts: Record<string, number>;
  corrections: readonly string[];
  /** Present with --original: where the nine files are and how they agree with plens's selection. */
  original?: {
    checkout: string;
    files_dir: string | null;
    files: string[];
    /** Makers that stopped without writing (the original exits 1 where a setting has no samples). */
    stopped: Array<{ script: string; exit: string; message: string }>;
    agreement: Record<string, OriginalAgreement>;
  };
}

export async function runPersonaSelect(options: PersonaSelectOptions): Promise<PersonaSelectSummary> {
  const { users, format } = await readPersonaUsers(options.from);
  const replayOrder = options.replayOrder?.length ? await readReplayOrder(options.replayOrder) : undefined;
  const { score, reply } = selectAll(users, { fidelity: options.fidelity, seed: options.seed, ...(replayOrder ? { replayOrder } : {}) });
  const rows = [...score, ...reply];
  const counts: Record<string, number> = {};
  for (const row of rows) counts[`${row.task} ${row.setting}`] = (counts[`${row.task} ${row.setting}`] ?? 0) + 1;
  const summary: PersonaSelectSummary = {
    dry_run: options.dryRun === true,
    fidelity: options.fidelity,
    seed: options.seed,
    file: options.dryRun ? null : join(options.out, 'samples.jsonl'),
    prompts_file: options.dryRun ? null : join(options.out, 'prompts.jsonl'),
    counts,
    corrections: options.fidelity === 'fixed' ? [...FIXED_CORRECTIONS, ...FIXED_NP_CONV_PROMPTS] : [],
  };
  if (options.original !== undefined && options.replayOrder?.length)
    throw new PlensError('E_USAGE', '--replay-order and --original do not go together: the makers shuffle afresh', {
      hint: 'with --original, --seed orders both sides; --replay-order replays an earlier run with plens alone',
    });
  if (options.original !== undefined && options.fidelity !== 'original')
    throw new PlensError('E_USAGE', '--original runs the original makers, which have no fixed variant', {
      hint: "leave out --fidelity fixed, or leave out --original to use the corrections with plens's own wording",
    });
  const corpus = new PromptCorpus(users);
  const original =
    options.original === undefined
      ? undefined
      : await runOriginalMakers({
          checkout: options.original,
          input: options.from,
          format,
          seed: options.seed,
          ...(options.python ? { python: options.python } : {}),
          ...(options.onProgress ? { onProgress: options.onProgress } : {}),
        });
  try {
    let originalRecords: PromptRecord[] | undefined;
    if (original) {
      // Each record names the kept copy of its file, not the scratch folder: the predictions'
      // partitions are keyed by it, so a reselect with the same makers reuses them.
      const kept = new Map(original.files.map((f) => [f.path, join(options.out, ORIGINAL_FILES_DIR, f.name)]));
      originalRecords = (await readPromptFiles(original.files.map((f) => f.path))).records.map((r) =>
        typeof r.source === 'string' ? r : { ...r, source: { ...r.source, file: kept.get(r.source.file) ?? r.source.file } },
      );
      // Only the data fields are compared: plens's own prompt text is not built.
      const ours = rows.map((row) => promptRecord(row, corpus, options.fidelity, { withPrompt: false }));
      summary.original = {
        checkout: options.original!,
        files_dir: options.dryRun ? null : join(options.out, ORIGINAL_FILES_DIR),
        files: original.files.map((f) => f.name),
        stopped: original.stopped,
        agreement: compareWithOriginal(ours, originalRecords),
      };
    }
    if (!options.dryRun) {
      // The folder may be one the user named: anything in it this command did not write stays.
      await replaceDirectoryAtomic(
        options.out,
        async (staging) => {
          await writeJsonl(join(staging, 'samples.jsonl'), rows);
          if (original && originalRecords) {
            await mkdir(join(staging, ORIGINAL_FILES_DIR));
            for (const file of original.files) await copyFile(file.path, join(staging, ORIGINAL_FILES_DIR, file.name));
            await writeJsonl(join(staging, 'prompts.jsonl'), originalRecords);
          } else {
            // Prompts are written as they are built: 3.3 prompts carry whole threads.
            await writeJsonl(
              join(staging, 'prompts.jsonl'),
              (function* () {
                for (const row of rows) yield promptRecord(row, corpus, options.fidelity);
              })(),
            );
          }
          await writeFile(join(staging, 'summary.json'), JSON.stringify(summary, null, 2) + '\n');
        },
        { ownOnly: true },
      );
    }
  } finally {
    await original?.dispose();
  }
  return summary;
}

/** The target reply ids, in file order, of the 3.1 / 3.2 NP-Conv records in the given original files. */
async function readReplayOrder(files: readonly string[]): Promise<Partial<Record<'3.1' | '3.2', string[]>>> {
  const { records } = await readPromptFiles(files);
  const order: Partial<Record<'3.1' | '3.2', string[]>> = {};
  for (const r of records) {
    if (r.setting !== 'NP-Conv' || r.task === '3.3') continue;
    if (r.targetReplyId === null)
      throw new PlensError('E_INPUT_SCHEMA', 'an NP-Conv record without target_reply_id cannot give an order', {
        location: typeof r.source === 'string' ? {} : r.source,
      });
    (order[r.task] ??= []).push(r.targetReplyId);
  }
  if (!order['3.1'] && !order['3.2'])
    throw new PlensError('E_USAGE', '--replay-order found no 3.1 or 3.2 NP-Conv records', {
      hint: "pass the original's WithConversationPrompts_ScorePrediction_PseudoRandomContext.jsonl and/or WithConversationPrompts_PseudoRandomContext_ExactScorePrediction.jsonl",
    });
  return order;
}

/** Where the original makers' nine files are kept, under the selection folder. */
export const ORIGINAL_FILES_DIR = 'original-files';

/** The fields compared, as each side names them; null where a side does not carry one. */
function comparedFields(r: PromptRecord): Array<[string, unknown]> {
  const { postId: fewShotPost, replyId: fewShotReply } = fewShotIds(r);
  const fields: Array<[string, unknown]> = [
    ['targetPostId', r.targetPostId],
    ['targetReplyId', r.targetReplyId],
    ['trueLabel', r.trueLabel],
    ['subreddit', r.subreddit],
    ['user', r.user],
  ];
  // 3.3 lines carry no few-shot ids; 3.1/3.2 NP-Conv's come from its own fields.
  if (r.task !== '3.3') fields.push(['fewShotPost', fewShotPost], ['fewShotReply', fewShotReply]);
  if (r.extra !== null) for (const [name, value] of Object.entries(r.extra)) fields.push([name, value]);
  return fields;
}

/**
 * Position by position within each task x setting, over the fields both sides carry (3.3
 * lines carry no target ids, 3.1/3.2 lines no user name of their own).
 */
export function compareWithOriginal(ours: readonly PromptRecord[], theirs: readonly PromptRecord[]): Record<string, OriginalAgreement> {
  const group = (records: readonly PromptRecord[]): Map<string, PromptRecord[]> => {
    const map = new Map<string, PromptRecord[]>();
    for (const r of records) {
      const key = `${r.task} ${r.setting}`;
      map.set(key, [...(map.get(key) ?? []), r]);
    }
    return map;
  };
  const a = group(ours);
  const b = group(theirs);
  const out: Record<string, OriginalAgreement> = {};
  for (const key of new Set([...a.keys(), ...b.keys()])) {
    const mine = a.get(key) ?? [];
    const others = b.get(key) ?? [];
    const agreement: OriginalAgreement = { records: { plens: mine.length, original: others.length }, equal: 0, first_difference: null };
    for (let i = 0; i < Math.max(mine.length, others.length); i++) {
      const x = mine[i];
      const y = others[i];
      let difference: OriginalAgreement['first_difference'] = null;
      if (x === undefined || y === undefined) difference = { position: i, field: 'record', plens: x?.sampleId ?? null, original: y?.sampleId ?? null };
      else {
        const theirFields = new Map(comparedFields(y));
        const extraNames = new Set(Object.keys(x.extra ?? {}));
        for (const [name, value] of comparedFields(x)) {
          const other = theirFields.get(name);
          // A field one side does not carry is skipped; the makers' extra fields are compared as
          // they are, nulls included.
          if (other === undefined || (!extraNames.has(name) && (value === null || other === null))) continue;
          if (JSON.stringify(value) !== JSON.stringify(other)) {
            difference = { position: i, field: name, plens: value, original: other };
            break;
          }
        }
      }
      if (difference === null) agreement.equal++;
      else agreement.first_difference ??= difference;
    }
    out[key] = agreement;
  }
  return out;
}
