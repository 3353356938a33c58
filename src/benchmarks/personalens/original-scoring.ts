import type { JudgeDimension } from './judge-parse.js';

/**
 * A judge reply read the way the released PersonaLens gather script reads it
 * (util/gather_evaluation.py; spec personalens-prompts.md, "Scoring in the released gather
 * script"), kept beside plens's own parse so the two countings can be compared:
 * - task completion: the first `VERDICT: (True|False)` match, case-insensitive, exactly one space
 *   after the colon; 1 when it says True, otherwise 0: a reply without a match counts as not
 *   completed, as the script counts it;
 * - scores: the first `<Name> Score: (\d+)` match, case-sensitive (`Personalization Score`,
 *   `Naturalness Score`, `Coherence Score`), anywhere in the reply, with no range check; null when
 *   nothing matches (the script leaves such a reply out of its mean).
 * plens's parser differs on purpose (tolerant of formatting, strict about range and conflicts);
 * this reading exists only to show what the original numbers would have been.
 */
export function originalScore(dimension: JudgeDimension, reply: string): number | null {
  if (dimension === 'task_completion') {
    const m = /VERDICT: (True|False)/i.exec(reply);
    return m && m[1]!.toLowerCase() === 'true' ? 1 : 0;
  }
  const m = new RegExp(`${ORIGINAL_LABEL[dimension]}: (\\d+)`).exec(reply);
  return m ? Number(m[1]) : null;
}

const ORIGINAL_LABEL: Record<Exclude<JudgeDimension, 'task_completion'>, string> = {
  personalization: 'Personalization Score',
  naturalness: 'Naturalness Score',
  coherence: 'Coherence Score',
};
