import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeFileAtomic } from '../core/atomic.js';
import type { Pipeline } from './pipeline.js';

/**
 * What each file step was last built from. The LLM steps need none of this: their keys already
 * say what is done. The others are rebuilt when the fingerprint of their inputs changes.
 */
export interface MakeState {
  [step: string]: { inputs: string; output?: string } | undefined;
}

export function statePath(p: Pipeline): string {
  return join(p.workspace, 'make', `${p.name}.state.json`);
}

export function readState(p: Pipeline): MakeState {
  try {
    return JSON.parse(readFileSync(statePath(p), 'utf8')) as MakeState;
  } catch {
    return {};
  }
}

export async function writeState(p: Pipeline, state: MakeState): Promise<void> {
  await writeFileAtomic(statePath(p), JSON.stringify(state, null, 2) + '\n');
}

export function hash(value: unknown): string {
  return createHash('sha256').update(JSON.stringify(value)).digest('hex').slice(0, 16);
}

/**
 * A file step's build is current: recorded with these inputs, and its output's stamp is still the
 * one recorded (and there is an output).
 */
export function recordedBuild(state: MakeState, step: string, inputs: string, stamp: string | null): boolean {
  return stamp !== null && state[step]?.inputs === inputs && state[step]?.output === stamp;
}

/** A stage's manifest.json, or null when it is missing or unreadable (make then treats the stage as not done). */
export function readManifest<T = Record<string, unknown>>(dir: string): T | null {
  try {
    return JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as T;
  } catch {
    return null;
  }
}

/** The `created_at` of a stage's manifest: a new build of it, by us or by hand, changes it. */
export function manifestStamp(dir: string): string | null {
  return readManifest<{ created_at?: string }>(dir)?.created_at ?? null;
}
