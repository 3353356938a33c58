import type { CommandModule } from 'yargs';
import { usageError } from '../../core/errors.js';
import { printResult, type GlobalArgs } from '../../platform/cli-options.js';

interface StatusArgs extends GlobalArgs {
  pipeline: string | undefined;
  file: string | undefined;
}

export const statusCommand: CommandModule<GlobalArgs, StatusArgs> = {
  command: 'status [file]',
  describe: 'Per stage and cell of a pipeline: done, pending, failed (with the commonest reasons), tokens and cost so far',
  builder: (y) =>
    y
      .positional('file', { type: 'string', describe: 'The pipeline file (YAML), as -p' })
      .option('pipeline', { alias: 'p', type: 'string', describe: 'The pipeline file (YAML)' })
      .example('$0 status -p pipelines/demo.yaml', '')
      .example('$0 status pipelines/paper-table3.yaml --json', 'for scripts'),
  handler: async (args) => {
    if (args.pipeline !== undefined && args.file !== undefined && args.pipeline !== args.file)
      throw usageError(`two pipelines: -p ${args.pipeline} and ${args.file}`, 'name the pipeline once');
    const file = args.pipeline ?? args.file;
    if (file === undefined)
      throw usageError('name the pipeline: plens status -p FILE (or plens status FILE)', 'the shipped ones are in pipelines/, e.g. pipelines/demo.yaml');
    const { loadPipeline } = await import('../../make/pipeline.js');
    const { pipelineStatus, formatStatus } = await import('../../make/status.js');
    const result = await pipelineStatus(loadPipeline(file), new AbortController().signal);
    printResult(args, result, () => formatStatus(result));
  },
};
