import type { Database } from '../db/database.js';

/**
 * What `plens export` writes, in terms that name no benchmark and no viewer: a run is a list of
 * cells (one task and one model under test), and a cell is a list of samples, each with what was
 * said and how it was scored. Each benchmark says what its cells and samples are (its `export`
 * part, platform/benchmark.ts); a format (export/inspect.ts) turns a cell into one log file.
 */

/** Tokens and cost of some calls. Cost is null where the calls were not priced. */
export interface Usage {
  input_tokens: number;
  output_tokens: number;
  cost_usd: number | null;
}

/** A message of a sample's conversation. */
export interface ExportMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
  /** The model that wrote it (a generated message). */
  model?: string;
}

/** One score of a sample. */
export interface SampleScore {
  value: number | string | boolean;
  /** The answer that was scored, where it is not the whole output (a choice, a parsed label). */
  answer?: string | null;
  /** Why: the judge's justification. */
  explanation?: string | null;
  metadata?: Record<string, unknown>;
}

/** One sample of a cell: a dialogue, a prediction, an answered question. */
export interface ExportSample {
  /** Unique within its cell and epoch. */
  id: string;
  /** 1, or the replicate's number counted from 1 where a sample is drawn several times. */
  epoch: number;
  /** What the model was given: a text, or messages. */
  input: string | ExportMessage[];
  /** What a correct answer is ('' where there is none). */
  target: string | string[];
  /** The options of a multiple-choice question. */
  choices?: string[];
  /** The whole conversation, the model's replies included. */
  messages: ExportMessage[];
  /** The model's last reply: what the scores judged. */
  output: string;
  /** Its scores by scorer name (none where it was not scored). */
  scores: Record<string, SampleScore>;
  metadata: Record<string, unknown>;
  /** Its calls' usage by model spec and by role. */
  usage: { models: Record<string, Usage>; roles: Record<string, Usage> };
  /** Why it has no result (a failed call, an unreadable reply). */
  error?: string;
}

/** One metric of a scorer over a cell. */
export interface ExportMetric {
  name: string;
  value: number;
  /** Metrics that belong together (the values per task kind). */
  group?: string;
}

/** A scorer's metrics over a cell. */
export interface ExportScore {
  scorer: string;
  /** How a sample's epochs were reduced to one value before the metrics (`max` for best-of-n). */
  reducer?: string;
  metrics: ExportMetric[];
  /** Samples with a value, and without one. */
  scored?: number;
  unscored?: number;
}

/** Per-sample values after the epochs were reduced (best-of-n). */
export interface ExportReduction {
  scorer: string;
  reducer: string;
  samples: Array<{ id: string; value: number }>;
}

/** One task and one model under test: one log file. */
export interface ExportCell {
  /** The benchmark's task: `personalens`, `persona-bench-3.1`. */
  task: string;
  /** What sets the cell apart within its task (setting, form, baseline ...). */
  args: Record<string, string | number>;
  /** The model under test, as the pipeline names it (`openai:gpt-4o`). */
  model: string;
  /** The other models by role (the user agent, the judge). */
  roles: Record<string, string>;
  /** The model under test's sampling, as recorded. */
  generate?: { temperature?: number | null; max_tokens?: number | null };
  /** Where the samples come from. */
  dataset: { name: string; location?: string };
  /** Anything else worth keeping (the configuration's hash, the judge's settings). */
  metadata: Record<string, unknown>;
  /** Reads the cell's samples and metrics (one cell at a time is held in memory). */
  read(): Promise<CellContent>;
}

/** A cell's samples and its metrics. */
export interface CellContent {
  samples: ExportSample[];
  /** The metrics, as the warehouse's result views give them. */
  scores: ExportScore[];
  reductions?: ExportReduction[];
}

/** What a benchmark's export part reads from. */
export interface ExportSource {
  /** The warehouse, read-only; files under the workspace it was built from can be read too. */
  db: Database;
  /** Its tables and views. */
  relations: ReadonlySet<string>;
  /** The workspace the warehouse was built from, or null where it does not say. */
  workspace: string | null;
}

/** A benchmark's part of `plens export`: what its cells and samples are. */
export interface ExportPart {
  /** The relations its cells are read from: a warehouse without one of them has none of its cells. */
  requires: readonly string[];
  /** The cells in this warehouse, in a stable order. */
  cells(source: ExportSource): Promise<ExportCell[]>;
}

/** Usage with nothing counted. */
export const noUsage = (): Usage => ({ input_tokens: 0, output_tokens: 0, cost_usd: null });

/** Adds usage b into a (cost stays null only while neither side is priced). */
export function addUsage(a: Usage, b: Usage): Usage {
  return {
    input_tokens: a.input_tokens + b.input_tokens,
    output_tokens: a.output_tokens + b.output_tokens,
    cost_usd: a.cost_usd === null && b.cost_usd === null ? null : (a.cost_usd ?? 0) + (b.cost_usd ?? 0),
  };
}

/** Adds one sample's usage into a running total by key. */
export function addUsageInto(total: Record<string, Usage>, add: Record<string, Usage>): void {
  for (const [k, u] of Object.entries(add)) total[k] = addUsage(total[k] ?? noUsage(), u);
}
