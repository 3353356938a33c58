/**
 * The `build:` section of a PersonaLens pipeline: where the users come from, the domain schema,
 * the models per stage, the few-shot examples, the prompts, how many tasks, and where the built
 * benchmark is written. With it, a pipeline builds its benchmark before importing it, and `data:`
 * may be left out (it defaults to the build's output).
 */
import { existsSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { sampleDataDir } from '../../../core/paths.js';
import type { BatchOptions } from '../../../engine/llm-stage.js';
import type { SectionContext } from '../../../platform/pipeline.js';
import { resolveBatch } from '../../../platform/run-settings.js';
import { BUILD_LLM_STAGES, type BuildLlmStage } from './types.js';

/** The stage names as a pipeline spells them under build.models. */
export const MODEL_KEYS: Record<BuildLlmStage, string> = {
  masks: 'masks',
  preferences: 'preferences',
  interactions: 'interactions',
  'sd-tasks': 'sd_tasks',
  'md-tasks': 'md_tasks',
  situations: 'situations',
  consistency: 'consistency',
};

/** The build, every default filled in and every path absolute. */
export interface BuildSettings {
  /** The demographic source: a folder in the released layout, or a .csv / .jsonl file. */
  demographics: { from: string; users?: number; seed: number };
  /** The domain schema (res/schema.json's format). */
  schema: string;
  /** The model spec of each LLM stage. */
  models: Record<BuildLlmStage, string>;
  /** SD tasks per domain (`default` for a domain not named), and MD tasks. */
  sdTasks: { default: number } & Record<string, number>;
  mdTasks: number;
  /** A folder in the released layout the few-shot examples are drawn from (none: the slots are left out). */
  examples: string | null;
  /** A folder of the user's templates that replace plens's (pipelines/prompts/personalens-build). */
  prompts: string | null;
  /** A released-layout benchmark the built one is compared with in the validation tables (none: no comparison). */
  compareWith: string | null;
  /** Where the built benchmark is written (its data/ and res/ folders; default <workspace>/built). */
  out: string;
  /** The LLM stages through the provider's batch API (build.batch: true). */
  batch?: BatchOptions;
}

export const BUILD_DEFAULTS = { seed: 0, sdTasks: 4, mdTasks: 25 } as const;

const model = { type: 'string', minLength: 1 };

/** The section's schema: the module's, not schemas/pipeline.schema.json's. */
export const BUILD_SECTION_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['demographics', 'models'],
  properties: {
    demographics: {
      type: 'object',
      additionalProperties: false,
      required: ['from'],
      properties: {
        from: {
          type: 'string',
          minLength: 1,
          description: 'sample (the bundled users), a folder in the released layout, or a .csv / .jsonl file with PRISM-style fields',
        },
        users: { type: 'integer', minimum: 1, description: 'draw this many users (default: all)' },
        seed: { type: 'integer', minimum: 0, description: 'the draw (default 0)' },
      },
    },
    schema: { type: 'string', minLength: 1, description: "the domain schema (default: the source folder's res/schema.json)" },
    models: {
      type: 'object',
      additionalProperties: false,
      properties: { default: model, ...Object.fromEntries(Object.values(MODEL_KEYS).map((k) => [k, model])) },
      description: 'a model spec per stage; default: the one for stages not named',
    },
    sd_tasks: {
      oneOf: [
        { type: 'integer', minimum: 1, maximum: 20 },
        { type: 'object', additionalProperties: { type: 'integer', minimum: 1, maximum: 20 }, description: 'domain -> n; default for the others' },
      ],
      description: 'SD tasks per domain (default 4; the release has 4 or 5), or a map domain -> n with a default',
    },
    md_tasks: { type: 'integer', minimum: 1, maximum: 100, description: 'MD tasks (default 25, as the release)' },
    examples: {
      type: ['string', 'null'],
      description: 'a folder in the released layout to draw the few-shot examples from (default: the source folder; null: none)',
    },
    prompts: { type: 'string', minLength: 1, description: "a folder of templates replacing plens's (see pipelines/prompts/personalens-build)" },
    batch: {
      type: 'boolean',
      description: "run the LLM stages through the provider's batch API (about half price, answers within 24 h); see docs/batch.md",
    },
    batch_fallback: { enum: ['online', 'none'], description: 'requests a batch did not answer: called online (default) or recorded as failures' },
    poll_interval_s: { type: 'number', exclusiveMinimum: 0, description: 'seconds between batch status checks (default 60)' },
    batch_size: { type: 'integer', minimum: 1, maximum: 50000, description: 'requests per batch (default 50000)' },
    compare_with: {
      type: ['string', 'null'],
      description: 'a benchmark in the released layout to compare the built one with (default: the source folder; null: none)',
    },
    out: { type: 'string', minLength: 1, description: 'where the built benchmark is written (default <workspace>/built)' },
  },
} as const;

