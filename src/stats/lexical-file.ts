import { PlensError } from '../core/errors.js';
import { Database } from '../db/database.js';
import type { LapsOptions } from './laps-subsets.js';
import { computeLexical, loadLexicalMacros, type LexicalProtocol, type LexicalRow } from './lexical.js';
import type { SpeakerGroup } from './speaker-groups.js';
import { loadUtterances, type UtteranceFields, type UtteranceFormat } from './utterance-file.js';

export interface LexicalFileOptions {
  input: string;
  format: UtteranceFormat;
  fields: UtteranceFields;
  order: 'file' | 'dialogue';
  speakers: SpeakerGroup[];
  protocols: LexicalProtocol[];
  laps: LapsOptions;
  memoryLimit?: string;
  progress?: (done: number, total: number) => void;
}

export interface LexicalFileResult {
  input: string;
  utterances: number;
  rows: Array<LexicalRow & { speaker: SpeakerGroup }>;
  elapsed_ms: number;
}

/** `plens stats lexical`: Table 10's statistics for any utterance file, per speaker group and protocol. */
export async function lexicalStatsOfFile(options: LexicalFileOptions): Promise<LexicalFileResult> {
  const started = performance.now();
  if (options.speakers.length === 0 || options.protocols.length === 0) throw new PlensError('E_USAGE', 'name at least one speaker group and one protocol');
  const db = await Database.open(':memory:', options.memoryLimit ? { memoryLimit: options.memoryLimit } : {});
  try {
    await loadLexicalMacros(db);
    const n = await loadUtterances(db, options.input, 'utterances', options.fields, options.format, options.order);
    const selects = options.speakers.map((s, i) => `SELECT $${i + 1} AS grp, utt, text FROM utterances${s === 'both' ? '' : ` WHERE speaker = $${i + 1}`}`);
    await db.run(`CREATE OR REPLACE TEMP TABLE lexical_corpus AS ${selects.join(' UNION ALL ')}`, undefined, [...options.speakers]);
    const rows = await computeLexical(db, 'lexical_corpus', 'lexical_result', {
      protocols: options.protocols,
      laps: options.laps,
      ...(options.progress ? { onGroup: options.progress } : {}),
    });
    const order = (r: LexicalRow) => options.speakers.indexOf(r.grp as SpeakerGroup) * 10 + options.protocols.indexOf(r.protocol);
    return {
      input: options.input,
      utterances: n,
      rows: rows.sort((a, b) => order(a) - order(b)).map((r) => ({ speaker: r.grp as SpeakerGroup, ...r })),
      elapsed_ms: Math.round(performance.now() - started),
    };
  } finally {
    db.close();
  }
}
