import { join } from 'node:path';

/** Where prediction partitions live: one folder per (task, setting, model, fidelity/source, decoding). */
export const predictionsRoot = (workspace: string): string => join(workspace, 'persona', 'predictions');
/** Where the scoring step writes sample_scores.parquet and metrics.parquet. */
export const scoresRoot = (workspace: string): string => join(workspace, 'persona', 'scores');
