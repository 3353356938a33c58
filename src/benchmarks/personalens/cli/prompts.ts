import type { Argv, CommandModule } from 'yargs';
import { userPath } from '../../../core/paths.js';
import { printResult, refuseWorkspace, type GlobalArgs } from '../../../platform/cli-options.js';

interface ImportOriginalArgs extends GlobalArgs {
  dir: string;
  out: string;
  map?: string;
  force: boolean;
  'dry-run': boolean;
}

const importOriginalCommand: CommandModule<GlobalArgs, ImportOriginalArgs> = {
  command: 'import-original <dir>',
  describe: 'Turn a local checkout of the original PersonaLens code into a prompt set (--prompts) that sends its exact prompts',
  builder: (y) =>
    (y as Argv<GlobalArgs>)
      .positional('dir', {
        type: 'string',
        demandOption: true,
        describe:
          'Checkout of amazon-science/PersonaLens (reads util/assistant_prompts.py, util/evaluation_prompts.py, src/generate_dialogue.py, src/generate_dialogue_md.py)',
      })
      .option('out', { type: 'string', demandOption: true, describe: 'Folder to write the prompt set to (Python-format templates, VERSION, prompt-set.json)' })
      .option('map', {
        type: 'string',
        describe:
          'JSON mapping for constants or placeholders plens does not recognise: {"templates": {"<template>": "CONSTANT"}, "placeholders": {"<name>": "<field>"}}',
      })
      .option('force', { type: 'boolean', default: false, describe: 'Replace a non-empty --out folder' })
      .option('dry-run', { type: 'boolean', default: false, describe: 'Recognise and check every prompt, list what would be written, write nothing' })
      .example(
        '$0 prompts import-original ../PersonaLens --out original-prompts',
        'then: plens dialogues --prompts original-prompts ...; plens judge --prompts original-prompts ...',
      ) as unknown as Argv<ImportOriginalArgs>,
  handler: async (args) => {
    refuseWorkspace(args, 'plens prompts import-original', 'it reads the checkout and writes the prompt set to --out');
    const { importOriginal, formatImportSummary } = await import('../import-original.js');
    const summary = importOriginal({
      source: userPath(args.dir),
      out: userPath(args.out),
      ...(args.map ? { mapping: userPath(args.map) } : {}),
      force: args.force,
      dryRun: args['dry-run'],
    });
    printResult(args, summary, () => formatImportSummary(summary));
  },
};

export const promptsCommand: CommandModule<GlobalArgs, GlobalArgs> = {
  command: 'prompts',
  describe: 'Prompt sets: import the original PersonaLens prompts from a local checkout',
  builder: (y) => y.command(importOriginalCommand).demandCommand(1, 'Name a prompts subcommand: import-original'),
  handler: () => {},
};
