import { PlensError, type InputLocation } from '../../core/errors.js';
import type { BatchOptions } from '../../engine/llm-stage.js';
import { parseEmbeddingsSpec } from '../../llm/embeddings-spec.js';
import type { Pipeline, SectionContext } from '../../platform/pipeline.js';
import { resolveBatch } from '../../platform/run-settings.js';
import type { ImpactParser, SignParser } from './parse.js';
import type { Fidelity, Setting as PersonaSetting, Task as PersonaTask } from './selection.js';

/** PERSONA-bench in a pipeline (`benchmark: persona-bench`, section `persona:`), every default filled in. */
export interface PersonaSettings {
  /** The input file (raw list of posts or {author: [posts]}), absolute. */
  source: string;
  fidelity: Fidelity;
  seed: number;
  /** A checkout of the original code whose prompt makers the select step runs (absolute), and the Python for them. */
  original?: string;
  python?: string;
  tasks: PersonaTask[];
  settings: PersonaSetting[];
  models: string[];
  decoding: 'best-of-n' | 'single-sample';
  /** 3.3 samples per prompt: n with best-of-n, 1 with single-sample. */
  samples: number;
  parsers: { '3.1': SignParser; '3.2': ImpactParser };
  /** SBERT's embeddings spec (an endpoint or `local:FOLDER`); SBERT is not scored without it. */
  embeddings?: string;
  /** Predictions through the provider's batch API (`batch: true` in the section), as `plens persona predict --batch`. */
  batch?: BatchOptions;
}

/**
 * PERSONA-bench defaults, the same as `plens persona select|predict`'s flags: the original's
 * fidelity, seed 0, the paper's grid of 3 tasks x 3 settings, 3.3 best-of-n over the paper's 10
 * samples, and the API evaluators' parsers (3.1/GPT.py strict, 3.2/GPT.py float then last number).
 */
export const PERSONA_DEFAULTS = {
  fidelity: 'original',
  seed: 0,
  tasks: ['3.1', '3.2', '3.3'],
  settings: ['P-Conv', 'P-NonConv', 'NP-Conv'],
  decoding: 'best-of-n',
  samples: 10,
  parsers: { '3.1': 'strict', '3.2': 'float-then-last-number' },
} as const satisfies Omit<PersonaSettings, 'source' | 'models' | 'embeddings'>;

/** A pipeline's `persona:` section as written (schema-checked). */
export interface PersonaSection {
  source: string;
  fidelity?: Fidelity;
  seed?: number;
  original?: string;
  python?: string;
  tasks?: PersonaTask[];
  settings?: PersonaSetting[];
  models: string[];
  decoding?: 'best-of-n' | 'single-sample';
  samples?: number;
  parsers?: { '3.1'?: SignParser; '3.2'?: ImpactParser };
  embeddings?: string;
  batch?: boolean;
  batch_fallback?: 'online' | 'none';
  poll_interval_s?: number;
  batch_size?: number;
}

/**
 * The PERSONA-bench settings in force: the section's values over PERSONA_DEFAULTS. What the schema
 * cannot say is checked here, as an input error at its line: `samples` with single-sample decoding,
 * an embeddings spec that is neither an OpenAI-compatible endpoint nor a local model folder
 * (whose files are checked when scores run, so `status` works where the folder is not).
 */
export function resolvePersonaSettings(
  section: PersonaSection,
  o: { source: string; original?: string; locate: (pointer: string) => InputLocation },
): PersonaSettings {
  const decoding = section.decoding ?? PERSONA_DEFAULTS.decoding;
  const bad = (pointer: string, message: string) =>
    new PlensError('E_INPUT_SCHEMA', message, {
      location: o.locate(pointer),
      hint: 'the format is in schemas/pipeline.schema.json and docs/personabench.md (Pipelines)',
    });
  if (decoding === 'single-sample' && section.samples !== undefined)
    throw bad('/persona/samples', 'persona.samples is the n of best-of-n; single-sample decoding draws one sample');
  if (section.original !== undefined && section.fidelity === 'fixed')
    throw bad('/persona/original', 'persona.original runs the original prompt makers, which have no fixed variant; leave out fidelity: fixed');
  let embeddings = section.embeddings;
  if (embeddings !== undefined) {
    try {
      const spec = parseEmbeddingsSpec(embeddings, 'persona.embeddings');
      // A relative folder is read from the working directory, as every path in a pipeline.
      if (spec.kind === 'local') embeddings = `local:${spec.folder}`;
    } catch (error) {
      throw error instanceof PlensError ? bad('/persona/embeddings', error.message) : error;
    }
  }
  const batch = resolveBatch({ pipeline: { persona: section as unknown as Record<string, unknown>, section: 'persona', locate: o.locate } });
  return {
    source: o.source,
    fidelity: section.fidelity ?? PERSONA_DEFAULTS.fidelity,
    seed: section.seed ?? PERSONA_DEFAULTS.seed,
    ...(o.original !== undefined ? { original: o.original } : {}),
    ...(section.python !== undefined ? { python: section.python } : {}),
    tasks: section.tasks ?? [...PERSONA_DEFAULTS.tasks],
    settings: section.settings ?? [...PERSONA_DEFAULTS.settings],
    models: section.models,
    decoding,
    samples: decoding === 'single-sample' ? 1 : (section.samples ?? PERSONA_DEFAULTS.samples),
    parsers: { ...PERSONA_DEFAULTS.parsers, ...section.parsers },
    ...(embeddings !== undefined ? { embeddings } : {}),
    ...(batch ? { batch } : {}),
  };
}

/** A PERSONA-bench pipeline (`benchmark: persona-bench`): what to select, predict and score. */
export interface PersonaBenchPipeline extends Pipeline {
  persona: PersonaSettings;
}

/** The `persona:` section resolved: paths absolute, defaults filled in, model specs checked at their lines. */
export function resolvePersonaBenchSections(raw: Record<string, unknown>, ctx: SectionContext): Record<string, unknown> {
  const section = raw['persona'] as PersonaSection;
  section.models.forEach((m, i) => ctx.checkSpec(m, `/persona/models/${i}`));
  return {
    persona: resolvePersonaSettings(section, {
      source: ctx.userPath(section.source),
      ...(section.original !== undefined ? { original: ctx.userPath(section.original) } : {}),
      locate: ctx.locate,
    }),
  };
}
