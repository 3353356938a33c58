/**
 * Table 10's speaker groups: both speakers together (the paper's corpus) and each alone. A leaf module:
 * command-line option parsing imports it without loading DuckDB.
 */
export const SPEAKER_GROUPS = ['both', 'user', 'assistant'] as const;
export type SpeakerGroup = (typeof SPEAKER_GROUPS)[number];

/**
 * The speaker groups a warehouse build measures with the laps protocol unless told otherwise: the
 * paper's (both speakers). Each laps group costs the same whatever its size (100 subsets of 7,012
 * tokens per assistant and kind), so the per-speaker groups would triple the laps protocol's work; the
 * full protocol, which costs in proportion to the corpus, measures every group.
 */
export const DEFAULT_LAPS_SPEAKERS: readonly SpeakerGroup[] = ['both'];

/** A list of speaker groups without repeats, in SPEAKER_GROUPS order (so equal choices fingerprint alike). */
export function speakerGroupsInOrder(groups: readonly SpeakerGroup[]): SpeakerGroup[] {
  return SPEAKER_GROUPS.filter((g) => groups.includes(g));
}
