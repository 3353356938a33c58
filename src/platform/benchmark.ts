import type { CommandModule } from 'yargs';
import type { Workspace } from '../core/workspace.js';
import type { SpendBreakdown, SpendBudget } from '../engine/spend-budget.js';
import type { ExportPart } from '../export/cells.js';
import type { MetadataPart } from '../report/metadata.js';
import type { ChartEntry } from '../report/report.js';
import type { TableGroup } from '../tables/tables.js';
import type { WarehouseSource } from '../warehouse/build.js';
import type { GlobalArgs } from './cli-options.js';
import type { MakeState } from './make-state.js';
import type { Pipeline, SectionContext } from './pipeline.js';
import type { StepResult } from './step-kit.js';

/**
 * A benchmark as a plug-in module: everything `plens make`, `status`, `warehouse`, `tables`,
 * `report` and the CLI need to know of it, declared in one object that the registry
 * (src/registry) lists. The generic layers work from these and name no benchmark.
 */
export interface Benchmark<P extends Pipeline = Pipeline> {
  /** What a pipeline's `benchmark:` names it by (one module may be the default when the field is absent). */
  id: string;
  /** Its name in prose: `PersonaLens`. */
  title: string;
  /** One line for `plens --help`: what it measures and its stages. */
  summary: string;
  /** The pipeline's sections this benchmark owns (`persona`, or `data`, `scenarios`, ...). */
  sections: readonly string[];
  /** Its folders in a workspace (`dataset`, `dialogues`, ...; `persona`): no other benchmark and no shared code uses them. */
  folders: readonly string[];
  /** The sections a pipeline of this benchmark must have. */
  requiredSections: readonly string[];
  /**
   * JSON Schemas of sections that schemas/pipeline.schema.json does not describe (a plug-in's
   * own). The built-in benchmarks' sections are in that file.
   */
  sectionSchemas?: Record<string, object>;
  /** The sections as written (schema-checked) -> the resolved fields it adds to the pipeline. */
  resolve(raw: Record<string, unknown>, ctx: SectionContext): Record<string, unknown>;
  /** Its steps, in the order that respects their dependencies, before the shared warehouse, tables and report. */
  steps: ReadonlyArray<StepDef<P>>;
  /**
   * The warehouse: the steps it waits for, the file step status checks before it, and what of this
   * benchmark's outputs a build loads (a build needs some benchmark's outputs).
   */
  warehouse: { needs(p: P): string[]; after(p: P): string | undefined; source: WarehouseSource };
  /** The folder of its warehouse SQL files (run with the shared ones, in file-name order). */
  sqlDir?: string;
  /** Its tables (warehouse views and how to present them). */
  tables: TableGroup;
  /** Its report charts. */
  charts: ChartEntry[];
  /** What the report shows of a pipeline of this benchmark, beside the run's metadata. */
  reportMetadata(p: P): Record<string, unknown>;
  /** Its tables and figures in the report's metadata (read from its views). */
  metadata?: MetadataPart;
  /**
   * What a sample is, for `plens export`: the run's cells (a task and a model under test) in the
   * warehouse, each with its samples (what was said, and its scores) and the metrics of its views.
   */
  export?: ExportPart;
  /** Every model spec of the pipeline (a spend cap needs a price for each). */
  models(p: P): string[];
  /** Its part of `plens status`: fields of the status JSON, and the lines that show them. */
  status?: StatusPart<P>;
  /**
   * Its CLI: the command that holds its stages (`plens personalens <stage>`), and the stage commands
   * also kept at the top level (aliases that scripts and docs use).
   */
  // biome-ignore lint/suspicious/noExplicitAny: each stage command declares its own arguments.
  cli: { command: CommandModule<GlobalArgs, GlobalArgs>; topLevel?: ReadonlyArray<CommandModule<GlobalArgs, any>> };
}

/** A file step's up-to-date rule (an LLM step needs none: its keys say what is done). */
export interface Fingerprint<P extends Pipeline = Pipeline> {
  /** The fingerprint of what the step reads, as recorded in the make state after a build. */
  inputs(p: P): string;
  /** The recorded build is current: recorded with these inputs, and its outputs are still the ones on disk. */
  current(p: P, state: MakeState, o: { inputs: string; tables: readonly string[] }): boolean;
  /** Some output exists (current or not): status tells out-of-date from pending by it. */
  exists(p: P, state: MakeState): boolean;
  /**
   * The file step this one is current only after, for `status` (which runs nothing); `make`
   * instead reruns a step whose dependencies ran in the same make.
   */
  after?: (p: P) => string | undefined;
}

export interface StepDef<P extends Pipeline = Pipeline> {
  name: string;
  /** What the step needs before it; a step a pipeline leaves out (no dialogues, no judge) is passed over. */
  needs(p: P): string[];
  /** Whether the pipeline includes the step. */
  available(p: P): boolean;
  fingerprint?: Fingerprint<P>;
  /** Runs the step (or, with ctx.dryRun, plans it: the stage's own dry run, nothing written but scratch). */
  run(ctx: StepContext<P>): Promise<StepResult>;
}

/** What a step is given by `plens make`. */
export interface StepContext<P extends Pipeline = Pipeline> {
  p: P;
  ws: Workspace;
  state: MakeState;
  step: string;
  dryRun: boolean;
  keepGoing: boolean;
  retryFailed: boolean;
  progress: boolean;
  signal: AbortSignal;
  /** One line as work finishes (the CLI prints them; --json collects them). */
  log: (line: string) => void;
  /** The run's one spend budget: every step draws from the same cap (absent without a cap, and in a dry run). */
  budget?: SpendBudget;
  /** A step it depends on ran (or would run) in this make: a file step reruns. */
  upstreamChanged: boolean;
  /** The tables the run renders (the tables step). */
  tables: readonly string[];
  /** The fingerprint of the step's inputs now. */
  inputs(): string;
  /** Whether the step's last build is current by its own fingerprint (not looking upstream). */
  isCurrent(inputs?: string): boolean;
  /** Records the step's build in the make state. */
  save(inputs: string, output?: string): Promise<void>;
  /** Writes the make state as it is (after a step recorded entries of its own in it). */
  writeState(): Promise<void>;
  /** A scratch folder for a dry run's plans, made on first use and removed when make ends. */
  scratch(): string;
  /** Values the steps of one make share (a plan one step makes and the next reads). */
  shared: Map<string, unknown>;
  /** This make's run id: a stage run it starts records it as its parent. */
  runId: string;
}

/** A benchmark's part of `plens status`. */
export interface StatusPart<P extends Pipeline = Pipeline> {
  /** Fields of the status JSON; calls' spend is added to `spend` by role and model. */
  collect(o: {
    p: P;
    ws: Workspace;
    state: MakeState;
    done: Record<string, boolean | undefined>;
    signal: AbortSignal;
    spend: SpendBreakdown;
  }): Promise<Record<string, unknown>>;
  /** The lines of the status text: `body` after the file steps of the benchmark, `footer` after the spend line. */
  format(s: Record<string, unknown> & { stages: Record<string, string> }): { body: string[]; footer?: string[] };
}
