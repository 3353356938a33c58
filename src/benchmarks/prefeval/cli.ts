import type { Argv, CommandModule } from 'yargs';
import { userPath } from '../../core/paths.js';
import { printResult, refuseWorkspace, type GlobalArgs } from '../../platform/cli-options.js';

interface ImportArgs extends GlobalArgs {
  from: string;
  topics?: string[];
}

/** `plens prefeval import`: reads and checks a PrefEval release (every topic file and the filler), and says what it holds. */
const importCommand: CommandModule<GlobalArgs, ImportArgs> = {
  command: 'import',
  describe: "Check a PrefEval release's data (explicit preferences per topic, MCQ options, the filler conversations) and count it; writes nothing",
  builder: (y) =>
    (y as Argv<GlobalArgs>)
      .option('from', {
        type: 'string',
        demandOption: true,
        describe: 'A PrefEval checkout (github.com/amazon-science/PrefEval) or its benchmark_dataset folder',
      })
      .option('topics', { type: 'string', array: true, describe: 'Topics, e.g. travel_hotel lifestyle_fit (or travel_hotel,lifestyle_fit; default: all 20)' })
      .example('$0 prefeval import --from ../PrefEval', 'every topic: preferences and filler turns') as Argv<ImportArgs>,
  handler: async (args) => {
    refuseWorkspace(args, 'plens prefeval import', 'it checks the release in --from and writes nothing');
    const { datasetDir, readExplicitTopic, readInterTurns, readMcqTopic, TOPICS } = await import('./data.js');
    const { existsSync } = await import('node:fs');
    const { join } = await import('node:path');
    const from = userPath(args.from);
    const topics = args.topics?.length ? [...new Set(args.topics.map((t) => String(t).trim()).filter(Boolean))] : [...TOPICS];
    // The classification task's options are checked where the release has them.
    const mcq = existsSync(join(datasetDir(from), 'mcq_options'));
    const counts = topics.map((topic) => ({
      topic,
      preferences: readExplicitTopic(from, topic).length,
      ...(mcq ? { mcq_records: readMcqTopic(from, topic, 'explicit').length } : {}),
    }));
    const filler = readInterTurns(from);
    const result = {
      from,
      topics: counts,
      preferences: counts.reduce((n, c) => n + c.preferences, 0),
      mcq_records: mcq ? counts.reduce((n, c) => n + (c.mcq_records ?? 0), 0) : null,
      filler_turns: Math.floor(filler.length / 2),
    };
    printResult(args, result, () =>
      [
        `PrefEval data in ${from}: ${result.preferences} explicit preferences in ${counts.length} topic(s)${mcq ? `, ${result.mcq_records} MCQ records` : ', no MCQ options'}, ${result.filler_turns} filler turns`,
        ...counts.map((c) => `  ${c.topic.padEnd(34)} ${c.preferences}${c.mcq_records === undefined ? '' : `  (${c.mcq_records} MCQ)`}`),
        'Run it with a pipeline: benchmark: prefeval (see pipelines/prefeval-demo.yaml), then plens make -p <pipeline>',
      ].join('\n'),
    );
  },
};

/** PrefEval's commands (`plens prefeval <command>`); its stages run through `plens make`. */
export const prefevalCommand: CommandModule<GlobalArgs, GlobalArgs> = {
  command: 'prefeval <command>',
  describe: 'PrefEval: check a release with import; run and judge the grid with plens make on a prefeval pipeline',
  builder: (y: Argv<GlobalArgs>) => y.command(importCommand).demandCommand(1, 'Name a prefeval command: import.'),
  handler: () => undefined,
};