interface Written {
  demographics: { from: string; users?: number; seed?: number };
  schema?: string;
  models: Partial<Record<'default' | (typeof MODEL_KEYS)[BuildLlmStage], string>>;
  sd_tasks?: number | Record<string, number>;
  md_tasks?: number;
  examples?: string | null;
  prompts?: string;
  compare_with?: string | null;
  out?: string;
  batch?: boolean;
}

/** The released layout's schema next to a data folder: <from>/res/schema.json or <from>/../res/schema.json. */
function schemaBeside(folder: string): string {
  const candidates = [join(folder, 'res', 'schema.json'), join(dirname(folder), 'res', 'schema.json')];
  return candidates.find((f) => existsSync(f)) ?? candidates[1]!;
}

export function resolveBuildSection(raw: unknown, workspace: string, ctx: SectionContext): BuildSettings {
  const b = raw as Written;
  const from = b.demographics.from === 'sample' ? sampleDataDir : ctx.userPath(b.demographics.from);
  // A source that is not there yet is taken for a folder unless it is named like a file (its absence is reported when the build reads it).
  const folder = (existsSync(from) ? statSync(from).isDirectory() : !/\.(csv|jsonl)$/i.test(from)) ? from : null;
  const models = {} as Record<BuildLlmStage, string>;
  for (const stage of BUILD_LLM_STAGES) {
    const spec = b.models[MODEL_KEYS[stage]] ?? b.models.default;
    if (spec === undefined)
      throw ctx.error(`build.models names no model for ${MODEL_KEYS[stage]}`, '/build/models', 'give build.models.default, or a model for every stage');
    ctx.checkSpec(spec, `/build/models/${b.models[MODEL_KEYS[stage]] !== undefined ? MODEL_KEYS[stage] : 'default'}`);
    models[stage] = spec;
  }
  const schema = b.schema !== undefined ? ctx.userPath(b.schema) : folder ? schemaBeside(folder) : undefined;
  if (schema === undefined)
    throw ctx.error(
      'build.schema is needed: the demographic source is not a folder with a res/schema.json beside it',
      '/build',
      "give build.schema: a domain schema in the format of the release's res/schema.json",
    );
  const batch = resolveBatch({ pipeline: { build: raw as Record<string, unknown>, locate: ctx.locate } });
  const examples = b.examples === null ? null : b.examples !== undefined ? (b.examples === 'sample' ? sampleDataDir : ctx.userPath(b.examples)) : folder;
  return {
    demographics: { from, ...(b.demographics.users !== undefined ? { users: b.demographics.users } : {}), seed: b.demographics.seed ?? BUILD_DEFAULTS.seed },
    schema,
    models,
    sdTasks:
      typeof b.sd_tasks === 'number' || b.sd_tasks === undefined
        ? { default: b.sd_tasks ?? BUILD_DEFAULTS.sdTasks }
        : { default: BUILD_DEFAULTS.sdTasks, ...b.sd_tasks },
    mdTasks: b.md_tasks ?? BUILD_DEFAULTS.mdTasks,
    examples,
    prompts: b.prompts !== undefined ? ctx.userPath(b.prompts) : null,
    compareWith:
      b.compare_with === null ? null : b.compare_with !== undefined ? (b.compare_with === 'sample' ? sampleDataDir : ctx.userPath(b.compare_with)) : folder,
    out: b.out !== undefined ? ctx.userPath(b.out) : join(workspace, 'built'),
    ...(batch ? { batch } : {}),
  };
}
