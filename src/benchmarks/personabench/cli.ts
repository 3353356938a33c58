import { join } from 'node:path';
import type { Argv, CommandModule } from 'yargs';
import { userPath } from '../../core/paths.js';
import { usageError } from '../../core/errors.js';
import { interruptSignal } from '../../platform/interrupt.js';
import { llmStageOptions, llmStageRunOptions, setStageExitCode, withStageProgress, type LlmStageArgs } from '../../platform/cli-stage-args.js';
import { printResult, refuseWorkspace, workspaceOf, type GlobalArgs } from '../../platform/cli-options.js';
import { batchFlags, resolveBatch } from '../../platform/run-settings.js';

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
  original?: string;
  python?: string;
  'replay-order'?: string[];
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
        // A string: yargs would read 3.1 as the number 3.1, which no choice equals.
        type: 'string',
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
    const { runImportPrompts } = await import('./import-prompts.js');
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
    const { runPersonaImport } = await import('./import.js');
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
        describe: 'original: reproduce the makers, bugs included; fixed: apply the corrections listed in docs/personabench.md',
      })
      .option('seed', {
        type: 'number',
        default: 0,
        describe: 'Seed for the shuffles the original leaves unseeded (3.1/3.2 NP-Conv), CPython random.seed(int)',
      })
      .option('original', {
        type: 'string',
        describe:
          "A checkout of the original code (github.com/PERSONA-bench/PERSONA, branch Latest): run its six prompt makers, unmodified, on the input with Python's random seeded by --seed; their nine files are kept byte for byte in <out>/original-files/ and become prompts.jsonl (the original's wording), and every record is compared with plens's own selection",
      })
      .option('python', { type: 'string', describe: 'The Python that runs the original scripts (with --original); default python3 on PATH' })
      .option('replay-order', {
        type: 'string',
        array: true,
        describe:
          "The original's 3.1 and/or 3.2 NP-Conv prompt files from an earlier, unseeded run: their order of target replies replaces the seeded shuffle, so plens's selection replays that run",
      })
      .option('dry-run', { type: 'boolean', default: false, describe: 'Count the samples, write nothing' })
      .example('$0 persona select --from data/personabench-sample/raw.json --fidelity fixed --seed 1', 'select with the corrections')
      .example('$0 persona select --from merged_posts_remapped.json --original ~/src/PERSONA --seed 7', "the original's own nine prompt files, byte for byte"),
  handler: async (args) => {
    const { runPersonaSelect } = await import('./select-stage.js');
    const out = args.out ? userPath(args.out) : join(workspaceOf(args).root, 'persona', `selection-${args.fidelity}`);
    const summary = await runPersonaSelect({
      from: userPath(args.from),
      out,
      fidelity: args.fidelity,
      seed: args.seed,
      dryRun: args['dry-run'],
      ...(args.original !== undefined ? { original: userPath(args.original) } : {}),
      ...(args.python !== undefined ? { python: args.python } : {}),
      ...(args['replay-order'] ? { replayOrder: args['replay-order'].map((f) => userPath(f)) } : {}),
      ...(args.quiet ? {} : { onProgress: (line: string) => process.stderr.write(`plens: ${line}\n`) }),
    });
    printResult(args, summary, () =>
      [
        `${summary.dry_run ? 'would select' : 'selected'} (${summary.fidelity}, seed ${summary.seed}) -> ${summary.file ?? '(dry run)'}${summary.prompts_file ? `, prompts -> ${summary.prompts_file}` : ''}`,
        ...Object.entries(summary.counts).map(([k, n]) => `  ${k}: ${n}`),
        ...(summary.original
          ? [
              `the original makers' ${summary.original.files.length} files${summary.original.files_dir ? ` -> ${summary.original.files_dir}` : ''} (prompts.jsonl holds their wording):`,
              ...summary.original.stopped.map((s) => `  ${s.script} wrote nothing (${s.exit}): ${s.message.split('\n').pop()}`),
              ...Object.entries(summary.original.agreement).map(([k, a]) => {
                const d = a.first_difference;
                return `  ${k}: ${a.equal}/${Math.max(a.records.plens, a.records.original)} records agree with plens's selection${
                  d ? ` (first difference at ${d.position}: ${d.field} plens ${JSON.stringify(d.plens)}, original ${JSON.stringify(d.original)})` : ''
                }`;
              }),
            ]
          : []),
      ].join('\n'),
    );
  },
};

