import type { Argv, CommandModule } from 'yargs';
import { usageError } from '../../core/errors.js';
import { userPath } from '../../core/paths.js';
import { SPEAKER_GROUPS, type SpeakerGroup } from '../../stats/speaker-groups.js';
import { refuseWorkspace, showProgress, type GlobalArgs } from '../../platform/cli-options.js';

interface LexicalArgs extends GlobalArgs {
  input: string;
  'input-format': 'auto' | 'jsonl' | 'parquet';
  protocol: Array<'laps' | 'full'>;
  speaker: SpeakerGroup[];
  format: 'table' | 'md' | 'csv' | 'tex' | 'json';
  'text-field': string;
  'speaker-field': string;
  'dialogue-field': string;
  'turn-field': string;
  'user-speakers': string[];
  'assistant-speakers': string[];
  order: 'file' | 'dialogue';
  iterations: number;
  'token-budget': number;
  seed: number;
  'memory-limit'?: string;
}

const list = (values: string[]) => [...new Set(values.map((x) => String(x).trim()).filter(Boolean))];

const lexicalCommand: CommandModule<GlobalArgs, LexicalArgs> = {
  command: 'lexical',
  describe: 'Dist-1, Dist-2, Ent-4 and Self-BLEU (Table 10) of any utterance file, JSONL or Parquet',
  builder: (y) =>
    y
      .option('input', {
        alias: 'i',
        type: 'string',
        demandOption: true,
        describe: 'Utterance file (.jsonl or .parquet): one utterance per line/row, in corpus order',
      })
      .option('input-format', { choices: ['auto', 'jsonl', 'parquet'] as const, default: 'auto' as const, describe: 'Input format (auto: from the file name)' })
      .option('protocol', {
        type: 'array',
        choices: ['laps', 'full'] as const,
        default: ['laps'] as Array<'laps' | 'full'>,
        describe: 'laps: the LAPS reference procedure PersonaLens Table 10 uses (reproduces published values); full: the whole corpus, word tokens',
      })
      .option('speaker', {
        type: 'array',
        choices: SPEAKER_GROUPS,
        default: [...SPEAKER_GROUPS] as SpeakerGroup[],
        describe: 'Speaker groups to score (Table 10 reports both)',
      })
      .option('format', { choices: ['table', 'md', 'csv', 'tex', 'json'] as const, default: 'table' as const, describe: 'Output format' })
      .option('text-field', { type: 'string', default: 'text', describe: 'Field holding the utterance text' })
      .option('speaker-field', { type: 'string', default: 'speaker', describe: 'Field holding the speaker' })
      .option('dialogue-field', { type: 'string', default: 'dialogue_id', describe: 'Field holding the dialogue id (used by --order dialogue)' })
      .option('turn-field', { type: 'string', default: 'turn', describe: 'Field holding the turn index (used by --order dialogue)' })
      .option('user-speakers', { type: 'string', array: true, default: ['user'], describe: 'Speaker values that mean the user' })
      .option('assistant-speakers', { type: 'string', array: true, default: ['assistant', 'system'], describe: 'Speaker values that mean the assistant' })
      .option('order', {
        choices: ['file', 'dialogue'] as const,
        default: 'file' as const,
        describe: "Corpus order (laps draws depend on it): the file's, or by dialogue and turn",
      })
      .option('iterations', { type: 'number', default: 100, describe: 'laps: subsets drawn' })
      .option('token-budget', { type: 'number', default: 7012, describe: 'laps: whitespace tokens per subset' })
      .option('seed', { type: 'number', default: 42, describe: "laps: seed of Python's random stream" })
      .option('memory-limit', {
        type: 'string',
        describe: 'DuckDB memory limit, e.g. 4GB; beyond it DuckDB spills to disk (default 1GB; env PLENS_MEMORY_LIMIT)',
      })
      .check((a) => {
        for (const k of ['iterations', 'token-budget'] as const) if (!Number.isInteger(a[k]) || a[k] < 1) throw usageError(`--${k} must be a positive integer`);
        if (!Number.isInteger(a.seed) || a.seed < 0) throw usageError('--seed must be a non-negative integer');
        return true;
      })
      .example('$0 stats lexical -i corpus.jsonl', 'laps protocol, all speaker groups, as a table')
      .example(
        '$0 stats lexical -i sgd.parquet --protocol laps full --speaker both --text-field utterance --assistant-speakers SYSTEM --user-speakers USER --format md',
        'an external corpus for your own Table 10',
      ),
  handler: async (args) => {
    refuseWorkspace(args, 'plens stats lexical', 'it reads only the file named by --input');
    const { lexicalStatsOfFile } = await import('../../stats/lexical-file.js');
    const { lexicalTable } = await import('../../tables/lexical.js');
    const { DEFAULT_FIELDS, utteranceFormatOf } = await import('../../stats/utterance-file.js');
    const { renderTable } = await import('../../tables/render.js');
    const { createProgress } = await import('../../core/progress.js');
    const input = userPath(args.input);
    let bar: ReturnType<typeof createProgress> | undefined;
    const result = await lexicalStatsOfFile({
      input,
      format: utteranceFormatOf(input, args['input-format']),
      fields: {
        ...DEFAULT_FIELDS,
        text: args['text-field'],
        speaker: args['speaker-field'],
        dialogue: args['dialogue-field'],
        turn: args['turn-field'],
        userSpeakers: list(args['user-speakers']),
        assistantSpeakers: list(args['assistant-speakers']),
      },
      order: args.order,
      speakers: [...new Set(args.speaker)],
      protocols: [...new Set(args.protocol)],
      laps: { iterations: args.iterations, tokenBudget: args['token-budget'], seed: args.seed },
      ...(args['memory-limit'] ? { memoryLimit: args['memory-limit'] } : {}),
      progress: (done, total) => {
        bar ??= createProgress({ label: 'laps subsets', total, unit: 'groups', enabled: showProgress(args) });
        bar.increment();
        if (done === total) bar.stop();
      },
    });
    if (args.json || args.format === 'json') {
      process.stdout.write(JSON.stringify({ ok: true, ...result }, null, 2) + '\n');
    } else if (!args.quiet) {
      process.stdout.write(renderTable(lexicalTable(result), args.format) + '\n');
    }
  },
};

export const statsCommand: CommandModule<GlobalArgs, GlobalArgs> = {
  command: 'stats <statistic>',
  describe: 'Corpus statistics outside the pipeline (lexical diversity of any utterance file)',
  builder: (y: Argv<GlobalArgs>) => y.command(lexicalCommand).demandCommand(1, 'Name a statistic: lexical'),
  handler: () => {},
};
