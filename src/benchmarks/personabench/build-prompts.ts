/**
 * Prompt building for every task x setting: the selected samples (selection.ts) with the
 * prompt text each original maker would write for them, as one record per sample. These
 * records are what the predictions stage sends; `import-prompts` writes the same shape.
 */
import type { UserPosts } from './corpus.js';
import { impactNpConvPrompt, replyNpConvExtras, replyNpConvPrompt, signNpConvPrompt } from './np-conv-prompts.js';
import { PromptCorpus } from './prompt-corpus.js';
import { scorePrompt } from './prompts.js';
import { replyPrompt } from './reply-prompts.js';
import { selectAll, type Fidelity, type ReplySample, type ScoreSample, type SelectionOptions, type Setting, type Task } from './selection.js';

export interface PromptRecord {
  /** `<task>/<setting>/<position>`, unique within one run. */
  sampleId: string;
  task: Task;
  setting: Setting;
  position: number;
  targetPostId: string | null;
  targetReplyId: string | null;
  trueLabel: string | number;
  subreddit: string;
  user: string | null;
  fewShot: unknown;
  prompt: string;
  /** Fields the original maker writes beside the prompt (3.3 NP-Conv parent and context fields). */
  extra: Record<string, unknown> | null;
  /** `plens` when built here; the file and line when read by import-prompts. */
  source: 'plens' | { file: string; line: number };
}

/**
 * A record's few-shot as type and ids, whether plens built it (`{type, postId, replyId}`) or it
 * was read from an original file (each maker's `few_shot_info` names; "N/A..." is none).
 */
export function fewShotIds(record: Pick<PromptRecord, 'source' | 'fewShot'>): { type: string | null; postId: string | null; replyId: string | null } {
  const fs = record.fewShot;
  if (fs === null || typeof fs !== 'object') return { type: null, postId: null, replyId: null };
  const f = fs as Record<string, unknown>;
  if (record.source === 'plens')
    return { type: (f['type'] as string) ?? null, postId: (f['postId'] as string | null) ?? null, replyId: (f['replyId'] as string | null) ?? null };
  const none = (v: unknown): string | null => (typeof v === 'string' && !v.startsWith('N/A') ? v : null);
  return {
    type: typeof f['type'] === 'string' ? f['type'] : null,
    postId: none(f['fs_post_ref_id'] ?? f['fs_post_ref_id_in_store'] ?? f['fs_context_provider_post_ref_id']),
    replyId: none(f['fs_reply_id_hidden_in_example'] ?? f['fs_example_reply_id_in_fs_post'] ?? f['fs_context_provider_reply_id_hidden_in_example']),
  };
}

export function sampleId(task: Task, setting: Setting, position: number): string {
  return `${task}/${setting}/${position}`;
}

/** The prompt text of one selected sample. */
export function buildPrompt(sample: ScoreSample | ReplySample, corpus: PromptCorpus, fidelity: Fidelity): string {
  if (sample.task === '3.3') {
    return sample.setting === 'NP-Conv' ? replyNpConvPrompt(sample, corpus, fidelity) : replyPrompt(sample, corpus.index, fidelity);
  }
  if (sample.setting !== 'NP-Conv') return scorePrompt(sample, corpus.index, fidelity);
  return sample.task === '3.1' ? signNpConvPrompt(sample, corpus) : impactNpConvPrompt(sample, corpus, fidelity);
}

/** A sample's prompt record; `withPrompt: false` leaves the text empty (for comparing data fields only). */
export function promptRecord(sample: ScoreSample | ReplySample, corpus: PromptCorpus, fidelity: Fidelity, o: { withPrompt?: boolean } = {}): PromptRecord {
  return {
    sampleId: sampleId(sample.task, sample.setting, sample.position),
    task: sample.task,
    setting: sample.setting,
    position: sample.position,
    targetPostId: sample.targetPostId,
    targetReplyId: sample.targetReplyId,
    trueLabel: sample.trueLabel,
    subreddit: sample.subreddit,
    user: sample.user,
    fewShot: sample.fewShot,
    prompt: o.withPrompt === false ? '' : buildPrompt(sample, corpus, fidelity),
    extra: sample.task === '3.3' && sample.setting === 'NP-Conv' ? replyNpConvExtras(sample, corpus, fidelity) : null,
    source: 'plens',
  };
}

/** Selects every task x setting and builds each sample's prompt, in selectAll's order. */
export function buildAllPrompts(users: readonly UserPosts[], options: SelectionOptions): PromptRecord[] {
  const corpus = new PromptCorpus(users);
  const { score, reply } = selectAll(users, options);
  return [...score, ...reply].map((sample) => promptRecord(sample, corpus, options.fidelity));
}
