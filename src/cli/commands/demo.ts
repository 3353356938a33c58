import type { CommandModule } from 'yargs';
import { userPath } from '../../core/paths.js';
import { interruptSignal } from '../interrupt.js';
import { printResult, showProgress, warehouseOption, workspaceOf, type GlobalArgs } from '../options.js';

interface DemoArgs extends GlobalArgs {
  db: string;
}

export const demoCommand: CommandModule<GlobalArgs, DemoArgs> = {
  command: 'demo',
  describe: 'Run every stage on the bundled sample data (no network, no API keys) and print the tables',
  builder: (y) => warehouseOption(y).example('$0 demo', 'writes ./out and warehouse/plens.duckdb'),
  handler: async (args) => {
    const { runDemo, formatDemo } = await import('../../demo/run-demo.js');
    const stop = interruptSignal(() => process.stderr.write('\nplens: stopping; rerun to resume\n'));
    const result = await runDemo(workspaceOf(args), userPath(args.db), showProgress(args), stop.signal).finally(stop.dispose);
    printResult(
      args,
      { workspace: workspaceOf(args).root, db: result.warehouse.db, files: result.tables.files, scenarios: result.scenarios.scenarios },
      () => formatDemo(result),
    );
  },
};