interface PersonaExportArgs extends GlobalArgs {
  from: string;
  out: string;
  fidelity: 'original' | 'fixed';
  seed: number;
  prompts?: string;
  force: boolean;
  'dry-run': boolean;
}

const exportCommand: CommandModule<GlobalArgs, PersonaExportArgs> = {
  command: 'export',
  describe:
    "Write the selection in the original's formats: merged_posts_remapped.json as Raw_Data_Process.py writes it, and the nine prompt files under the makers' names and line layouts (post_data_store, prediction_task, few_shot_info, the NP-Conv fields)",
  builder: (y) =>
    y
      .option('from', { type: 'string', demandOption: true, describe: 'The PERSONA-bench input file (either format)' })
      .option('out', { type: 'string', demandOption: true, describe: 'Folder for the ten files' })
      .option('fidelity', { choices: ['original', 'fixed'] as const, default: 'original' as const, describe: 'As persona select' })
      .option('seed', { type: 'number', default: 0, describe: 'As persona select' })
      .option('prompts', {
        type: 'string',
        describe: "Prompt records to export (a prompts.jsonl of this input, e.g. from select --original); default: plens's own prompts",
      })
      .option('force', { type: 'boolean', default: false, describe: 'Replace files of the same names in --out that plens did not write' })
      .option('dry-run', { type: 'boolean', default: false, describe: 'Count the lines, write nothing' })
      .example('$0 persona export --from data/personabench-sample/raw.json --out export/', "plens's prompts in the original's files"),
  handler: async (args) => {
    refuseWorkspace(args, 'plens persona export', 'it reads --from and writes --out');
    const { runPersonaExport } = await import('./export-stage.js');
    const summary = await runPersonaExport({
      from: userPath(args.from),
      out: userPath(args.out),
      fidelity: args.fidelity,
      seed: args.seed,
      force: args.force,
      dryRun: args['dry-run'],
      ...(args.prompts ? { prompts: userPath(args.prompts) } : {}),
    });
    printResult(args, summary, () =>
      [
        `${summary.dry_run ? 'would export' : 'exported'} (${summary.fidelity}, seed ${summary.seed}, ${summary.prompts === 'plens' ? "plens's prompts" : summary.prompts}) -> ${summary.out}`,
        ...summary.files.map((f) => `  ${f.name}: ${f.lines} line${f.lines === 1 ? '' : 's'}`),
      ].join('\n'),
    );
  },
};

interface PersonaPredictArgs extends LlmStageArgs {
  model: string;
  from?: string;
  fidelity: 'original' | 'fixed';
  task?: string[];
  setting?: string[];
  samples: number;
  parser?: string[];
  batch?: boolean;
  'batch-fallback'?: string;
  'poll-interval'?: number;
  'batch-size'?: number;
}

