import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { LineCounter, parseDocument } from 'yaml';
import { PlensError, type InputLocation } from '../core/errors.js';
import { looksSecretName, registerSecret } from '../core/redact.js';
import { sampleDataDir, userPath } from '../core/paths.js';
import { parseModelSpec } from '../llm/model-spec.js';
import { DEFAULT_DIMENSIONS, type JudgeDimensionName } from '../benchmarks/personalens/judge-dimensions.js';
import type { Setting } from '../benchmarks/personalens/settings.js';
import type { ScenarioSelection } from '../benchmarks/personalens/scenarios/selection.js';
import type { BatchOptions } from '../engine/llm-stage.js';
import {
  resolveBatch,
  resolveLimits,
  resolvePersonaSettings,
  STAGE_DEFAULTS,
  type PersonaSection,
  type PersonaSettings,
  type RunLimits,
} from './run-settings.js';
import { scenarioSelectionOf } from './scenario-settings.js';
import type { LexicalProtocol } from '../stats/lexical.js';
import { DEFAULT_LAPS_SPEAKERS, speakerGroupsInOrder, type SpeakerGroup } from '../stats/speaker-groups.js';
import { PAPER_TABLES } from '../tables/catalog.js';
import type { TableFormat } from '../tables/render.js';
import { assertValid, escapePointer } from '../core/validator.js';

/** A pipeline file as written (after `${VAR}` substitution), checked against schemas/pipeline.schema.json. */
interface PipelineFile {
  name: string;
  description?: string;
  workspace?: string;
  warehouse?: string;
  benchmark?: Benchmark;
  persona?: PersonaSection;
  data?: { from: string; schema?: string };
  scenarios?: { kind: 'sd' | 'md' | 'all'; sample?: number | string; users?: string | number[]; domains?: string[]; random?: number; seed?: string | number };
  dialogues?: { user?: string; assistants: string[]; settings: Setting[]; replicates?: number; prompts?: string };
  judge?: {
    model: string;
    dimensions?: JudgeDimensionName[];
    reask?: boolean;
    batch?: boolean;
    batch_fallback?: string;
    poll_interval_s?: number;
    batch_size?: number;
  };
  limits?: Record<string, unknown>;
  statistics?: { lexical?: LexicalProtocol[]; laps_speakers?: SpeakerGroup[] };
  tables?: { only?: string[]; formats?: Array<Exclude<TableFormat, 'table'>>; out_dir?: string };
  report?: boolean | { title?: string; out?: string };
}

export type Benchmark = 'personalens' | 'persona-bench';

/** The sections only a PersonaLens pipeline has. */
const PERSONALENS_ONLY = ['data', 'scenarios', 'dialogues', 'judge', 'statistics'] as const;

/** A pipeline ready to run: paths absolute, environment resolved, defaults filled in. */
export interface Pipeline {
  file: string;
  name: string;
  description: string;
  workspace: string;
  warehouse: string;
  benchmark: Benchmark;
  /** PersonaLens: the upstream data and the scenario selection (absent for PERSONA-bench). */
  data?: { from: string; schema?: string };
  selection?: ScenarioSelection;
  /** PERSONA-bench: what to select, predict and score (absent for PersonaLens). */
  persona?: PersonaSettings;
  dialogues?: { user?: string; assistants: string[]; settings: Setting[]; replicates: number; prompts?: string };
  judge?: { model: string; dimensions: JudgeDimensionName[]; reask: boolean; batch?: BatchOptions };
  /** The run limits in force: flags over the file's `limits:` over the defaults (make/run-settings.ts). */
  limits: RunLimits;
  lexical: LexicalProtocol[];
  /** The speaker groups Table 10's laps protocol measures (statistics.laps_speakers; default both). */
  lapsSpeakers: SpeakerGroup[];
  tables: { only: string[]; formats: Array<Exclude<TableFormat, 'table'>>; outDir: string };
  report?: { title: string; out: string };
}

const PLACEHOLDER = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;

/** What the command line overrides in a pipeline: flag values by flag name (absent = the file's). */
export interface PipelineOverrides {
  limits?: Record<string, unknown>;
}

