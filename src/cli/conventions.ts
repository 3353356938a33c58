/**
 * What every command gets the same way, applied once for all of them (main.ts registers these as
 * yargs middleware): list options take commas and spaces alike, and the workspace and warehouse
 * come from the current project when no flag names them (src/platform/current-project.ts).
 */
import type { Argv } from 'yargs';
import { usageError } from '../core/errors.js';
import { paint } from '../platform/cli-options.js';
import { configFile, describeProject, resolveProject, shownPath } from '../platform/current-project.js';

/**
 * Commands that take their workspace and warehouse from their pipeline (make, status) or have
 * their own defaults (demo): the project is theirs to resolve.
 */
export const OWN_PROJECT = new Set(['make', 'status', 'demo']);

/** A `name=value` item (a notebook parameter, a parser choice): its name. */
const KEY_VALUE = /^[\w.+-]+=/;

/**
 * One list from what was typed: `--x a,b c` is `--x a b c`. In a list of name=value items, a comma
 * splits only before another name=, so a value may hold commas (`-P title=a,b` is one item).
 */
export function splitList(values: readonly unknown[]): unknown[] {
  const out: unknown[] = [];
  for (const value of values) {
    if (typeof value !== 'string' || !value.includes(',')) {
      out.push(value);
      continue;
    }
    const parts = value.split(',');
    if (KEY_VALUE.test(parts[0]!)) {
      const items: string[] = [];
      for (const part of parts) {
        if (items.length > 0 && !KEY_VALUE.test(part)) items[items.length - 1] += `,${part}`;
        else items.push(part);
      }
      out.push(...items.map((s) => s.trim()).filter(Boolean));
    } else {
      out.push(...parts.map((s) => s.trim()).filter(Boolean));
    }
  }
  return out;
}

type Options = { array: string[]; alias: Record<string, string[]>; number: string[] };

/**
 * Before validation (so `choices` see the items): every option the command declares as a list is
 * split at commas, under its name and each alias.
 */
export function listParsing(argv: Record<string, unknown>, y: Argv): void {
  const o = (y as unknown as { getOptions(): Options }).getOptions();
  for (const name of o.array) {
    const value = argv[name];
    if (!Array.isArray(value) || !value.some((v) => typeof v === 'string' && v.includes(','))) continue;
    const numeric = o.number.includes(name);
    const split = splitList(value).map((v) => (numeric && typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v)) ? Number(v) : v));
    for (const key of [name, ...(o.alias[name] ?? [])]) if (key in argv) argv[key] = split;
  }
}

/**
 * After validation: fills `workspace` and `db` from the current project where no flag gave them,
 * and says on stderr which project a command uses when it is not the flags' or the defaults'.
 */
export async function projectMiddleware(argv: Record<string, unknown>): Promise<void> {
  const command = String((argv['_'] as unknown[] | undefined)?.[0] ?? '');
  const workspaceGiven = typeof argv['workspace'] === 'string' && argv['workspace'] !== '';
  argv['workspaceGiven'] = workspaceGiven;
  if (OWN_PROJECT.has(command)) return;
  const pipeline = typeof argv['pipeline'] === 'string' ? argv['pipeline'] : undefined;
  if (pipeline !== undefined && KEY_VALUE.test(pipeline) && !/\.ya?ml$/i.test(pipeline))
    throw usageError(
      `-p is --pipeline, a pipeline file (got "${pipeline}")`,
      'a notebook parameter is -P/--param name=value (-p means --pipeline in every command)',
    );
  const cwd = process.cwd();
  // The pipeline loader (ajv, the benchmarks' sections) only when a pipeline is to be read.
  const needsLoader = pipeline !== undefined || configFile(cwd) !== undefined;
  const loadPipeline = needsLoader ? (await import('../make/pipeline.js')).loadPipeline : undefined;
  const project = resolveProject(
    {
      workspace: typeof argv['workspace'] === 'string' ? argv['workspace'] : undefined,
      db: typeof argv['db'] === 'string' ? argv['db'] : undefined,
      pipeline,
    },
    {
      cwd,
      env: process.env,
      loadPipeline: (file) => {
        if (!loadPipeline) throw new Error('plens: no pipeline loader');
        return loadPipeline(file);
      },
    },
  );
  argv['workspace'] = argv['w'] = project.workspace;
  argv['db'] = project.warehouse;
  argv['project'] = project;
  if ((project.source === 'last-make' || project.source === 'config') && !argv['json'] && !argv['quiet'])
    process.stderr.write(
      `${paint(process.stderr, 'dim', `plens: project of ${describeProject(project, cwd)}: workspace ${shownPath(project.workspace, cwd)}, warehouse ${shownPath(project.warehouse, cwd)}`)}\n`,
    );
}