const predictCommand: CommandModule<GlobalArgs, PersonaPredictArgs> = {
  command: 'predict',
  describe:
    'Send every prompt record to a model with the original decoding per task (3.1 greedy, 10 tokens; 3.2 greedy, 25; 3.3 n samples at T 0.7, 256) and parse each reply (resumable, cached; unparsed replies and failed calls are kept as states, never values)',
  builder: (y) =>
    llmStageOptions(
      batchFlags(y)
        .option('model', { type: 'string', demandOption: true, describe: 'Model spec, e.g. openai:gpt-4o or sim:default (offline)' })
        .option('from', { type: 'string', describe: 'Prompt records (JSONL); default <workspace>/persona/selection-<fidelity>/prompts.jsonl' })
        .option('fidelity', { choices: ['original', 'fixed'] as const, default: 'original' as const, describe: 'Which selection the prompts come from' })
        .option('task', { type: 'string', array: true, choices: ['3.1', '3.2', '3.3'], describe: 'Only these tasks' })
        .option('setting', { type: 'string', array: true, choices: ['P-Conv', 'P-NonConv', 'NP-Conv'], describe: 'Only these settings' })
        .option('samples', { type: 'number', default: 10, describe: '3.3 samples per prompt (oracle best-of-n); 1 = single-sample mode' })
        .option('parser', {
          type: 'string',
          array: true,
          describe:
            'TASK=VARIANT: 3.1=strict|last-match (default strict, 3.1/GPT.py), 3.2=float-then-last-number|float-only|last-match (default float-then-last-number)',
        }),
      'Predictions',
    )
      .example('$0 persona predict --model sim:default', 'offline')
      .example('$0 persona predict --model openai:gpt-4o --task 3.1 --parser 3.1=last-match --dry-run', 'plan and cost, no key needed')
      .example('$0 persona predict --model openai:gpt-4.1 --batch', 'through the OpenAI Batch API: half price, answers within 24 h; rerun to resume'),
  handler: async (args) => {
    const { runPersonaPredictions } = await import('./predict.js');
    const { formatStageSummary } = await import('../../engine/stage-summary.js');
    const parsers: Record<string, string> = {};
    for (const entry of args.parser ?? []) {
      const m = /^(3\.[123])=(.+)$/.exec(entry);
      if (!m) throw usageError(`--parser ${entry}: write TASK=VARIANT, e.g. 3.1=last-match`);
      parsers[m[1]!] = m[2]!;
    }
    const from = args.from ? userPath(args.from) : join(workspaceOf(args).root, 'persona', `selection-${args.fidelity}`, 'prompts.jsonl');
    const stop = interruptSignal(() => process.stderr.write('\nplens: stopping; finished predictions are kept (Ctrl-C again to quit now)\n'));
    try {
      const { prompts: _templates, ...stage } = llmStageRunOptions(args, stop.signal);
      const batch = resolveBatch({ flags: args });
      const summary = await withStageProgress(args, 'persona predict', () =>
        runPersonaPredictions({
          ...stage,
          ...(batch ? { batch } : {}),
          promptRecords: from,
          model: args.model,
          fidelity: args.fidelity,
          samples: args.samples,
          parsers: parsers as never,
          ...(args.task ? { tasks: args.task as never } : {}),
          ...(args.setting ? { settings: args.setting as never } : {}),
        }),
      );
      printResult(args, summary, () => formatStageSummary({ ...summary, partitions: summary.partitions.map((p) => p.dir) }));
      setStageExitCode(summary);
    } finally {
      stop.dispose();
    }
  },
};

interface PersonaScoreArgs extends GlobalArgs {
  embeddings?: string;
  outputs?: string;
  task?: '3.1' | '3.2' | '3.3';
  out?: string;
  'skip-invalid': boolean;
}

