import type { CommandModule } from 'yargs';
import { printResult, workspaceOf, type GlobalArgs } from '../../../platform/cli-options.js';

interface ScenariosArgs extends GlobalArgs {
  kind: 'sd' | 'md' | 'all';
  sample?: number;
  users?: string[];
  domains?: string[];
  random?: number;
  seed?: string;
  'dry-run': boolean;
}

export const scenariosCommand: CommandModule<GlobalArgs, ScenariosArgs> = {
  command: 'scenarios',
  describe: 'Select the scenarios (user x task) to run, from the imported dataset',
  builder: (y) =>
    y
      .option('kind', { choices: ['sd', 'md', 'all'] as const, default: 'all' as const, describe: 'Single-domain, multi-domain or both' })
      .option('sample', { type: 'number', choices: [20, 30, 50, 100], describe: "One of the paper's fixed user lists (50 = all paper experiments)" })
      .option('users', {
        type: 'string',
        array: true,
        describe: 'User indices and ranges, e.g. 0-99 7 user12 (or 0-99,7,user12; with --sample: both must hold)',
      })
      .option('domains', { type: 'string', array: true, describe: 'Domains, e.g. Hotels Flights (or Hotels,Flights); keeps scenarios touching any of them' })
      .option('random', { type: 'number', describe: 'Keep N scenarios, chosen by a seeded hash (stable; larger N keeps smaller N)' })
      .option('seed', { type: 'string', describe: 'Seed for --random (default 0)' })
      .option('dry-run', { type: 'boolean', default: false, describe: 'Count what would be selected, write nothing' })
      .example('$0 scenarios --kind all', 'every scenario of the dataset (122,133 on the full data)')
      .example('$0 scenarios --sample 50', "the paper's sample: 3,283 SD + 813 MD")
      .example('$0 scenarios --kind sd --domains Hotels,Flights --random 200 --seed 7', 'a seeded random subset'),
  handler: async (args) => {
    const { runScenarios, formatScenariosSummary } = await import('../scenarios/stage.js');
    const { scenarioSelectionOf } = await import('../scenario-settings.js');
    const selection = scenarioSelectionOf({
      kind: args.kind,
      ...(args.sample !== undefined ? { sample: args.sample } : {}),
      ...(args.users !== undefined ? { users: args.users.map(String).join(',') } : {}),
      ...(args.domains !== undefined ? { domains: args.domains.map(String).join(',') } : {}),
      ...(args.random !== undefined ? { random: args.random } : {}),
      ...(args.seed !== undefined ? { seed: args.seed } : {}),
    });
    const summary = await runScenarios(workspaceOf(args), selection, { dryRun: args['dry-run'] });
    printResult(args, summary, () => formatScenariosSummary(summary));
  },
};
