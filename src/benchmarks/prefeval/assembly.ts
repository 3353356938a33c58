import { createHash } from 'node:crypto';
import type { ExplicitTask } from './data.js';
import type { Check, PrefEvalPrompts } from './prompts.js';
import type { ResponseRecord } from './stages.js';

/**
 * The baselines plens runs (the original's --task): zero-shot, the reminder, chain of thought,
 * self-critic (the zero-shot answer, the model's critique of it, then its revision), and RAG (the
 * 5 earlier exchanges most similar to the question put before it).
 */
export const BASELINES = ['zero-shot', 'remind', 'cot', 'selfcritic', 'rag'] as const;
export type Baseline = (typeof BASELINES)[number];

/**
 * The question as the original sends it: the reminder appended (remind), the chain-of-thought
 * text put first (cot), then the word limit, `(Please respond within N words.)`, always.
 */
export function questionText(question: string, baseline: Baseline, p: PrefEvalPrompts, retrieved: readonly string[] = []): string {
  let q = question;
  if (baseline === 'remind') q = q + p.reminder;
  if (baseline === 'cot') q = p.cot + q;
  if (baseline === 'rag') q = ragContext(p, retrieved) + q;
  return `${q} (Please respond within ${p.maxGenTokens} words.)`;
}

/** RAG's context block: the head, a line per retrieved exchange in rank order, the tail (placeholders filled in one pass, as an f-string is). */
export function ragContext(p: PrefEvalPrompts, retrieved: readonly string[]): string {
  const fill = (template: string, values: Record<string, string>) => template.replace(/\{(k|n|sentence)\}/g, (whole, name: string) => values[name] ?? whole);
  return (
    fill(p.rag.head, { k: String(retrieved.length) }) +
    retrieved.map((sentence, i) => fill(p.rag.item, { n: String(i + 1), sentence })).join('') +
    fill(p.rag.tail, {})
  );
}

/** The options lettered as the original letters them: `A. <option>`, a line each. */
export function formatOptions(options: readonly string[]): string {
  return options.map((o, i) => `${'ABCDEFGHIJKLMNOPQRSTUVWXYZ'[i]}. ${o}`).join('\n');
}

/** The options block that follows an MCQ question (an f-string: its one placeholder filled). */
export function mcqBlock(p: PrefEvalPrompts, options: readonly string[]): string {
  return p.mcq.format.split('{formatted_options}').join(formatOptions(options));
}

/**
 * An MCQ question as the original sends it: the reminder appended (remind), the chain-of-thought
 * text first (cot), the retrieved context first (rag), then the options block.
 */
export function mcqQuestionText(
  question: string,
  baseline: Baseline,
  p: PrefEvalPrompts,
  options: readonly string[],
  retrieved: readonly string[] = [],
): string {
  let q = question;
  if (baseline === 'remind') q = q + p.reminder;
  if (baseline === 'cot') q = p.cot + q;
  if (baseline === 'rag') q = ragContext(p, retrieved) + q;
  return q + mcqBlock(p, options);
}

/**
 * The self-critic's revision request: an f-string in the original, so `{question}` is filled with the
 * question as asked (no word-limit cue) and doubled braces in the text become single ones.
 */
export function revisionText(p: PrefEvalPrompts, question: string): string {
  return p.revision
    .split('{question}')
    .map((part) => part.replace(/\{\{/g, '{').replace(/\}\}/g, '}'))
    .join(question);
}

/** Python's str.replace(old, new): every occurrence, the replacement taken literally. */
const replaceAll = (text: string, from: string, to: string) => text.split(from).join(to);

/**
 * A check's request text: its template with the placeholders filled one after another, in the
 * original's order (so a response that itself contains `{question}` is filled as the original
 * fills it).
 */
