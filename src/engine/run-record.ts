import { createHash, randomBytes } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { readFile, readdir, rm, stat } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { version as duckdbLibraryVersion } from '@duckdb/node-api';
import { writeFileAtomic } from '../core/atomic.js';
import { packageRoot } from '../core/paths.js';
import { redact, redactDeep } from '../core/redact.js';
import { plensVersion } from '../core/version.js';
import type { ModelSpec } from '../llm/model-spec.js';
import { emptySpend, type SpendBreakdown } from './spend-budget.js';

/**
 * A run record: what produced a number. Every real run of an LLM stage (and every `plens make`
 * run) writes `<workspace>/runs/<run_id>.json`: once when it starts (status running) and once when
 * it ends. Every call event the run made carries the same run_id, so a result row of the warehouse
 * joins through its calls to the record (the `runs` table, warehouse/05_runs.sql). A record holds
 * no key: every string in it passes through the redactor before it is written.
 */

/** Bumped whenever a field of RunRecord changes meaning or is removed (adding one does not). */
export const RUN_RECORD_VERSION = 1;

export type RunKind = 'stage' | 'make';

/**
 * How a run ended. `failed`: it stopped on an error (`error` says which); units of work that ended
 * failed in a run that finished are counted in `counts.failed`, not here. `interrupted`: stopped
 * by a signal (Ctrl-C); `spend-capped`: the spend cap left planned work undone.
 */
export type RunStatus = 'running' | 'ok' | 'failed' | 'interrupted' | 'spend-capped';

/** What the run was asked to do. */
export interface RunSpec {
  benchmark?: string | null;
  /** Each model with its role (user, assistant, judge, predictor) and its spec string with parameters. */
  models: Array<{ role: string; spec: string }>;
  /** The prompts it read: the first folder (or file) and a hash of every file it may read. */
  prompts: { dir: string | null; sha256: string | null } | null;
  /** The pipeline file of a make run. */
  pipeline: { name: string; file: string; sha256: string } | null;
  /** The fingerprint of the workspace's dataset import (dataset/manifest.json), when it has one. */
  dataset_fingerprint: string | null;
  /** Concurrency, retries, cache mode, spend cap, ... */
  limits: Record<string, unknown>;
  /** The stage's own settings (settings, dimensions, samples, ...). */
  settings: Record<string, unknown>;
}

/** The software and machine that ran it. */
export interface RunProvenance {
  plens_version: string;
  /** The commit of the plens checkout that ran, when plens runs from a git checkout; else null. */
  git_revision: string | null;
  node_version: string;
  duckdb_version: string | null;
  host: string;
  platform: string;
}

export interface RunOutcome {
  status: RunStatus;
  started_at: string;
  ended_at: string | null;
  elapsed_ms: number | null;
  /** planned, ok, failed, already_done, calls, ...; `failure:<kind>` per kind of failure. */
  counts: Record<string, number>;
  spend: SpendBreakdown;
  error: string | null;
}

export interface RunRecord {
  record_version: number;
  run_id: string;
  kind: RunKind;
  /** The stage (dialogues, judge, persona-predict) or the pipeline's name. */
  name: string;
  /** The run this one is part of (a make run's id for the stages it ran), or null. */
  parent_run_id: string | null;
  spec: RunSpec;
  provenance: RunProvenance;
  outcome: RunOutcome;
}

export interface RunInit {
  run_id: string;
  kind: RunKind;
  name: string;
  parent_run_id?: string | null;
  spec: RunSpec;
}

export interface RunFinish {
  status: Exclude<RunStatus, 'running'>;
  counts: Record<string, number>;
  spend?: SpendBreakdown;
  error?: string | null;
}

/** The folder of a workspace's run records. */
export const runsDir = (workspaceRoot: string): string => join(workspaceRoot, 'runs');

/**
 * A new run id: the start time (sortable, safe in a file name) and a random part, so two runs
 * started in the same millisecond (shards, cells of one make run) never share one.
 */
export function newRunId(now: Date = new Date()): string {
  return `${now.toISOString().replace(/[:.]/g, '-')}-${randomBytes(4).toString('hex')}`;
}

const SAFE_RUN_ID = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

/** Writes a run's record when it starts and rewrites it when it ends: two writes, nothing per call. */
export class RunRecorder {
  private finished = false;
  private readonly startedMs = performance.now();

  private constructor(
    readonly file: string,
    private current: RunRecord,
  ) {}

  /** Writes `<workspaceRoot>/runs/<run_id>.json` (atomically) with status running. */
  static async start(workspaceRoot: string, init: RunInit): Promise<RunRecorder> {
    if (!SAFE_RUN_ID.test(init.run_id)) throw new RangeError(`a run id must be a plain file name, got ${JSON.stringify(init.run_id)}`);
    const record: RunRecord = {
      record_version: RUN_RECORD_VERSION,
      run_id: init.run_id,
      kind: init.kind,
      name: init.name,
      parent_run_id: init.parent_run_id ?? null,
      spec: init.spec,
      provenance: runProvenance(),
      outcome: { status: 'running', started_at: new Date().toISOString(), ended_at: null, elapsed_ms: null, counts: {}, spend: emptySpend(), error: null },
    };
    const recorder = new RunRecorder(join(runsDir(workspaceRoot), `${init.run_id}.json`), record);
    await recorder.write();
    return recorder;
  }

