import { createHash } from 'node:crypto';
import { addUsageInto, type CellContent, type ExportCell, type ExportMessage, type ExportSample, type ExportScore, type Usage } from './cells.js';

/**
 * A cell as an Inspect eval log (inspect_ai's `EvalLog`, log format version 2, the `.json` form):
 * the file `inspect view` lists and opens. The fields and their required members follow the log's
 * schema (inspect_ai/_view/inspect-openapi.json); test/export checks every log against it.
 */

/** The version of Inspect's log format written. */
export const INSPECT_LOG_VERSION = 2;

/** What a log says of where its numbers come from: the same for every cell of one export. */
export interface RunProvenance {
  plensVersion: string;
  /** The benchmark's id and title. */
  benchmark: string;
  benchmarkTitle: string;
  warehouse: string;
  workspace: string | null;
  /** When the warehouse was built. */
  builtAt: string | null;
  /** When the run began (its first run record), else when the warehouse was built. */
  created: string;
  startedAt: string | null;
  completedAt: string | null;
  /** The run records of the benchmark's runs in the warehouse (make and its stages). */
  runs: Array<Record<string, unknown>>;
}

/** `openai:gpt-4o?temperature=0` -> `openai/gpt-4o`: Inspect names a model provider/model. */
export function inspectModelName(spec: string): string {
  const bare = spec.replace(/\?.*$/, '');
  const i = bare.indexOf(':');
  return i < 0 ? bare : `${bare.slice(0, i)}/${bare.slice(i + 1)}`;
}

/** A model spec's parameters (`?temperature=0&max_tokens=800`), as Inspect's model_args. */
function modelArgs(spec: string): Record<string, string> {
  const q = spec.indexOf('?');
  return q < 0 ? {} : Object.fromEntries(new URLSearchParams(spec.slice(q + 1)));
}

/** A stable id of Inspect's shape (22 letters and digits) from what identifies the thing. */
export function stableId(...parts: unknown[]): string {
  const digest = createHash('sha256').update(JSON.stringify(parts)).digest();
  const alphabet = 'ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789';
  let out = '';
  for (let i = 0; out.length < 22; i++) out += alphabet[digest[i]! % alphabet.length];
  return out;
}

/** An ISO time as Inspect writes it: seconds and an offset (`2024-10-15T12:53:13+00:00`). */
export function inspectTime(iso: string): string {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  return `${d.toISOString().slice(0, 19)}+00:00`;
}

/** Inspect's `clean_filename_component`: a log file name's parts are separated by `_`. */
const clean = (s: string) => s.replace(/[_/:+]/g, '-').replace(/[^A-Za-z0-9.=-]/g, '-');

/** The log's file name, as Inspect names its own: `{created}_{task}_{task_id}.json`. */
export function inspectFileName(log: { eval: { created: string; task: string; task_id: string } }): string {
  return `${clean(log.eval.created)}_${clean(log.eval.task)}_${clean(log.eval.task_id)}.json`;
}

function modelUsage(u: Usage) {
  return {
    input_tokens: u.input_tokens,
    output_tokens: u.output_tokens,
    total_tokens: u.input_tokens + u.output_tokens,
    ...(u.cost_usd !== null ? { total_cost: u.cost_usd } : {}),
  };
}

/** Usage keyed by model spec -> keyed by Inspect's model name (two specs of one model add up). */
function byInspectModel(usage: Record<string, Usage>): Record<string, ReturnType<typeof modelUsage>> {
  const merged: Record<string, Usage> = {};
  for (const [spec, u] of Object.entries(usage)) addUsageInto(merged, { [inspectModelName(spec)]: u });
  return Object.fromEntries(Object.entries(merged).map(([m, u]) => [m, modelUsage(u)]));
}

function usageMap(usage: Record<string, Usage>) {
  return Object.fromEntries(Object.entries(usage).map(([k, u]) => [k, modelUsage(u)]));
}

/** A message; one a model wrote (the assistant's, a simulated user's) has the source `generate`. */
function message(m: ExportMessage) {
  const generated = m.role === 'assistant' || m.model !== undefined;
  return {
    role: m.role,
    content: m.content,
    ...(m.role === 'assistant' && m.model ? { model: inspectModelName(m.model) } : {}),
    ...(m.role !== 'system' ? { source: generated ? 'generate' : 'input' } : {}),
  };
}

function sample(s: ExportSample, model: string) {
  const output = s.error === undefined ? s.output : '';
  return {
    id: s.id,
    epoch: s.epoch,
    input: typeof s.input === 'string' ? s.input : s.input.map(message),
    target: s.target,
    ...(s.choices ? { choices: s.choices } : {}),
    messages: s.messages.map(message),
    output: {
      model: inspectModelName(model),
      choices:
        s.error === undefined
          ? [{ message: { role: 'assistant', content: output, source: 'generate', model: inspectModelName(model) }, stop_reason: 'unknown' }]
          : [],
      completion: output,
      ...(s.error !== undefined ? { error: s.error } : {}),
    },
    scores: Object.fromEntries(
      Object.entries(s.scores).map(([name, v]) => [
        name,
        {
          value: v.value,
          ...(v.answer !== undefined && v.answer !== null ? { answer: v.answer } : {}),
          ...(v.explanation !== undefined && v.explanation !== null ? { explanation: v.explanation } : {}),
          ...(v.metadata ? { metadata: v.metadata } : {}),
          history: [],
        },
      ]),
    ),
    metadata: s.metadata,
    store: {},
    events: [],
    model_usage: byInspectModel(s.usage.models),
    role_usage: usageMap(s.usage.roles),
    attachments: {},
    ...(s.error !== undefined ? { error: { message: s.error, traceback: '', traceback_ansi: '' } } : {}),
  };
}