const scoreCommand: CommandModule<GlobalArgs, PersonaScoreArgs> = {
  command: 'score',
  describe:
    "Score the compacted predictions with the original evaluators' metrics: metrics.parquet (3.1 accuracy, F1, MCC; 3.2 MSE, RMSE, MAE; 3.3 ROUGE-1, ROUGE-L, BLEU, METEOR, best-of-n or single-sample; overall and per subreddit) and sample_scores.parquet (each 3.3 reply)",
  builder: (y) =>
    y
      .option('embeddings', {
        type: 'string',
        describe:
          'SBERT (3.3): an OpenAI-compatible embeddings endpoint serving all-MiniLM-L6-v2, as openai:MODEL?base_url=URL[&key_env=VAR] (text-embeddings-inference, vLLM, Ollama, LiteLLM), or a model folder on disk run through transformers.js, as local:FOLDER (config.json, tokenizer.json, tokenizer_config.json, onnx/model.onnx; never downloaded); vectors are cached in <workspace>/cache/embeddings. Without it SBERT is not scored',
      })
      .option('outputs', {
        type: 'string',
        describe:
          "Score an outputs file you already have instead of plens's predictions: one JSON object a line with output, true_label, subreddit (the original batch evaluator's format), scored as LogEval3.1/3.2/3.3 score it; their CSVs are written to --out",
      })
      .option('task', {
        // A string: yargs would read 3.1 as a number.
        type: 'string',
        choices: ['3.1', '3.2', '3.3'] as const,
        describe: 'The task of the --outputs file (which LogEval script to follow)',
      })
      .option('out', { type: 'string', describe: 'Folder for the LogEval CSVs (with --outputs); default <workspace>/persona/logeval' })
      .option('skip-invalid', {
        type: 'boolean',
        default: false,
        describe:
          'With --outputs: skip the lines at which the LogEval script stops with an exception (3.2: a line that is not JSON, a non-text output; 3.3: a line that is not an object) instead of stopping as it does',
      })
      .example('$0 persona score --json', 'write <workspace>/persona/scores/')
      .example('$0 persona score --outputs DS_3.1_Without_results.jsonl --task 3.1', "LogEval3.1's table for a file of model outputs")
      .example(
        '$0 persona score --embeddings "openai:sentence-transformers/all-MiniLM-L6-v2?base_url=http://127.0.0.1:8080/v1"',
        'also score SBERT through a local text-embeddings-inference server',
      )
      .example(
        '$0 persona score --embeddings local:models/all-MiniLM-L6-v2',
        'also score SBERT with a model folder (a clone of Xenova/all-MiniLM-L6-v2), offline',
      ),
  handler: async (args) => {
    if (args.outputs !== undefined) return scoreOutputs(args);
    if (args.task !== undefined) throw usageError('--task goes with --outputs', 'name the outputs file to score with --outputs FILE');
    const { runPersonaScores } = await import('./predict.js');
    const summary = await runPersonaScores({ workspace: workspaceOf(args), ...(args.embeddings ? { embeddings: args.embeddings } : {}) });
    printResult(args, summary, () =>
      [
        `scored -> ${summary.metrics} (${summary.rows} metric rows), ${summary.sample_scores}; SBERT ${summary.sbert === null ? 'not scored (no --embeddings)' : `from ${summary.sbert}`}`,
        ...Object.entries(summary.superseded).map(
          ([partition, n]) => `  ${partition}: ${n} predictions of earlier prompts kept, not scored (the partition's current prompts are in current-keys.json)`,
        ),
      ].join('\n'),
    );
  },
};

async function scoreOutputs(args: PersonaScoreArgs): Promise<void> {
  if (args.task === undefined) throw usageError('--outputs needs --task 3.1, 3.2 or 3.3', 'the LogEval script to follow depends on the task');
  const { runScoreOutputs } = await import('./score-outputs.js');
  const { formatScoreOutputs } = await import('./score-outputs-format.js');
  const workspace = workspaceOf(args);
  const summary = await runScoreOutputs({
    file: userPath(args.outputs!),
    task: args.task,
    out: args.out ? userPath(args.out) : join(workspace.root, 'persona', 'logeval'),
    skipInvalid: args['skip-invalid'],
    cacheDir: join(workspace.root, 'cache', 'embeddings'),
    ...(args.embeddings ? { embeddings: args.embeddings } : {}),
  });
  // --json carries the tables; 3.3's row per line is in the individual CSV, not on stdout.
  const printed =
    summary.logeval.task === '3.3'
      ? { ...summary, logeval: { ...summary.logeval, individual: undefined, individual_rows: summary.logeval.individual.length } }
      : summary;
  printResult(args, printed, () => formatScoreOutputs(summary));
}

export const personaCommand: CommandModule<GlobalArgs, GlobalArgs> = {
  command: 'persona <command>',
  aliases: ['persona-bench'],
  describe:
    'PERSONA-bench (also `plens persona-bench`): import the Reddit conversations, select task samples and build their prompts (or import original prompt files), predict with a model, score with the original metrics',
  builder: (y: Argv<GlobalArgs>) =>
    y
      .command(importCommand)
      .command(selectCommand)
      .command(importPromptsCommand)
      .command(exportCommand)
      .command(predictCommand)
      .command(scoreCommand)
      .demandCommand(1, 'Name a persona command: import, select, import-prompts, export, predict or score.'),
  handler: () => undefined,
};
