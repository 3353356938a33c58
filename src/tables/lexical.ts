import type { LexicalFileResult } from '../stats/lexical-file.js';
import { LEXICAL_METRIC_COLUMNS } from './catalog.js';
import type { ColumnSpec, RenderableTable } from './render.js';

/** `plens stats`: the lexical-diversity result of one utterance file, as a table. */
export const LEXICAL_COLUMNS: ColumnSpec[] = [
  { key: 'protocol', label: 'Protocol' },
  { key: 'n_utterances', label: 'Utterances', format: 'int' },
  { key: 'n_tokens', label: 'Tokens', format: 'int' },
  { key: 'iterations', label: 'Iterations', format: 'int', nullText: '-' },
  ...LEXICAL_METRIC_COLUMNS,
];

export function lexicalTable(result: LexicalFileResult): RenderableTable {
  return {
    name: 'lexical',
    title: `Lexical diversity of ${result.input}`,
    caption:
      'laps: the LAPS reference procedure (100 subsets of 7,012 tokens, Python random seeded 42, character-level Self-BLEU); full: whole corpus, word tokens.',
    columns: [{ key: 'speaker', label: 'Speakers', group: true }, ...LEXICAL_COLUMNS],
    rows: result.rows.map((r) => ({ ...r })),
  };
}
