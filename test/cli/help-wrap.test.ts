import { describe, expect, it } from 'vitest';
import { helpWidth } from '../../src/cli/main.js';
import { runCliInProcess } from '../helpers/cli.js';

/*
 * yargs's ESM build wrapped help at the column whatever the text ("writes its ow" / "n log").
 * Help now wraps at word boundaries, to the terminal's width (at most 120 columns).
 */
async function helpAt(columns: number | undefined, args: string[]): Promise<string> {
  const saved = process.stdout.columns;
  process.stdout.columns = columns as number;
  try {
    const r = await runCliInProcess([...args, '--help']);
    expect(r.code).toBe(0);
    return r.stdout;
  } finally {
    process.stdout.columns = saved;
  }
}

// Phrases from option descriptions that a column cut used to split.
const PHRASES: Array<[string[], string[]]> = [
  [
    ['dialogues'],
    ['each shard writes its own log', 'replay (use; a miss fails)', 'params after ?', 'Dialogues per scenario and cell (each its own key and cache entries)'],
  ],
  [['scenarios'], ['keeps scenarios touching any of them', 'chosen by a seeded hash (stable; larger N keeps smaller N)']],
  [['judge'], ['Run again what is recorded as failed']],
  [[], ['Runs and builds personalization benchmarks for conversational assistants as pipelines of resumable stages']],
];

describe('--help', () => {
  it('wraps at word boundaries, within the terminal width, at any width', async () => {
    for (const columns of [60, 80, 100, 200]) {
      for (const [command, phrases] of PHRASES) {
        const text = await helpAt(columns, command);
        const width = helpWidth(columns);
        for (const line of text.split('\n')) expect(line.length, `${command.join(' ')} at ${columns}: ${line}`).toBeLessThanOrEqual(width);
        // Joined back with single spaces, every phrase is whole: no line ends inside a word.
        const flat = text.replace(/\s+/g, ' ');
        for (const p of phrases) expect(flat, `${command.join(' ')} at ${columns}`).toContain(p);
      }
    }
  });

  it('uses the terminal width up to 120 columns, 100 when not on a terminal', () => {
    expect(helpWidth(72)).toBe(72);
    expect(helpWidth(300)).toBe(120);
    expect(helpWidth(undefined)).toBe(100);
  });
});
