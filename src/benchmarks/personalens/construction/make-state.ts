/**
 * What decides whether the build's file steps are up to date (kept light: make reads these for
 * every command). build-users: the demographic source and the draw. build-export: the stages'
 * records, the schema and where it writes.
 */
import { join } from 'node:path';
import { fileStamp, fileStats } from '../../../core/file-stamps.js';
import { plensVersion } from '../../../core/version.js';
import { hash } from '../../../platform/make-state.js';
import type { PersonaLensPipeline } from '../pipeline-section.js';

/** The users the build starts from (<workspace>/build/users.jsonl). */
export const buildUsersFile = (workspace: string) => join(workspace, 'build', 'users.jsonl');
/** The marker the export writes beside the benchmark (export.ts BUILD_MARKER). */
export const buildMarker = (out: string) => join(out, '.plens-build.json');

const source = (from: string) => (fileStamp(from) === null ? null : [fileStamp(from), fileStats(join(from, 'profile'), (n) => n === 'profile.json').length]);

export function buildUsersInputs(p: PersonaLensPipeline): string {
  const b = p.build!;
  return hash(['build-users', plensVersion, b.demographics, source(b.demographics.from)]);
}

/** The compared benchmark's import (<workspace>/build/reference/dataset). */
export const buildReferenceDir = (workspace: string) => join(workspace, 'build', 'reference');

export function buildReferenceInputs(p: PersonaLensPipeline): string {
  const from = p.build!.compareWith!;
  return hash(['build-reference', plensVersion, from, fileStats(from)]);
}

export function buildExportInputs(p: PersonaLensPipeline): string {
  const b = p.build!;
  const records = fileStats(
    join(p.workspace, 'build'),
    (n) => n.endsWith('.parquet') || n.endsWith('.jsonl'),
    (dir) => dir === 'reference',
  );
  return hash(['build-export', plensVersion, b.out, b.schema, fileStamp(b.schema), records]);
}