/** Reads, validates and resolves a pipeline file. Errors name the file, the line and the JSON pointer. */
export function loadPipeline(path: string, env: NodeJS.ProcessEnv = process.env, overrides: PipelineOverrides = {}): Pipeline {
  const file = userPath(path);
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    throw new PlensError('E_INPUT_NOT_FOUND', `no pipeline file ${file}`, { hint: 'see pipelines/*.yaml for examples' });
  }
  const lineCounter = new LineCounter();
  const doc = guardYaml(file, () => parseDocument(text, { lineCounter, prettyErrors: false }));
  if (doc.errors.length > 0) {
    const e = doc.errors[0]!;
    const pos = lineCounter.linePos(e.pos[0]);
    const tooDeep = /call stack/i.test(e.message);
    throw new PlensError('E_INPUT_JSON', tooDeep ? 'not a usable pipeline: the YAML is nested too deeply' : `not valid YAML: ${e.message.split('\n')[0]}`, {
      location: { file, line: pos.line, column: pos.col },
    });
  }
  const locate = (pointer: string): InputLocation => {
    const path = pointer
      .split('/')
      .slice(1)
      .map((k) => (/^\d+$/.test(k) ? Number(k) : k.replace(/~1/g, '/').replace(/~0/g, '~')));
    // The deepest node that exists: a missing field is reported where its parent is.
    for (let n = path.length; n >= 0; n--) {
      const node = doc.getIn(path.slice(0, n), true) as { range?: [number, number, number] } | undefined;
      if (node?.range) {
        const pos = lineCounter.linePos(node.range[0]);
        return { file, line: pos.line, column: pos.col, pointer };
      }
    }
    return { file, pointer };
  };
  const raw = substitute(
    guardYaml(file, () => doc.toJS({ maxAliasCount: 100 })),
    '',
    env,
    locate,
  );
  try {
    assertValid<PipelineFile>('plens:pipeline', raw, { file });
  } catch (error) {
    if (error instanceof PlensError && error.code === 'E_INPUT_SCHEMA') {
      // An unexpected field is reported at the field itself (ajv points at the object holding it).
      const extra = /^unexpected field "(.*)"$/.exec(error.message);
      const pointer = (error.location.pointer ?? '') + (extra ? `/${escapePointer(extra[1]!)}` : '');
      throw new PlensError('E_INPUT_SCHEMA', error.message, {
        location: locate(pointer),
        hint: 'the format is in schemas/pipeline.schema.json and README.md (Pipelines)',
      });
    }
    throw error;
  }
  return resolvePipeline(raw, file, locate, overrides);
}

/**
 * Runs a YAML step, turning what a hostile file can make the parser do (an alias bomb, nesting
 * deep enough to overflow the stack) into a typed error instead of a crash or a hang.
 */
function guardYaml<T>(file: string, step: () => T): T {
  try {
    return step();
  } catch (error) {
    if (error instanceof PlensError) throw error;
    const message = (error as Error)?.message ?? String(error);
    if (error instanceof RangeError || /call stack/i.test(message)) {
      throw new PlensError('E_INPUT_JSON', 'not a usable pipeline: the YAML is nested too deeply', { location: { file }, cause: error });
    }
    if (/alias/i.test(message)) {
      throw new PlensError('E_INPUT_JSON', 'not a usable pipeline: its aliases expand too much (an alias bomb?)', { location: { file }, cause: error });
    }
    throw new PlensError('E_INPUT_JSON', `not valid YAML: ${message.split('\n')[0]}`, { location: { file }, cause: error });
  }
}

/** Replaces `${VAR}` (and `${VAR:-default}`) in every string; a variable that is not set is an error. */
function substitute(value: unknown, pointer: string, env: NodeJS.ProcessEnv, locate: (p: string) => InputLocation): unknown {
  if (typeof value === 'string') {
    return value.replace(PLACEHOLDER, (_, name: string, fallback: string | undefined) => {
      if (/(^|[?&])key_env=$/.test(value.slice(0, value.indexOf(`\${${name}`)))) {
        // key_env names the variable that holds the key; substituting it would put the key in the spec.
        throw new PlensError('E_USAGE', `key_env=\${${name}} would put a key into the pipeline; write key_env=${name}`, { location: locate(pointer) });
      }
      const v = env[name];
      // A key put into a field this way must never be printed (a plan, an error): the redactor learns it.
      if (v !== undefined && looksSecretName(name)) registerSecret(v);
      if (v !== undefined && v !== '') return v;
      if (fallback !== undefined) return fallback;
      throw new PlensError('E_PREREQUISITE', `environment variable ${name} is not set (the pipeline uses \${${name}})`, {
        location: locate(pointer),
        hint: `export ${name}=... or write \${${name}:-default} in the pipeline`,
      });
    });
  }
  if (Array.isArray(value)) return value.map((v, i) => substitute(v, `${pointer}/${i}`, env, locate));
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, substitute(v, `${pointer}/${escapePointer(k)}`, env, locate)]));
  }
  return value;
}

function judgeOf(j: NonNullable<PipelineFile['judge']>, locate: (pointer: string) => InputLocation): NonNullable<Pipeline['judge']> {
  const batch = resolveBatch({ pipeline: { judge: j as unknown as Record<string, unknown>, locate } });
  return { model: j.model, dimensions: j.dimensions ?? DEFAULT_DIMENSIONS, reask: j.reask ?? STAGE_DEFAULTS.reask, ...(batch ? { batch } : {}) };
}

