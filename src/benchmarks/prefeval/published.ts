import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PlensError } from '../../core/errors.js';

/** A published figure: the leaderboard's accuracy for a model, a baseline and a number of filler turns. */
export interface PublishedFigure {
  /** The model spec of the pipeline the figure stands beside. */
  model: string;
  /** The model's name in the leaderboard. */
  published_as: string;
  baseline: string;
  inter_turns: number;
  accuracy: number | null;
}

const cells = (line: string) =>
  line
    .trim()
    .replace(/^\||\|$/g, '')
    .split('|')
    .map((c) => c.replace(/\*\*/g, '').trim());

/**
 * The README leaderboard of a PrefEval checkout (travel_restaurant, explicit preferences,
 * generation task), read at run time: its columns name a baseline and a number of turns
 * ("Zero-shot (10 Turns)", "Reminder (300 Turns)"), its rows a model; "-" is no figure. `names`
 * maps each of the pipeline's model specs to its row's name. plens ships none of the figures.
 */
export function readPublished(checkout: string, names: Record<string, string>): PublishedFigure[] {
  const file = join(checkout, 'README.md');
  if (!existsSync(file))
    throw new PlensError('E_INPUT_NOT_FOUND', `no README.md in ${checkout} to read the published leaderboard from`, {
      hint: 'prefeval.published needs prefeval.data to be a PrefEval checkout (github.com/amazon-science/PrefEval)',
    });
  const lines = readFileSync(file, 'utf8').split('\n');
  const start = lines.findIndex((l, i) => /^\|\s*Model\s*\|/.test(l) && lines.slice(Math.max(0, i - 6), i).some((p) => /leaderboard/i.test(p)));
  if (start < 0) throw new PlensError('E_INPUT_SCHEMA', `${file}: no leaderboard table (a "| Model |" header under a Leaderboard heading)`);
  const columns = cells(lines[start]!).map((c) => {
    const m = /^(Zero-shot|Reminder|CoT|Self-critic)\s*\((\d+)\s*Turns\)$/i.exec(c);
    if (!m) return null;
    const baseline = { 'zero-shot': 'zero-shot', reminder: 'remind', cot: 'cot', 'self-critic': 'selfcritic' }[m[1]!.toLowerCase()]!;
    return { baseline, turns: Number(m[2]) };
  });
  const rows = new Map<string, string[]>();
  for (const line of lines.slice(start + 2)) {
    if (!line.trim().startsWith('|')) break;
    const c = cells(line);
    rows.set(c[0]!, c);
  }
  const out: PublishedFigure[] = [];
  for (const [model, name] of Object.entries(names)) {
    const row = rows.get(name);
    if (!row)
      throw new PlensError('E_INPUT_SCHEMA', `prefeval.published: no row "${name}" in the leaderboard of ${file}`, {
        hint: `its rows: ${[...rows.keys()].join(', ')}`,
      });
    columns.forEach((col, i) => {
      if (!col) return;
      const value = row[i] ?? '';
      const n = Number(value);
      out.push({
        model,
        published_as: name,
        baseline: col.baseline,
        inter_turns: col.turns,
        accuracy: value === '-' || value === '' || Number.isNaN(n) ? null : n,
      });
    });
  }
  return out;
}
