import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { LineCounter, parseDocument } from 'yaml';
import { PlensError, type InputLocation } from '../core/errors.js';
import { looksSecretName, registerSecret } from '../core/redact.js';
import { userPath } from '../core/paths.js';
import { parseModelSpec } from '../llm/model-spec.js';
import type { Pipeline } from '../platform/pipeline.js';
import { resolveLimits } from '../platform/run-settings.js';
import { benchmarkOf, benchmarks, tableCatalog } from '../registry/registry.js';
import type { LexicalProtocol } from '../stats/lexical.js';
import { DEFAULT_LAPS_SPEAKERS, speakerGroupsInOrder, type SpeakerGroup } from '../stats/speaker-groups.js';
import type { TableFormat } from '../tables/render.js';
import { assertValid, escapePointer, validateWith } from '../core/validator.js';

export type { Pipeline };

/** The fields every pipeline file has (after `${VAR}` substitution); a benchmark's sections sit beside them. */
interface PipelineFile {
  name: string;
  description?: string;
  workspace?: string;
  warehouse?: string;
  benchmark?: string;
  limits?: Record<string, unknown>;
  statistics?: { lexical?: LexicalProtocol[]; laps_speakers?: SpeakerGroup[] };
  tables?: { only?: string[]; formats?: Array<Exclude<TableFormat, 'table'>>; out_dir?: string };
  report?: boolean | { title?: string; out?: string };
  [section: string]: unknown;
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
    validatePipeline(raw as Record<string, unknown>, file);
  } catch (error) {
    if (error instanceof PlensError && error.code === 'E_INPUT_SCHEMA') {
      // An unexpected field is reported at the field itself (ajv points at the object holding it).
      const extra = /^unexpected field "(.*)"$/.exec(error.message);
      const pointer = (error.location.pointer ?? '') + (extra ? `/${escapePointer(extra[1]!)}` : '');
      throw new PlensError('E_INPUT_SCHEMA', error.message, {
        location: locate(pointer),
        hint: 'the format is in schemas/pipeline.schema.json and docs/pipelines.md',
      });
    }
    throw error;
  }
  return resolvePipeline(raw as PipelineFile, file, locate, overrides);
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

/**
 * Checks a pipeline against schemas/pipeline.schema.json, which describes the shared fields and the
 * built-in benchmarks' sections. A plug-in's sections are checked against the schemas its module
 * gives, and left out of the file schema's check (which knows no such field).
 */
function validatePipeline(raw: Record<string, unknown>, file: string): void {
  const own: Record<string, unknown> = { ...raw };
  const plugins: Array<[string, object, unknown]> = [];
  for (const b of benchmarks())
    for (const [section, schema] of Object.entries(b.sectionSchemas ?? {}))
      if (section in own) {
        plugins.push([section, schema, own[section]]);
        delete own[section];
      }
  assertValid<PipelineFile>('plens:pipeline', own, { file });
  for (const [section, schema, value] of plugins) validateWith(schema, value, { file, pointer: `/${escapePointer(section)}` });
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
  const module = benchmarkOfPipeline(p, locate);
  const benchmark = module.id;
  // The schema checks each section's shape; what it cannot say is which sections do not belong.
  for (const other of benchmarks()) {
    if (other === module) continue;
    for (const field of other.sections)
      if (p[field] !== undefined && !module.sections.includes(field))
        throw new PlensError(
          'E_INPUT_SCHEMA',
          module === benchmarks()[0]
            ? `${field}: only a pipeline with \`benchmark: ${other.id}\` takes a ${field} section`
            : `${field}: a ${other.title} section; a ${module.id} pipeline takes ${module.sections.map((s) => `a ${s}`).join(' or ')} section instead`,
          {
            location: locate(`/${field}`),
            hint: 'the format is in schemas/pipeline.schema.json and docs/pipelines.md',
          },
        );
  }
  // The schema file requires the built-in benchmarks' sections; a plug-in's are required here.
  for (const field of module.requiredSections)
    if (p[field] === undefined)
      throw new PlensError('E_INPUT_SCHEMA', `missing required field "${field}" (a ${module.id} pipeline needs it)`, {
        location: locate(''),
        hint: 'the format is in schemas/pipeline.schema.json and docs/pipelines.md',
      });
  const sections = module.resolve(p, {
    file,
    locate,
    checkSpec,
    userPath,
    error: (message, pointer, hint) => new PlensError('E_INPUT_SCHEMA', message, { location: locate(pointer), ...(hint ? { hint } : {}) }),
  });

  const own = module.tables.tables.map((t) => t.name);
  const known = new Set(tableCatalog().flatMap((g) => g.tables.map((t) => t.name)));
  p.tables?.only?.forEach((t, i) => {
    if (!known.has(t))
      throw new PlensError('E_INPUT_SCHEMA', `unknown table "${t}"; known: ${[...known].join(', ')}`, { location: locate(`/tables/only/${i}`) });
  });

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
    ...sections,
    limits: resolveLimits({ ...(overrides.limits ? { flags: overrides.limits } : {}), pipeline: { ...(p.limits ? { limits: p.limits } : {}), locate } }),
    lexical: p.statistics?.lexical ?? ['laps', 'full'],
    lapsSpeakers: speakerGroupsInOrder(p.statistics?.laps_speakers ?? DEFAULT_LAPS_SPEAKERS),
    tables: {
      // Each benchmark's own tables by default.
      only: p.tables?.only ?? own,
      formats: p.tables?.formats ?? ['md'],
      outDir: p.tables?.out_dir ? userPath(p.tables.out_dir) : resolve(workspace, 'tables'),
    },
    ...(report ? { report: { title: report.title ?? `plens: ${p.name}`, out: report.out ? userPath(report.out) : resolve(workspace, 'report.html') } } : {}),
  };
}

/** The pipeline's benchmark: the one it names (a registered one), or the default. */
function benchmarkOfPipeline(p: PipelineFile, locate: (pointer: string) => InputLocation) {
  try {
    return benchmarkOf(p.benchmark);
  } catch (error) {
    if (error instanceof PlensError)
      throw new PlensError('E_INPUT_SCHEMA', `benchmark: expected one of ${JSON.stringify(benchmarks().map((b) => b.id))} (got "${p.benchmark}")`, {
        location: locate('/benchmark'),
      });
    throw error;
  }
}
