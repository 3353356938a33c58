import type { Argv, CommandModule } from 'yargs';
import { userPath } from '../../../core/paths.js';
import { printResult, requireProjectWarehouse, warehouseOption, workspaceOf, type GlobalArgs } from '../../../platform/cli-options.js';

interface ExportArgs extends GlobalArgs {
  db: string;
  n: number;
  seed: string;
  run?: string;
  name?: string;
  prompts?: string;
  force: boolean;
  'dry-run': boolean;
}

interface ImportArgs extends GlobalArgs {
  files: string[];
  sample?: string;
  annotator?: string;
}

const exportCommand: CommandModule<GlobalArgs, ExportArgs> = {
  command: 'export',
  describe: 'Draw a seeded, stratified sample of judged dialogues and write a blank sheet, a readable page and sample.json',
  builder: (y) =>
    warehouseOption(y)
      .option('n', { type: 'number', demandOption: true, describe: 'Dialogues to sample (the paper: 100)' })
      .option('seed', { type: 'string', demandOption: true, describe: 'Seed: the same seed gives the same sample, and a larger --n contains a smaller one' })
      .option('run', { type: 'string', describe: 'Judge run to sample from (see the view result_runs); needed when the warehouse holds several' })
      .option('name', { type: 'string', describe: 'Sample name, a folder under <workspace>/annotation/ (default sample-<seed>-<n>)' })
      .option('prompts', { type: 'string', describe: "Judge prompt folder the rubric is taken from (the judge's --prompts, if it had one)" })
      .option('force', { type: 'boolean', default: false, describe: 'Replace an existing sample of that name' })
      .option('dry-run', { type: 'boolean', default: false, describe: 'Show the allocation and the sample, write nothing' })
      .example('$0 annotate export --n 100 --seed 1', "the paper's 100 dialogues, by kind x assistant x setting")
      .example('$0 annotate export --n 100 --seed 1 --run 9fb7ec --dry-run', 'one run of several; nothing written'),
  handler: async (args) => {
    const { exportSample, formatExportSummary } = await import('../annotation/export.js');
    const summary = await exportSample({
      workspace: workspaceOf(args),
      dbPath: requireProjectWarehouse(args),
      n: args.n,
      seed: args.seed,
      ...(args.run !== undefined ? { run: args.run } : {}),
      ...(args.name !== undefined ? { name: args.name } : {}),
      ...(args.prompts !== undefined ? { prompts: userPath(args.prompts) } : {}),
      force: args.force,
      dryRun: args['dry-run'],
    });
    printResult(args, summary, () => formatExportSummary(summary));
  },
};

const importCommand: CommandModule<GlobalArgs, ImportArgs> = {
  command: 'import <files..>',
  describe: 'Import filled sheets (one CSV per annotator) into <workspace>/annotation/labels.parquet',
  builder: (y) =>
    (y as Argv<GlobalArgs>)
      .positional('files', {
        type: 'string',
        array: true,
        demandOption: true,
        describe: "Filled sheets; each file's name (without extension) names its annotator",
      })
      .option('sample', { type: 'string', describe: 'Sample the sheets belong to (needed when the workspace has several)' })
      .option('annotator', { type: 'string', describe: 'Annotator name, when importing one file' })
      .example('$0 annotate import ann1.csv ann2.csv ann3.csv', 'three annotators: ann1, ann2, ann3')
      .example(
        '$0 annotate import sheet.csv --annotator alice --sample sample-1-100',
        "one sheet; imported again, it replaces alice's labels",
      ) as unknown as Argv<ImportArgs>,
  handler: async (args) => {
    const { importLabels, formatImportSummary } = await import('../annotation/import.js');
    const summary = await importLabels({
      workspace: workspaceOf(args),
      files: args.files.map((f) => userPath(String(f))),
      ...(args.sample !== undefined ? { sample: args.sample } : {}),
      ...(args.annotator !== undefined ? { annotator: args.annotator } : {}),
    });
    printResult(args, summary, () => formatImportSummary(summary));
  },
};

export const annotateCommand: CommandModule<GlobalArgs, GlobalArgs> = {
  command: 'annotate',
  describe: 'Human annotation for the judge agreement study (Table 5): export a sample, import the labels',
  builder: (y) =>
    y
      .command(exportCommand)
      .command(importCommand)
      .demandCommand(1, 'Name a subcommand: export or import')
      .example('$0 annotate export --n 100 --seed 1', '')
      .example('$0 annotate import ann1.csv ann2.csv ann3.csv', '') as unknown as Argv<GlobalArgs>,
  handler: () => {},
};