  /** The record as last written. */
  get record(): RunRecord {
    return this.current;
  }

  /** Rewrites the record with how the run ended; once (later calls do nothing). */
  async finish(outcome: RunFinish): Promise<void> {
    if (this.finished) return;
    this.finished = true;
    this.current = {
      ...this.current,
      outcome: {
        ...this.current.outcome,
        status: outcome.status,
        ended_at: new Date().toISOString(),
        elapsed_ms: Math.round(performance.now() - this.startedMs),
        counts: outcome.counts,
        spend: outcome.spend ?? emptySpend(),
        error: outcome.error ?? null,
      },
    };
    await this.write();
  }

  /** Removes the record: a run that found nothing to do (an up-to-date make) leaves none. */
  async discard(): Promise<void> {
    this.finished = true;
    await rm(this.file, { force: true });
  }

  private async write(): Promise<void> {
    // Redacted field by field (a key never reaches the file), and the text again by writeFileAtomic.
    this.current = redactDeep(this.current);
    await writeFileAtomic(this.file, JSON.stringify(this.current, null, 2) + '\n');
  }
}

/**
 * A model spec as a spec string with every parameter it was given (`provider:model?temperature=0&...`),
 * redacted. Keys are never part of a spec (key_env names the variable that holds one).
 */
export function modelSpecString(spec: ModelSpec): string {
  const params: string[] = [];
  for (const [name, value] of Object.entries(spec)) {
    if (name === 'provider' || name === 'model' || value === undefined) continue;
    // As a user writes it (base_url=http://...), escaping only what would read back as something else.
    params.push(`${name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)}=${String(value).replace(/[%&+#]/g, encodeURIComponent)}`);
  }
  return redact(`${spec.provider}:${spec.model}${params.length ? `?${params.join('&')}` : ''}`);
}

/**
 * A hash of every file under the given files and folders, in order (hidden names skipped): the
 * identity of a prompt set that falls back on another. Null when none of them exists.
 */
export async function hashSources(paths: readonly string[]): Promise<string | null> {
  const hash = createHash('sha256');
  let found = false;
  for (const [index, path] of paths.entries()) {
    const files = await filesUnder(path);
    if (files === null) continue;
    found = true;
    for (const file of files)
      hash
        .update(`${index}\u0000${relative(path, file)}\u0000`)
        .update(await readFile(file))
        .update('\u0000');
  }
  return found ? hash.digest('hex') : null;
}

async function filesUnder(path: string): Promise<string[] | null> {
  const st = await stat(path).catch(() => undefined);
  if (!st) return null;
  if (!st.isDirectory()) return [path];
  const out: string[] = [];
  for (const name of (await readdir(path)).sort()) {
    if (name.startsWith('.')) continue;
    out.push(...((await filesUnder(join(path, name))) ?? []));
  }
  return out;
}

let provenance: RunProvenance | undefined;

/** The software and machine of this process (read once). */
export function runProvenance(): RunProvenance {
  provenance ??= {
    plens_version: plensVersion,
    git_revision: gitRevision(packageRoot),
    node_version: process.version,
    duckdb_version: duckdbVersion(),
    host: hostname(),
    platform: `${process.platform}-${process.arch}`,
  };
  return { ...provenance };
}

function duckdbVersion(): string | null {
  try {
    return duckdbLibraryVersion();
  } catch {
    return null;
  }
}

const COMMIT = /^[0-9a-f]{40}([0-9a-f]{24})?$/;

/**
 * The commit checked out in `root` when it is a git checkout (or worktree), read from the .git
 * files directly (no git process); null otherwise, or when HEAD names no commit yet.
 */
export function gitRevision(root: string): string | null {
  try {
    let gitDir = join(root, '.git');
    const st = statSync(gitDir, { throwIfNoEntry: false });
    if (!st) return null;
    if (st.isFile()) {
      const target = /^gitdir:\s*(.+)$/m.exec(readFileSync(gitDir, 'utf8'))?.[1];
      if (!target) return null;
      gitDir = resolve(root, target.trim());
    }
    const head = readFileSync(join(gitDir, 'HEAD'), 'utf8').trim();
    if (COMMIT.test(head)) return head;
    const ref = /^ref:\s*(refs\/\S+)$/.exec(head)?.[1];
    if (!ref || ref.split('/').includes('..')) return null;
    // A worktree keeps its branches in the repository's common folder.
    let common = gitDir;
    try {
      common = resolve(gitDir, readFileSync(join(gitDir, 'commondir'), 'utf8').trim());
    } catch {
      // Not a worktree.
    }
    for (const dir of [gitDir, common]) {
      try {
        const sha = readFileSync(join(dir, ref), 'utf8').trim();
        if (COMMIT.test(sha)) return sha;
      } catch {
        // Not a loose ref here.
      }
    }
    for (const line of readFileSync(join(common, 'packed-refs'), 'utf8').split('\n')) {
      const [sha, name] = line.trim().split(' ');
      if (name === ref && sha && COMMIT.test(sha)) return sha;
    }
    return null;
  } catch {
    return null;
  }
}
