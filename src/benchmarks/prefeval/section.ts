import type { Pipeline, SectionContext } from '../../platform/pipeline.js';
import { BASELINES, type Baseline } from './assembly.js';
import { FORMS, TOPICS, type Form } from './data.js';

/** PrefEval in a pipeline (`benchmark: prefeval`, section `prefeval:`), every default filled in. */
export interface PrefEvalSettings {
  /** A PrefEval checkout (or its benchmark_dataset folder), absolute. */
  data: string;
  topics: string[];
  forms: Form[];
  /** The first N preferences of each topic; all when absent. */
  limit?: number;
  baselines: Baseline[];
  interTurns: number[];
  models: string[];
  judge: string;
  /** `plens` (our wording) or `original` (read from `data`, which must then be a checkout). */
  prompts: 'plens' | 'original';
  /** Model spec -> its row in the checkout README's leaderboard, shown beside plens's figures. */
  published?: Record<string, string>;
}

export interface PrefEvalPipeline extends Pipeline {
  prefeval: PrefEvalSettings;
}

/** The section's schema: it is this module's, not schemas/pipeline.schema.json's. */
export const PREFEVAL_SECTION_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['data', 'models', 'judge'],
  properties: {
    data: { type: 'string', minLength: 1, description: 'a PrefEval checkout (github.com/amazon-science/PrefEval) or its benchmark_dataset folder' },
    topics: { type: 'array', minItems: 1, uniqueItems: true, items: { enum: [...TOPICS] }, description: 'default: all 20' },
    forms: {
      type: 'array',
      minItems: 1,
      uniqueItems: true,
      items: { enum: [...FORMS] },
      description: 'explicit (stated), choice (implicit, choice-based), persona (implicit, persona-driven); default [explicit]',
    },
    limit: { type: 'integer', minimum: 1, description: 'the first N preferences of each topic (default all)' },
    baselines: { type: 'array', minItems: 1, uniqueItems: true, items: { enum: [...BASELINES] }, description: 'default [zero-shot]' },
    inter_turns: {
      type: 'array',
      minItems: 1,
      uniqueItems: true,
      items: { type: 'integer', minimum: 0, maximum: 316 },
      description: 'filler turns between the preference and the question (default [10]); the filler holds 316',
    },
    models: { type: 'array', minItems: 1, items: { type: 'string', minLength: 1 }, description: 'the assistants under test (model specs)' },
    judge: { type: 'string', minLength: 1, description: "the judge's model spec (the original's: bedrock:claude-3-sonnet-v1)" },
    prompts: { enum: ['plens', 'original'], description: "plens's wording (default) or the original's, read from the data checkout" },
    published: {
      type: 'object',
      additionalProperties: { type: 'string', minLength: 1 },
      description: "model spec -> its row in the checkout README's leaderboard (e.g. Claude-3-Sonnet): the published accuracy beside plens's",
    },
  },
} as const;

interface Written {
  data: string;
  topics?: string[];
  forms?: Form[];
  limit?: number;
  baselines?: Baseline[];
  inter_turns?: number[];
  models: string[];
  judge: string;
  prompts?: 'plens' | 'original';
  published?: Record<string, string>;
}

export function resolvePrefEvalSection(raw: Record<string, unknown>, ctx: SectionContext): Record<string, unknown> {
  const s = raw['prefeval'] as Written;
  s.models.forEach((m, i) => ctx.checkSpec(m, `/prefeval/models/${i}`));
  ctx.checkSpec(s.judge, '/prefeval/judge');
  const settings: PrefEvalSettings = {
    data: ctx.userPath(s.data),
    topics: s.topics ?? [...TOPICS],
    forms: s.forms ?? ['explicit'],
    ...(s.limit !== undefined ? { limit: s.limit } : {}),
    baselines: s.baselines ?? ['zero-shot'],
    interTurns: s.inter_turns ?? [10],
    models: s.models,
    judge: s.judge,
    prompts: s.prompts ?? 'plens',
    ...(s.published ? { published: s.published } : {}),
  };
  for (const model of Object.keys(s.published ?? {}))
    if (!s.models.includes(model))
      throw ctx.error(`prefeval.published: ${model} is not one of prefeval.models`, `/prefeval/published`, 'name each model as prefeval.models spells it');
  return { prefeval: settings };
}
