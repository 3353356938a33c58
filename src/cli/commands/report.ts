import { join } from 'node:path';
import type { CommandModule } from 'yargs';
import { userPath } from '../../core/paths.js';
import { printResult, requireProjectWarehouse, warehouseOption, workspaceOf, type GlobalArgs } from '../../platform/cli-options.js';

interface ReportArgs extends GlobalArgs {
  db: string;
  out?: string;
  title?: string;
}

/** The report's file in a workspace: `plens report` and a pipeline's report step write the same one. */
export const REPORT_FILE = 'report.html';

export const reportCommand: CommandModule<GlobalArgs, ReportArgs> = {
  command: 'report',
  describe: 'Write one self-contained HTML report of the warehouse: tables, charts, run metadata (works offline)',
  builder: (y) =>
    warehouseOption(y)
      .option('out', { alias: 'o', type: 'string', describe: 'HTML file to write (default: <workspace>/report.html, where a pipeline writes it too)' })
      .option('title', { type: 'string', describe: 'Page title (default: plens report)' })
      .example('$0 report', "the current project's report: after plens make, that run's <workspace>/report.html")
      .example('$0 report --db run.duckdb --out run.html --title "Run 1"', 'another warehouse, file and title'),
  handler: async (args) => {
    const { writeReport } = await import('../../report/report.js');
    const { reportParts } = await import('../../registry/registry.js');
    const result = await writeReport({
      parts: reportParts(),
      dbPath: requireProjectWarehouse(args),
      out: args.out ? userPath(args.out) : join(workspaceOf(args).root, REPORT_FILE),
      ...(args.title !== undefined ? { title: args.title } : {}),
    });
    printResult(
      args,
      result,
      () => `Wrote ${result.file} (${result.charts} chart${result.charts === 1 ? '' : 's'}, ${result.tables} table${result.tables === 1 ? '' : 's'})`,
    );
  },
};
