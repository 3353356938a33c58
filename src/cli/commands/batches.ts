import type { CommandModule } from 'yargs';
import { printResult, workspaceOf, type GlobalArgs } from '../../platform/cli-options.js';

interface DropArgs extends GlobalArgs {
  id: string;
  reason?: string;
  'dry-run': boolean;
}

const dropCommand: CommandModule<GlobalArgs, DropArgs> = {
  command: 'drop <id>',
  describe: 'Close a batch the provider no longer knows (its id from the error or `plens status`): its requests are planned again by the next run',
  builder: (y) =>
    y
      .positional('id', { type: 'string', demandOption: true, describe: "The provider's batch id, or the ledger's own (b-...)" })
      .option('reason', { type: 'string', describe: 'Why, kept in the ledger' })
      .option('dry-run', { type: 'boolean', default: false, describe: 'Say which batch and how many requests, change nothing' })
      .example('$0 batches drop batch_abc123 -w out', 'after "the provider does not know batch batch_abc123"'),
  handler: async (args) => {
    const { dropBatch } = await import('../../engine/batch-drop.js');
    const r = await dropBatch({ workspace: workspaceOf(args).root, id: args.id, ...(args.reason ? { reason: args.reason } : {}), dryRun: args['dry-run'] });
    printResult(
      args,
      r,
      () =>
        `${r.dry_run ? 'would drop' : 'dropped'} batch ${r.batch_id ?? r.id} (${r.model}, ${r.status}) from ${r.ledger}: its ${r.keys} request(s) are planned again by the next run${r.dry_run ? ' (dry run: nothing changed)' : ''}`,
    );
  },
};

export const batchesCommand: CommandModule<GlobalArgs, GlobalArgs> = {
  command: 'batches <command>',
  describe: 'Batch ledgers: drop a batch the provider does not know',
  builder: (y) => y.command(dropCommand).demandCommand(1, 'Name a batches command: drop'),
  handler: () => undefined,
};
