/**
 * What the judge scores. Paper Figure 5 both ways: `personalization_turns` scores each prefix
 * ending with an assistant turn (one call per turn); `personalization_chain` is the original's
 * "chain of turn" judgment (one call per dialogue, one score per assistant turn in one reply).
 */
export const JUDGE_DIMENSIONS = ['task_completion', 'personalization', 'naturalness', 'coherence', 'personalization_turns', 'personalization_chain'] as const;
export type JudgeDimensionName = (typeof JUDGE_DIMENSIONS)[number];
/** What `plens judge` and a pipeline's judge score when they name no dimensions: the paper's four. */
export const DEFAULT_DIMENSIONS: JudgeDimensionName[] = ['task_completion', 'personalization', 'naturalness', 'coherence'];
