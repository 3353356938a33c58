import type { PythonRandom } from '../../stats/python-random.js';

/**
 * PrefEval's utils_mcq.shuffle_options: the first option is the correct one; the options are
 * shuffled with `random.sample(options, len(options))` (CPython's generator, stats/python-random.ts),
 * and the correct one's new position is `shuffled.index(options[0])`, the first equal string (so if
 * a wrong option repeats the correct one's text and lands before it, that earlier position counts
 * as correct, as in the original). Call it with one PythonRandom seeded with 41 for a whole run,
 * record by record in file order.
 */
export function shuffleOptions(options: readonly string[], rng: PythonRandom): { shuffled: string[]; correctIndex: number } {
  if (options.length === 0) throw new RangeError('shuffleOptions: no options');
  const shuffled = rng.sample(options, options.length);
  return { shuffled, correctIndex: shuffled.indexOf(options[0]!) };
}