export function checkText(
  check: Check,
  p: PrefEvalPrompts,
  v: { preference: string; question: string; end_generation: string; assistant_restatement: string },
): string {
  const t = p.checks[check];
  if (check === 'acknow') return replaceAll(replaceAll(t, '{end_generation}', v.end_generation), '{question}', v.question);
  if (check === 'hallucinate') return replaceAll(replaceAll(t, '{preference}', v.preference), '{assistant_restatement}', v.assistant_restatement);
  return replaceAll(replaceAll(replaceAll(t, '{preference}', v.preference), '{question}', v.question), '{end_generation}', v.end_generation);
}

function chance(seed: string): number {
  return createHash('sha256').update(seed).digest().readUInt32BE(0) / 2 ** 32;
}

/** How often the simulated assistant keeps the preference in mind: more with the reminder, less after many filler turns. */
function followRate(baseline: Baseline, interTurns: number, implicit: boolean): number {
  const base = baseline === 'remind' ? 0.85 : baseline === 'rag' ? 0.7 : baseline === 'cot' ? 0.6 : baseline === 'selfcritic' ? 0.5 : 0.35;
  return (base * (implicit ? 0.6 : 1)) / (1 + interTurns / 50);
}

const ACK = 'Keeping in mind what you told me:';

/**
 * The offline simulator's reply (sim:default), computed here and carried on the request: it
 * acknowledges the preference more often with the reminder and less after many turns, so the
 * demo's tables have differences to show. It says nothing about any model.
 */
export function simulatedResponse(task: ExplicitTask, baseline: Baseline | 'preference', interTurns: number | null): string {
  if (baseline === 'preference') return `Understood. ${ACK} "${task.preference}"`;
  const roll = chance(`prefeval|${task.topic}|${task.form}|${task.index}|${baseline}|${interTurns}`);
  if (roll < followRate(baseline, interTurns ?? 0, task.conversation !== null)) return `${ACK} "${task.preference}". Here are options that fit it.`;
  if (roll > 0.93) return "I'm sorry, I don't remember your preferences; could you tell me more?";
  return 'Here are the most popular options, whatever your taste.';
}

/** The simulated judge: reads the simulated response's marks, with some disagreement. */
export function simulatedCheck(
  check: Check,
  r: Pick<ResponseRecord, 'topic' | 'form' | 'task_index' | 'baseline' | 'inter_turns' | 'response_to_q' | 'preference'>,
): string {
  const text = r.response_to_q ?? '';
  const acknowledges = text.startsWith(ACK);
  const roll = chance(`prefeval-judge|${check}|${r.topic}|${r.form}|${r.task_index}|${r.baseline}|${r.inter_turns}`);
  const yes = (b: boolean) => (b ? 'Yes' : 'No');
  switch (check) {
    case 'acknow':
      return `<preference>${acknowledges ? r.preference : ''}</preference>\n<answer>${yes(acknowledges)}</answer>`;
    case 'violate':
      return `<explanation>simulated</explanation>\n<answer>${yes(!acknowledges && roll < 0.8)}</answer>`;
    case 'hallucinate':
      return `<explanation>simulated</explanation>\n<answer>${yes(roll < 0.05)}</answer>`;
    case 'helpful':
      return `<explanation>simulated</explanation>\n<answer>${yes(!text.startsWith("I'm sorry"))}</answer>`;
  }
}

/**
 * The offline simulator's MCQ answer (sim:default), to follow the "<choice>" the request ends with:
 * the option that follows the preference as often as the generation simulator follows it,
 * otherwise another; now and then a reply with no letter, as a real model's may be.
 */
export function simulatedChoice(
  task: Pick<ExplicitTask, 'topic' | 'form' | 'index' | 'conversation'>,
  baseline: Baseline,
  interTurns: number,
  correct: number,
  stage: string,
): string {
  const roll = chance(`prefeval-mcq|${stage}|${task.topic}|${task.form}|${task.index}|${baseline}|${interTurns}`);
  const follow = Math.min(0.95, 0.25 + followRate(baseline, interTurns, task.conversation !== null));
  if (roll > 0.97) return "I'd rather not";
  const pick = roll < follow ? correct : (correct + 1 + Math.floor((roll * 1000) % 3)) % 4;
  return `${'ABCD'[pick]}</choice>`;
}
