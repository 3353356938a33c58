import { PlensError } from '../../core/errors.js';
import { parseEmbeddingsSpec } from '../../llm/embeddings-spec.js';
import type { Pipeline, SectionContext } from '../../platform/pipeline.js';
import { BASELINES, type Baseline } from './assembly.js';
import { FORMS, TOPICS, type Form } from './data.js';

/** PrefEval's two tasks: generation (an answer the judge checks) and classification (a choice among four options). */
export const TASKS = ['generation', 'classification'] as const;
export type Task = (typeof TASKS)[number];

/** PrefEval in a pipeline (`benchmark: prefeval`, section `prefeval:`), every default filled in. */
export interface PrefEvalSettings {
  tasks: Task[];
  /** A PrefEval checkout (or its benchmark_dataset folder), absolute. */
  data: string;
  topics: string[];
  forms: Form[];
  /** The first N preferences of each topic; all when absent. */
  limit?: number;
  baselines: Baseline[];
  interTurns: number[];
  models: string[];
  /** The generation task's judge (none when only classification runs). */
  judge: string | null;
  /** RAG's similarities: `original` (the checkout's precomputed retrievals) or an embeddings spec; set when baselines hold rag. */
  retrieval?: string;
  /** `plens` (our wording) or `original` (read from `data`, which must then be a checkout). */
  prompts: 'plens' | 'original';
  /** `chat` (the Claude path's requests to every model) or `original` (each model its family's requests in the original: stages.ts modelRequests). */
  requests: 'chat' | 'original';
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
  required: ['data', 'models'],
  properties: {
    tasks: {
      type: 'array',
      minItems: 1,
      uniqueItems: true,
      items: { enum: [...TASKS] },
      description: 'generation (answers the judge checks) and/or classification (a choice among four options); default [generation]',
    },
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
    judge: { type: 'string', minLength: 1, description: "the generation task's judge, a model spec (the original's: bedrock:claude-3-sonnet-v1)" },
    retrieval: {
      type: 'string',
      minLength: 1,
      description:
        "RAG's similarities: original (the checkout's precomputed SimCSE retrievals, benchmark_dataset/rag_retrieval) or an embeddings spec (local:FOLDER or openai:MODEL?base_url=...)",
    },
    prompts: { enum: ['plens', 'original'], description: "plens's wording (default) or the original's, read from the data checkout" },
    requests: {
      enum: ['chat', 'original'],
      description:
        "chat (default): every model gets the original's Claude requests as chat messages; original: each model gets what the original sends its family: Bedrock Llama and Mistral the prompt text it lays out by hand (InvokeModel), models on the openai provider no system prompt (but RAG's; Gemini keeps it), temperature or token limit",
    },
    published: {
      type: 'object',
      additionalProperties: { type: 'string', minLength: 1 },
      description: "model spec -> its row in the checkout README's leaderboard (e.g. Claude-3-Sonnet): the published accuracy beside plens's",
    },
  },
} as const;

interface Written {
  tasks?: Task[];
  data: string;
  topics?: string[];
  forms?: Form[];
  limit?: number;
  baselines?: Baseline[];
  inter_turns?: number[];
  models: string[];
  judge?: string;
  retrieval?: string;
  prompts?: 'plens' | 'original';
  requests?: 'chat' | 'original';
  published?: Record<string, string>;
}

export function resolvePrefEvalSection(raw: Record<string, unknown>, ctx: SectionContext): Record<string, unknown> {
  const s = raw['prefeval'] as Written;
  s.models.forEach((m, i) => ctx.checkSpec(m, `/prefeval/models/${i}`));
  const tasks = s.tasks ?? ['generation'];
  if (s.judge !== undefined) ctx.checkSpec(s.judge, '/prefeval/judge');
  else if (tasks.includes('generation'))
    throw ctx.error(
      'prefeval.judge is required for the generation task',
      '/prefeval',
      'add judge: <model spec> (the original uses bedrock:claude-3-sonnet-v1), or run tasks: [classification] only',
    );
  const baselines = s.baselines ?? ['zero-shot'];
  const interTurns = s.inter_turns ?? [10];
  const forms = s.forms ?? ['explicit'];
  let retrieval = s.retrieval;
  if (baselines.includes('rag')) {
    if (retrieval === undefined)
      throw ctx.error(
        'prefeval.baselines has rag but no prefeval.retrieval',
        '/prefeval/baselines',
        "add retrieval: original (the checkout's precomputed retrievals, benchmark_dataset/rag_retrieval) or an embeddings spec such as retrieval: local:models/all-MiniLM-L6-v2",
      );
    if (forms.includes('explicit') && interTurns.some((t) => t < 2))
      throw ctx.error(
        `prefeval.inter_turns ${interTurns.filter((t) => t < 2).join(', ')}: RAG retrieves 5 exchanges, and an explicit preference with fewer than 2 filler turns has only ${2}-4`,
        '/prefeval/inter_turns',
        'run rag at 2 or more filler turns (the original asserts 5 exchanges)',
      );
  }
  if (retrieval !== undefined && retrieval !== 'original') {
    try {
      const spec = parseEmbeddingsSpec(retrieval, 'prefeval.retrieval');
      if (spec.kind === 'local') retrieval = `local:${ctx.userPath(spec.folder)}`;
    } catch (error) {
      throw error instanceof PlensError ? ctx.error(error.message, '/prefeval/retrieval', 'original, local:FOLDER or openai:MODEL?base_url=URL') : error;
    }
  }
  const settings: PrefEvalSettings = {
    tasks,
    data: ctx.userPath(s.data),
    topics: s.topics ?? [...TOPICS],
    forms,
    ...(s.limit !== undefined ? { limit: s.limit } : {}),
    baselines,
    interTurns,
    models: s.models,
    judge: s.judge ?? null,
    ...(retrieval !== undefined ? { retrieval } : {}),
    prompts: s.prompts ?? 'plens',
    requests: s.requests ?? 'chat',
    ...(s.published ? { published: s.published } : {}),
  };
  for (const model of Object.keys(s.published ?? {}))
    if (!s.models.includes(model))
      throw ctx.error(`prefeval.published: ${model} is not one of prefeval.models`, `/prefeval/published`, 'name each model as prefeval.models spells it');
  return { prefeval: settings };
}
