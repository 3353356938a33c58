import { createReadStream, existsSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { PlensError } from '../core/errors.js';
import { parseJsonText } from '../core/json-input.js';
import { appendRow } from '../db/append-row.js';
import { sqlIdentifier, sqlList, type Database } from '../db/database.js';

/** Which input fields hold the utterance's parts, and which speaker values mean user or assistant. */
export interface UtteranceFields {
  dialogue: string;
  turn: string;
  speaker: string;
  text: string;
  userSpeakers: string[];
  assistantSpeakers: string[];
}

export const DEFAULT_FIELDS: UtteranceFields = {
  dialogue: 'dialogue_id',
  turn: 'turn',
  speaker: 'speaker',
  text: 'text',
  userSpeakers: ['user'],
  assistantSpeakers: ['assistant', 'system'],
};

export type UtteranceFormat = 'jsonl' | 'parquet';

export function utteranceFormatOf(file: string, given?: UtteranceFormat | 'auto'): UtteranceFormat {
  if (given && given !== 'auto') return given;
  if (/\.parquet$/i.test(file)) return 'parquet';
  if (/\.(jsonl|ndjson|json)$/i.test(file)) return 'jsonl';
  throw new PlensError('E_USAGE', `cannot tell the format of ${file} from its name`, { hint: 'name it .jsonl or .parquet, or pass --input-format' });
}

/**
 * Loads an utterance file into `table` (utt: corpus position, dialogue_id, turn, speaker: 'user' or
 * 'assistant', text). Every record is checked first; errors name the file, the line (JSONL) or row
 * (Parquet), and the field. The corpus order is the file's order unless `order` is 'dialogue'.
 */
export async function loadUtterances(
  db: Database,
  file: string,
  table: string,
  fields: UtteranceFields,
  format: UtteranceFormat,
  order: 'file' | 'dialogue',
): Promise<number> {
  if (!existsSync(file)) throw new PlensError('E_INPUT_NOT_FOUND', 'no such file', { location: { file } });
  await db.run(`CREATE OR REPLACE TEMP TABLE utterances_raw (utt BIGINT, dialogue_id VARCHAR, turn BIGINT, speaker VARCHAR, text VARCHAR)`);
  if (format === 'jsonl') await loadJsonLines(db, file, fields);
  else await loadParquet(db, file, fields);
  const orderBy = order === 'dialogue' ? 'dialogue_id, turn, utt' : 'utt';
  await db.run(
    `CREATE OR REPLACE TEMP TABLE ${table} AS SELECT row_number() OVER (ORDER BY ${orderBy}) AS utt, * EXCLUDE (utt) FROM utterances_raw ORDER BY ${orderBy}`,
  );
  await db.run('DROP TABLE utterances_raw');
  const [{ n }] = (await db.all<{ n: number }>(`SELECT count(*)::BIGINT AS n FROM ${table}`)) as [{ n: number }];
  if (n === 0) throw new PlensError('E_INPUT_SCHEMA', 'the file holds no utterance', { location: { file } });
  return n;
}

function speakerOf(value: unknown, fields: UtteranceFields): 'user' | 'assistant' | undefined {
  const v = String(value);
  if (fields.userSpeakers.includes(v)) return 'user';
  if (fields.assistantSpeakers.includes(v)) return 'assistant';
  return undefined;
}

function badSpeaker(file: string, where: { line?: number; pointer?: string }, value: unknown, fields: UtteranceFields): PlensError {
  return new PlensError(
    'E_INPUT_DOMAIN',
    `speaker ${JSON.stringify(value)} is neither a user (${fields.userSpeakers.join(', ')}) nor an assistant (${fields.assistantSpeakers.join(', ')}) value`,
    {
      location: { file, ...where },
      hint: 'map speaker values with --user-speakers and --assistant-speakers',
    },
  );
}

async function loadJsonLines(db: Database, file: string, fields: UtteranceFields): Promise<void> {
  const appender = await db.appender('utterances_raw');
  let lineNo = 0;
  let utt = 0;
  try {
    const lines = createInterface({ input: createReadStream(file, 'utf8'), crlfDelay: Infinity });
    for await (const line of lines) {
      lineNo++;
      if (line.trim() === '') continue;
      const record = parseJsonText(line, file, lineNo - 1);
      if (record === null || typeof record !== 'object' || Array.isArray(record)) {
        throw new PlensError('E_INPUT_SCHEMA', 'each line must be a JSON object', { location: { file, line: lineNo } });
      }
      const r = record as Record<string, unknown>;
      const text = r[fields.text];
      if (typeof text !== 'string') {
        throw new PlensError('E_INPUT_SCHEMA', `field "${fields.text}" must be a string (got ${text === undefined ? 'nothing' : JSON.stringify(text)})`, {
          location: { file, line: lineNo, pointer: `/${fields.text}` },
          hint: fields.text === 'text' ? 'name the text field with --text-field' : undefined,
        });
      }
      const speaker = speakerOf(r[fields.speaker], fields);
      if (!speaker) {
        if (r[fields.speaker] === undefined) {
          throw new PlensError('E_INPUT_SCHEMA', `field "${fields.speaker}" is missing`, {
            location: { file, line: lineNo, pointer: `/${fields.speaker}` },
            hint: 'name the speaker field with --speaker-field',
          });
        }
        throw badSpeaker(file, { line: lineNo, pointer: `/${fields.speaker}` }, r[fields.speaker], fields);
      }
      const turn = r[fields.turn];
      if (turn !== undefined && turn !== null && !Number.isInteger(turn)) {
        throw new PlensError('E_INPUT_SCHEMA', `field "${fields.turn}" must be an integer (got ${JSON.stringify(turn)})`, {
          location: { file, line: lineNo, pointer: `/${fields.turn}` },
        });
      }
      const dialogue = r[fields.dialogue];
      appendRow(appender, [
        utt++,
        dialogue === undefined || dialogue === null ? null : String(dialogue),
        (turn as number | null | undefined) ?? null,
        speaker,
        text,
      ]);
    }
  } catch (error) {
    if (error instanceof PlensError) throw error;
    throw new PlensError('E_INPUT_NOT_FOUND', `cannot read the file: ${(error as Error).message}`, { location: { file }, cause: error });
  } finally {
    appender.closeSync();
  }
}

async function loadParquet(db: Database, file: string, fields: UtteranceFields): Promise<void> {
  const columns = new Set((await db.all<{ name: string }>(`SELECT name FROM parquet_schema($1)`, undefined, [file])).map((r) => r.name));
  for (const [what, name] of [
    ['text', fields.text],
    ['speaker', fields.speaker],
  ] as const) {
    if (!columns.has(name)) {
      throw new PlensError('E_INPUT_SCHEMA', `no column "${name}" (the ${what}); columns: ${[...columns].filter((c) => c !== 'schema').join(', ')}`, {
        location: { file },
        hint: `name the ${what} column with --${what}-field`,
      });
    }
  }
  const col = (name: string, type: string) => (columns.has(name) ? `${sqlIdentifier(name)}::${type}` : `NULL::${type}`);
  await db.run(
    `
    CREATE OR REPLACE TEMP TABLE parquet_in AS
    SELECT row_number() OVER () - 1 AS utt, ${col(fields.dialogue, 'VARCHAR')} AS dialogue_id, ${col(fields.turn, 'BIGINT')} AS turn,
      ${col(fields.speaker, 'VARCHAR')} AS speaker, ${col(fields.text, 'VARCHAR')} AS text
    FROM read_parquet($1)`,
    undefined,
    [file],
  );
  const speakers = { user: sqlList(fields.userSpeakers), assistant: sqlList(fields.assistantSpeakers) };
  const [bad] = await db.all<{ utt: number; speaker: string | null; text: string | null }>(
    `SELECT utt, speaker, text FROM parquet_in WHERE text IS NULL OR speaker IS NULL OR NOT (list_contains($user, speaker) OR list_contains($assistant, speaker)) ORDER BY utt LIMIT 1`,
    undefined,
    speakers,
  );
  if (bad) {
    const row = { pointer: `/row/${bad.utt + 1}` };
    if (bad.text === null) throw new PlensError('E_INPUT_SCHEMA', `row ${bad.utt + 1}: "${fields.text}" is NULL`, { location: { file, ...row } });
    throw badSpeaker(file, row, bad.speaker, fields);
  }
  await db.run(
    `INSERT INTO utterances_raw SELECT utt, dialogue_id, turn, CASE WHEN list_contains($user, speaker) THEN 'user' ELSE 'assistant' END, text FROM parquet_in`,
    undefined,
    { user: speakers.user },
  );
  await db.run('DROP TABLE parquet_in');
}
