import type { CommandModule } from 'yargs';
import { usageError } from '../../core/errors.js';
import { printResult, type GlobalArgs } from '../../platform/cli-options.js';
import { checkWorkspaceFlag, pipelineOfProject } from './make.js';

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
      .option('pipeline', {
        alias: 'p',
        type: 'string',
        describe: "The pipeline file (YAML). Default: the pipeline that last built -w's workspace, else the last plens make here, else plens.yaml here",
      })
      .example('$0 status', 'the last plens make in this folder')
      .example('$0 status -p pipelines/demo.yaml', '')
      .example('$0 status -w out/demo', 'the pipeline that last ran in out/demo')
      .example('$0 status pipelines/paper-table3.yaml --json', 'for scripts'),
  handler: async (args) => {
    if (args.pipeline !== undefined && args.file !== undefined && args.pipeline !== args.file)
      throw usageError(`two pipelines: -p ${args.pipeline} and ${args.file}`, 'name the pipeline once');
    const { file, folder } = pipelineOfProject(args.pipeline ?? args.file, args.workspace, 'status', args);
    const { loadPipeline } = await import('../../make/pipeline.js');
    const { pipelineStatus, formatStatus } = await import('../../make/status.js');
    const pipeline = loadPipeline(file);
    checkWorkspaceFlag(args.workspace, pipeline, folder, 'status');
    const result = await pipelineStatus(pipeline, new AbortController().signal);
    printResult(args, result, () => formatStatus(result));
  },
};
