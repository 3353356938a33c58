import { join } from 'node:path';
import type { Argv, CommandModule } from 'yargs';
import { userPath } from '../../core/paths.js';
import { printResult, workspaceOf, type GlobalArgs } from '../options.js';

interface PersonaImportArgs extends GlobalArgs {
  from: string;
  out?: string;
  'dry-run': boolean;
}

interface PersonaSelectArgs extends GlobalArgs {
  from: string;
  out?: string;
  fidelity: 'original' | 'fixed';
  seed: number;
  'dry-run': boolean;
}

interface PersonaImportPromptsArgs extends GlobalArgs {
  files: string[];
  out?: string;
  task?: '3.1' | '3.2' | '3.3';
  setting?: 'P-Conv' | 'P-NonConv' | 'NP-Conv';
  'dry-run': boolean;
}

const importPromptsCommand: CommandModule<GlobalArgs, PersonaImportPromptsArgs> = {
  command: 'import-prompts <files..>',
  describe: "Read the original prompt makers' JSONL files and keep each line as a prompt record, the prompt text exactly as given",
  builder: (y) =>
    y
      .positional('files', {
        type: 'string',
        array: true,
        demandOption: true,
        describe:
          'Prompt JSONL files as the original makers write them (3.1/3.2: {post_data_store, prediction_task}; 3.3: {user, prompt, true_label, subreddit})',
      })
      .option('out', { type: 'string', describe: 'Output folder; default <workspace>/persona/imported' })
      .option('task', {
        choices: ['3.1', '3.2', '3.3'] as const,
        describe: 'Task of every line; default: from the original file name, else from each record (label type)',
      })
      .option('setting', {
        choices: ['P-Conv', 'P-NonConv', 'NP-Conv'] as const,
        describe: 'Setting of every line; default: from the original file name, else from each record (few_shot_info, section markers)',
      })
      .option('dry-run', { type: 'boolean', default: false, describe: 'Read and check every line, write nothing' })
      .example('$0 persona import-prompts WithConversationPrompts_BodyPrediction_v2.jsonl', 'task 3.3, P-Conv, from the file name')
      .example('$0 persona import-prompts my_prompts.jsonl --task 3.2 --setting NP-Conv --json', 'a renamed file'),
  handler: async (args) => {
    const { runImportPrompts } = await import('../../benchmarks/personabench/import-prompts.js');
    const out = args.out ? userPath(args.out) : join(workspaceOf(args).root, 'persona', 'imported');
    const summary = await runImportPrompts({
      files: args.files.map((f) => userPath(f)),
      out,
      ...(args.task ? { task: args.task } : {}),
      ...(args.setting ? { setting: args.setting } : {}),
      dryRun: args['dry-run'],
    });
    printResult(args, summary, () =>
      [
        `${summary.dry_run ? 'checked' : 'imported'} ${summary.records} prompt records${summary.file ? ` -> ${summary.file}` : ''}${summary.blank_lines ? ` (${summary.blank_lines} blank lines skipped)` : ''}`,
        ...summary.sources.map(
          (s) =>
            `  ${s.file}: ${
              Object.entries(s.counts)
                .map(([k, n]) => `${n} x ${k}`)
                .join(', ') || 'no records'
            } (task/setting from ${s.decided_by})`,
        ),
      ].join('\n'),
    );
  },
};

const importCommand: CommandModule<GlobalArgs, PersonaImportArgs> = {
  command: 'import',
  describe: 'Read PERSONA-bench posts (raw list or {author: [posts]}), validate, write users/posts/comments Parquet',
  builder: (y) =>
    y
      .option('from', {
        type: 'string',
        demandOption: true,
        describe: 'Raw_Data_Postized.json (a list of posts) or merged_posts_remapped.json ({author: [posts]})',
      })
      .option('out', { type: 'string', describe: 'Output folder; default <workspace>/persona' })
      .option('dry-run', { type: 'boolean', default: false, describe: 'Read and validate everything, write nothing' })
      .example('$0 persona import --from data/personabench-sample/raw.json', 'import the bundled synthetic sample'),
  handler: async (args) => {
    const { runPersonaImport } = await import('../../benchmarks/personabench/import.js');
    const summary = await runPersonaImport({
      from: userPath(args.from),
      out: args.out ? userPath(args.out) : join(workspaceOf(args).root, 'persona'),
      dryRun: args['dry-run'],
    });
    printResult(args, summary, () =>
      [
        `${summary.dry_run ? 'checked' : 'imported'} ${summary.format} file: ${summary.users} users, ${summary.posts} posts, ${summary.comments} comments`,
        ...Object.entries(summary.tables).map(([name, t]) => `  ${name}: ${t.rows} rows -> ${t.file}`),
        'kept, but left out by the prompt makers:',
        ...Object.entries(summary.excluded).map(([why, n]) => `  ${n} ${why}`),
      ].join('\n'),
    );
  },
};

const selectCommand: CommandModule<GlobalArgs, PersonaSelectArgs> = {
  command: 'select',
  describe: 'Select the samples of every task (3.1, 3.2, 3.3) x setting (P-Conv, P-NonConv, NP-Conv) as the original prompt makers do, and build their prompts',
  builder: (y) =>
    y
      .option('from', { type: 'string', demandOption: true, describe: 'The PERSONA-bench input file (either format)' })
      .option('out', { type: 'string', describe: 'Output folder; default <workspace>/persona/selection-<fidelity>' })
      .option('fidelity', {
        choices: ['original', 'fixed'] as const,
        default: 'original' as const,
        describe: 'original: reproduce the makers, bugs included; fixed: apply the corrections listed in the README',
      })
      .option('seed', {
        type: 'number',
        default: 0,
        describe: 'Seed for the shuffles the original leaves unseeded (3.1/3.2 NP-Conv), CPython random.seed(int)',
      })
      .option('dry-run', { type: 'boolean', default: false, describe: 'Count the samples, write nothing' })
      .example('$0 persona select --from data/personabench-sample/raw.json --fidelity fixed --seed 1', 'select with the corrections'),
  handler: async (args) => {
    const { runPersonaSelect } = await import('../../benchmarks/personabench/select-stage.js');
    const out = args.out ? userPath(args.out) : join(workspaceOf(args).root, 'persona', `selection-${args.fidelity}`);
    const summary = await runPersonaSelect({ from: userPath(args.from), out, fidelity: args.fidelity, seed: args.seed, dryRun: args['dry-run'] });
    printResult(args, summary, () =>
      [
        `${summary.dry_run ? 'would select' : 'selected'} (${summary.fidelity}, seed ${summary.seed}) -> ${summary.file ?? '(dry run)'}${summary.prompts_file ? `, prompts -> ${summary.prompts_file}` : ''}`,
        ...Object.entries(summary.counts).map(([k, n]) => `  ${k}: ${n}`),
      ].join('\n'),
    );
  },
};

export const personaCommand: CommandModule<GlobalArgs, GlobalArgs> = {
  command: 'persona <command>',
  describe: 'PERSONA-bench (in progress): import the Reddit conversations, select task samples and build their prompts, import original prompt files',
  builder: (y: Argv<GlobalArgs>) =>
    y.command(importCommand).command(selectCommand).command(importPromptsCommand).demandCommand(1, 'Name a persona command: import, select or import-prompts.'),
  handler: () => undefined,
};