/** A scorer's metrics keyed by name (a name two groups share gets its group as a prefix). */
function evalScore(s: ExportScore) {
  const metrics: Record<string, { name: string; value: number; params: Record<string, never>; group?: string }> = {};
  for (const m of s.metrics) {
    if (!Number.isFinite(m.value)) continue;
    const key = m.name in metrics && m.group ? `${m.group}_${m.name}` : m.name;
    metrics[key] = { name: m.name, value: m.value, params: {}, ...(m.group ? { group: m.group } : {}) };
  }
  return {
    name: s.scorer,
    scorer: s.scorer,
    ...(s.reducer ? { reducer: s.reducer } : {}),
    params: {},
    metrics,
    ...(s.scored !== undefined ? { scored_samples: s.scored } : {}),
    ...(s.unscored !== undefined ? { unscored_samples: s.unscored } : {}),
  };
}

/** One cell and its samples as an Inspect eval log (a plain object, ready for JSON). */
export function inspectLog(cell: ExportCell, content: CellContent, run: RunProvenance): Record<string, unknown> {
  const { samples } = content;
  const model = inspectModelName(cell.model);
  const identity = { task: cell.task, args: cell.args, model: cell.model, roles: cell.roles, metadata: cell.metadata };
  const runId = stableId('run', run.workspace ?? run.warehouse, run.created, run.benchmark);
  const taskId = stableId('task', identity);
  const modelUsageTotal: Record<string, Usage> = {};
  const roleUsageTotal: Record<string, Usage> = {};
  for (const s of samples) {
    addUsageInto(modelUsageTotal, s.usage.models);
    addUsageInto(roleUsageTotal, s.usage.roles);
  }
  const ids = [...new Set(samples.map((s) => s.id))];
  const epochs = Math.max(1, ...samples.map((s) => s.epoch));
  const completed = samples.filter((s) => s.error === undefined).length;
  const display = [cell.task, ...Object.values(cell.args)].join(' ');
  const generate = Object.fromEntries(Object.entries(cell.generate ?? {}).filter(([, v]) => v !== null && v !== undefined));
  return {
    version: INSPECT_LOG_VERSION,
    status: 'success',
    eval: {
      eval_id: stableId('eval', runId, taskId),
      run_id: runId,
      created: run.created,
      task: cell.task,
      task_id: taskId,
      task_version: 0,
      task_display_name: display,
      task_attribs: {},
      task_args: cell.args,
      task_args_passed: cell.args,
      dataset: {
        name: cell.dataset.name,
        ...(cell.dataset.location ? { location: cell.dataset.location } : {}),
        samples: ids.length,
        sample_ids: ids,
        shuffled: false,
      },
      model,
      model_generate_config: generate,
      model_args: modelArgs(cell.model),
      model_roles: Object.fromEntries(
        Object.entries(cell.roles).map(([role, spec]) => [role, { model: inspectModelName(spec), config: {}, args: modelArgs(spec) }]),
      ),
      config: epochs > 1 ? { epochs } : {},
      packages: { plens: run.plensVersion },
      tags: ['plens', run.benchmark],
      metadata: {
        plens: {
          benchmark: run.benchmark,
          benchmark_title: run.benchmarkTitle,
          model_spec: cell.model,
          roles: cell.roles,
          ...cell.metadata,
          warehouse: run.warehouse,
          workspace: run.workspace,
          warehouse_built_at: run.builtAt,
          runs: run.runs,
        },
      },
    },
    plan: {
      name: 'plan',
      steps: [{ solver: `plens/${run.benchmark}`, params: { ...cell.args, ...cell.roles }, params_passed: { ...cell.args, ...cell.roles } }],
      config: generate,
    },
    results: {
      total_samples: samples.length,
      completed_samples: completed,
      scores: content.scores.map(evalScore),
    },
    stats: {
      started_at: run.startedAt ?? '',
      completed_at: run.completedAt ?? '',
      model_usage: byInspectModel(modelUsageTotal),
      role_usage: usageMap(roleUsageTotal),
      connection_limit_history: [],
    },
    invalidated: false,
    tags: ['plens', run.benchmark],
    metadata: {},
    samples: samples.map((s) => sample(s, cell.model)),
    ...(content.reductions?.length
      ? {
          reductions: content.reductions.map((r) => ({
            scorer: r.scorer,
            reducer: r.reducer,
            samples: r.samples.map((x) => ({ sample_id: x.id, value: x.value, history: [] })),
          })),
        }
      : {}),
  };
}
