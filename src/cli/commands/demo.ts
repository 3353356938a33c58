import { join } from 'node:path';
import type { CommandModule } from 'yargs';
import { packageRoot, userPath } from '../../core/paths.js';
import { interruptSignal } from '../../platform/interrupt.js';
import { printResult, progressIntervalOption, showProgress, type GlobalArgs } from '../../platform/cli-options.js';
import { rememberMake } from '../../platform/current-project.js';

interface DemoArgs extends GlobalArgs {
  db: string;
  'progress-interval'?: number;
}

/** `plens demo` is `plens make all -p pipelines/demo.yaml`, kept as a short name; -w and --db still choose where it writes. */
export const demoCommand: CommandModule<GlobalArgs, DemoArgs> = {
  command: 'demo',
  describe: 'Run every stage on the bundled sample data (no network, no API keys): plens make all -p pipelines/demo.yaml',
  // The demo's own defaults (those of pipelines/demo.yaml), not the shared out/ and warehouse/plens.duckdb.
  builder: (y) =>
    progressIntervalOption(y)
      .option('workspace', {
        alias: 'w',
        type: 'string',
        default: process.env['PLENS_WORKSPACE'] || 'out/demo',
        describe: "Folder for the demo's stage outputs; env PLENS_WORKSPACE",
      })
      .option('db', {
        type: 'string',
        default: process.env['PLENS_WAREHOUSE'] || 'warehouse/demo.duckdb',
        describe: "The demo's DuckDB warehouse; env PLENS_WAREHOUSE",
      })
      .example('$0 demo', 'writes out/demo/, warehouse/demo.duckdb and the report'),
  handler: async (args) => {
    const { loadPipeline } = await import('../../make/pipeline.js');
    const { make, formatMake } = await import('../../make/make.js');
    const { makeProgressView } = await import('../../platform/progress-view.js');
    const view = makeProgressView(args);
    // The demo pipeline reads its paths from these variables, so -w and --db still apply.
    const pipeline = loadPipeline(join(packageRoot, 'pipelines', 'demo.yaml'), {
      ...process.env,
      PLENS_WORKSPACE: userPath(args.workspace),
      PLENS_WAREHOUSE: userPath(args.db),
    });
    // The next plens sql, tables, report ... here read the demo. Its pipeline file is remembered only
    // where it gives these paths by itself (not when -w or --db moved them).
    const plain =
      pipeline.workspace === userPath(process.env['PLENS_WORKSPACE'] || 'out/demo') &&
      pipeline.warehouse === userPath(process.env['PLENS_WAREHOUSE'] || 'warehouse/demo.duckdb');
    rememberMake({ pipeline: plain ? pipeline.file : undefined, workspace: pipeline.workspace, warehouse: pipeline.warehouse }, process.cwd(), process.env);
    const stop = interruptSignal(() => process.stderr.write('\nplens: stopping; finished work is kept, rerun to resume\n'));
    try {
      const quiet = args.json || args.quiet;
      const result = await make(pipeline, {
        targets: ['all'],
        dryRun: false,
        keepGoing: false,
        retryFailed: false,
        progress: showProgress(args),
        ...(view ? { view } : {}),
        signal: stop.signal,
        log: (line) => !quiet && process.stdout.write(line + '\n'),
      });
      printResult(args, { ok: result.failed.length === 0, ...result }, () => formatMake(result));
      if (stop.signal.aborted) process.exitCode = 130;
      else if (result.failed.length > 0) process.exitCode = 1;
    } finally {
      stop.dispose();
    }
  },
};
