import type { CommandModule } from 'yargs';
import { printResult, type GlobalArgs } from '../options.js';

interface StatusArgs extends GlobalArgs {
  pipeline: string;
}

export const statusCommand: CommandModule<GlobalArgs, StatusArgs> = {
  command: 'status',
  describe: 'Per stage and cell of a pipeline: done, pending, failed (with the commonest reasons), tokens and cost so far',
  builder: (y) =>
    y
      .option('pipeline', { alias: 'p', type: 'string', demandOption: true, describe: 'The pipeline file (YAML)' })
      .example('$0 status -p pipelines/demo.yaml', '')
      .example('$0 status -p pipelines/paper-table3.yaml --json', 'for scripts'),
  handler: async (args) => {
    const { loadPipeline } = await import('../../make/pipeline.js');
    const { pipelineStatus, formatStatus } = await import('../../make/status.js');
    const result = await pipelineStatus(loadPipeline(args.pipeline), new AbortController().signal);
    printResult(args, result, () => formatStatus(result));
  },
};
