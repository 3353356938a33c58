import type { InputLocation } from '../core/errors.js';
import type { LexicalProtocol } from '../stats/lexical.js';
import type { SpeakerGroup } from '../stats/speaker-groups.js';
import type { TableFormat } from '../tables/render.js';
import type { RunLimits } from './run-settings.js';

/**
 * A pipeline ready to run: paths absolute, environment resolved, defaults filled in. The fields
 * every pipeline has are named here; a benchmark's own sections (resolved by its module) sit
 * beside them under the section's name, typed by the module that owns them.
 */
export interface Pipeline {
  file: string;
  name: string;
  description: string;
  workspace: string;
  warehouse: string;
  /** The registered benchmark the pipeline runs (its module's id). */
  benchmark: string;
  /** The run limits in force: flags over the file's `limits:` over the defaults (platform/run-settings.ts). */
  limits: RunLimits;
  lexical: LexicalProtocol[];
  /** The speaker groups Table 10's laps protocol measures (statistics.laps_speakers; default both). */
  lapsSpeakers: SpeakerGroup[];
  tables: { only: string[]; formats: Array<Exclude<TableFormat, 'table'>>; outDir: string };
  report?: { title: string; out: string };
  [section: string]: unknown;
}

/** What a module's section resolver is given: the section as written (schema-checked) and where its fields are. */
export interface SectionContext {
  file: string;
  /** The file's line and column of a JSON pointer (a missing field is reported at its parent). */
  locate: (pointer: string) => InputLocation;
  /** Checks a model spec now, so a typo fails at its line before anything runs. */
  checkSpec: (spec: string, pointer: string) => void;
  /** A path as the user wrote it, resolved against the working directory (`sample` etc. are the module's to read). */
  userPath: (path: string) => string;
  /** An input error at a field of the file (E_INPUT_SCHEMA with its line), to throw. */
  error: (message: string, pointer: string, hint?: string) => Error;
}
