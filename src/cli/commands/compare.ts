import type { CommandModule } from 'yargs';
import { printResult, requireProjectWarehouse, warehouseOption, type GlobalArgs } from '../../platform/cli-options.js';

interface CompareArgs extends GlobalArgs {
  db: string;
  a: string;
  b: string;
  where?: string;
  replicate: number;
}

export const compareCommand: CommandModule<GlobalArgs, CompareArgs> = {
  command: 'compare <a> <b>',
  describe: 'Compare two cells on the same scenarios: difference, clustered interval, test, corrected p and MDE per dimension',
  builder: (y) =>
    warehouseOption(y)
      .positional('a', {
        type: 'string',
        demandOption: true,
        describe: 'Cell A as key=value pairs, comma-separated; keys: assistant, setting, user, judge, run, kind',
      })
      .positional('b', { type: 'string', demandOption: true, describe: 'Cell B, the same way (B - A is reported)' })
      .option('where', { type: 'string', describe: 'key=value pairs applied to both sides, e.g. kind=SD or assistant=openai:gpt-4o' })
      .option('replicate', { type: 'number', default: 0, describe: 'Which replicate of each scenario to pair' })
      .epilogue(
        'Pairs are the scenarios both cells scored. Per dimension: mean of B - A (TC in percentage points) with a seeded bootstrap ' +
          'interval over users (scenarios are nested in users), McNemar exact (TC) or Wilcoxon signed-rank with zero_method pratt (others), ' +
          'p corrected over the dimensions by Holm and Benjamini-Hochberg, and the minimum detectable effect at 80% power. ' +
          'A verdict claims a difference only where the Holm p is below 0.05.',
      )
      .example('$0 compare setting=base setting=base+all --where assistant=openai:gpt-4o', 'the lift of all context blocks for one assistant')
      .example('$0 compare assistant=openai:a assistant=openai:b --where setting=base,kind=SD --json', 'two assistants, machine-readable'),
  handler: async (args) => {
    const { compareCells, formatCompare, parseCell } = await import('../../compare/compare.js');
    const result = await compareCells({
      dbPath: requireProjectWarehouse(args),
      a: parseCell(args.a, 'A'),
      b: parseCell(args.b, 'B'),
      ...(args.where ? { where: parseCell(args.where, '--where') } : {}),
      replicate: args.replicate,
    });
    printResult(args, result, () => formatCompare(result));
  },
};