function resolvePipeline(p: PipelineFile, file: string, locate: (pointer: string) => InputLocation, overrides: PipelineOverrides): Pipeline {
  // A model spec is checked now, so a typo fails before any stage runs, at its line in the file.
  const checkSpec = (spec: string, pointer: string) => {
    try {
      parseModelSpec(spec, pointer);
    } catch (error) {
      if (error instanceof PlensError)
        throw new PlensError(error.code, error.message, { location: locate(pointer), ...(error.hint ? { hint: error.hint } : {}) });
      throw error;
    }
  };
  const benchmark = p.benchmark ?? 'personalens';
  if (benchmark === 'persona-bench') {
    // The schema requires the persona section; what it cannot say is which sections do not belong.
    for (const field of PERSONALENS_ONLY)
      if (p[field] !== undefined)
        throw new PlensError('E_INPUT_SCHEMA', `${field}: a PersonaLens section; a persona-bench pipeline takes a persona section instead`, {
          location: locate(`/${field}`),
          hint: 'the format is in schemas/pipeline.schema.json and README.md (PERSONA-bench pipelines)',
        });
    p.persona!.models.forEach((m, i) => checkSpec(m, `/persona/models/${i}`));
  } else if (p.persona !== undefined) {
    throw new PlensError('E_INPUT_SCHEMA', 'persona: only a pipeline with `benchmark: persona-bench` takes a persona section', {
      location: locate('/persona'),
    });
  }
  p.dialogues?.assistants.forEach((a, i) => checkSpec(a, `/dialogues/assistants/${i}`));
  if (p.dialogues?.user) checkSpec(p.dialogues.user, '/dialogues/user');
  if (p.judge) checkSpec(p.judge.model, '/judge/model');
  if (p.judge && !p.dialogues) throw new PlensError('E_INPUT_SCHEMA', 'a judge needs dialogues to judge', { location: locate('/judge') });

  const known = new Set(PAPER_TABLES.map((t) => t.name));
  p.tables?.only?.forEach((t, i) => {
    if (!known.has(t))
      throw new PlensError('E_INPUT_SCHEMA', `unknown table "${t}"; known: ${[...known].join(', ')}`, { location: locate(`/tables/only/${i}`) });
  });

  const selection = p.scenarios ? scenarioSelectionOf(p.scenarios, locate) : undefined;
  // Each benchmark's tables by default: the PERSONA-bench views, or the PersonaLens paper's.
  const defaultTables = PAPER_TABLES.map((t) => t.name).filter((t) => t.startsWith('persona_') === (benchmark === 'persona-bench'));

  const workspace = resolve(userPath(p.workspace ?? `out/${p.name}`));
  // The report is on unless the pipeline says `report: false`.
  const report = p.report === false ? undefined : p.report === true || p.report === undefined ? {} : p.report;
  return {
    file,
    name: p.name,
    description: p.description ?? '',
    workspace,
    warehouse: userPath(p.warehouse ?? `warehouse/${p.name}.duckdb`),
    benchmark,
    ...(p.data
      ? { data: { from: p.data.from === 'sample' ? sampleDataDir : userPath(p.data.from), ...(p.data.schema ? { schema: userPath(p.data.schema) } : {}) } }
      : {}),
    ...(selection ? { selection } : {}),
    ...(p.persona
      ? {
          persona: resolvePersonaSettings(p.persona, {
            source: userPath(p.persona.source),
            ...(p.persona.original !== undefined ? { original: userPath(p.persona.original) } : {}),
            locate,
          }),
        }
      : {}),
    ...(p.dialogues
      ? {
          dialogues: {
            ...(p.dialogues.user ? { user: p.dialogues.user } : {}),
            assistants: p.dialogues.assistants,
            settings: p.dialogues.settings,
            replicates: p.dialogues.replicates ?? STAGE_DEFAULTS.replicates,
            ...(p.dialogues.prompts ? { prompts: userPath(p.dialogues.prompts) } : {}),
          },
        }
      : {}),
    ...(p.judge ? { judge: judgeOf(p.judge, locate) } : {}),
    limits: resolveLimits({ ...(overrides.limits ? { flags: overrides.limits } : {}), pipeline: { ...(p.limits ? { limits: p.limits } : {}), locate } }),
    lexical: p.statistics?.lexical ?? ['laps', 'full'],
    lapsSpeakers: speakerGroupsInOrder(p.statistics?.laps_speakers ?? DEFAULT_LAPS_SPEAKERS),
    tables: {
      only: p.tables?.only ?? defaultTables,
      formats: p.tables?.formats ?? ['md'],
      outDir: p.tables?.out_dir ? userPath(p.tables.out_dir) : resolve(workspace, 'tables'),
    },
    ...(report ? { report: { title: report.title ?? `plens: ${p.name}`, out: report.out ? userPath(report.out) : resolve(workspace, 'report.html') } } : {}),
  };
}
