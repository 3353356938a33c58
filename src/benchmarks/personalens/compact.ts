import { llmStageFormat } from '../../engine/llm-stage.js';
import { Partition, type Columns } from '../../engine/partition.js';

export { DIALOGUE_COLUMNS } from './records.js';

/** Compacts the partition in `dir` whose records are `<outputName>.parquet` with these columns (see Partition.compact). */
export async function compactPartition(dir: string, outputName: string, columns: Columns): Promise<{ rows: number }> {
  return new Partition(dir, llmStageFormat(outputName, columns)).compact();
}
