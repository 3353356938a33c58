import { PlensError, type InputLocation } from '../../core/errors.js';
import { parseUserList, type ScenarioSelection } from './scenarios/selection-spec.js';
import type { SampleSize } from './scenarios/samples.js';

/** A scenario selection as written: by flags (`plens scenarios`) or under `scenarios:` in a pipeline. */
export interface ScenarioSelectionInput {
  kind: 'sd' | 'md' | 'all';
  /** 50 or "sample_50". */
  sample?: number | string;
  /** "0-99,7,user12" or a list of indices. */
  users?: string | number[];
  /** "Hotels,Flights" or a list. */
  domains?: string | string[];
  random?: number;
  seed?: string | number;
}

/**
 * The one translation of a written selection into a ScenarioSelection. `locate` (a pipeline's)
 * turns an error into one at the field's line in the file; without it errors keep naming the flag.
 */
export function scenarioSelectionOf(s: ScenarioSelectionInput, locate?: (pointer: string) => InputLocation): ScenarioSelection {
  if (locate && s.seed !== undefined && s.random === undefined)
    throw new PlensError('E_INPUT_SCHEMA', 'seed only applies with random', { location: locate('/scenarios/seed') });
  const selection: ScenarioSelection = { kind: s.kind };
  if (s.sample !== undefined) selection.sample = Number(String(s.sample).replace('sample_', '')) as SampleSize;
  if (s.users !== undefined) {
    try {
      selection.users = typeof s.users === 'string' ? parseUserList(s.users) : [...new Set(s.users)].sort((a, b) => a - b);
    } catch (error) {
      if (!locate) throw error;
      throw new PlensError('E_INPUT_SCHEMA', (error as Error).message.replace('--users', 'users'), { location: locate('/scenarios/users') });
    }
  }
  if (s.domains !== undefined)
    selection.domains =
      typeof s.domains === 'string'
        ? s.domains
            .split(',')
            .map((d) => d.trim())
            .filter(Boolean)
        : s.domains;
  if (s.random !== undefined) selection.random = s.random;
  // A number is its decimal text: the sample is drawn from md5(seed:scenario_id).
  if (s.seed !== undefined) selection.seed = String(s.seed);
  return selection;
}
