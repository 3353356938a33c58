import { spawnSync } from 'node:child_process';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { packageRoot } from '../core/paths.js';
import { benchConstruction } from './construction.js';
import { benchDataset } from './dataset.js';
import { benchDialogues } from './dialogues.js';
import { benchLexical } from './lexical.js';
import { benchPersonaCorpus } from './persona-corpus.js';
import { benchPersonaMetrics } from './persona-metrics.js';
import { benchResults } from './results.js';
import { benchWarehouse } from './warehouse.js';
import { compareWithBaseline, readBaseline, recordBaseline } from './baseline.js';
import { writeBenchSection } from './doc.js';
import { formatBench, type BenchResult } from './report.js';

/**
 * `npm run bench [-- name...]`: runs the benchmarks, prints each figure with its bound, writes
 * each bench's section of docs/benchmarks.md (`--no-doc`: not), and exits non-zero when a bound is
 * missed or a CPU-per-call figure is more than 10% above its baseline (src/bench/baseline.json;
 * `--record-baseline` records this run's as the new one: say why in the commit). Timings live
 * here, never in unit tests.
 */
const dataDir = process.env['PLENS_BENCH_DATA'] ?? resolve(packageRoot, '..', 'shared', 'personalens', 'data');
const BENCHES: Record<string, () => Promise<BenchResult>> = {
  dataset: () => benchDataset(dataDir),
  dialogues: () => benchDialogues(dataDir),
  construction: () => benchConstruction(),
  results: () => benchResults(),
  lexical: () => benchLexical(),
  'persona-metrics': () => benchPersonaMetrics(),
  warehouse: () => benchWarehouse(dataDir),
  'persona-corpus': () => benchPersonaCorpus(),
};
/** Names that stand for several benches (`npm run bench -- persona`). */
const GROUPS: Record<string, string[]> = { persona: ['persona-corpus', 'persona-metrics'] };

const wanted = process.argv
  .slice(2)
  .filter((a) => !a.startsWith('-'))
  .flatMap((a) => GROUPS[a] ?? [a]);
const unknown = wanted.filter((w) => !(w in BENCHES));
if (unknown.length) {
  process.stderr.write(`unknown bench(es): ${unknown.join(', ')}; available: ${[...Object.keys(BENCHES), ...Object.keys(GROUPS)].join(', ')}\n`);
  process.exitCode = 2;
} else {
  const names = wanted.length ? wanted : Object.keys(BENCHES);
  if (!process.argv.includes('--no-banner')) process.stdout.write(`plens bench on ${process.version}, ${(await import('node:os')).cpus().length} CPUs\n`);
  if (names.length === 1) {
    const measured = await BENCHES[names[0]!]!();
    // CPU per call against the recorded baseline: more than 10% above it fails the bench.
    const baselineFile = join(packageRoot, 'src', 'bench', 'baseline.json');
    if (process.argv.includes('--record-baseline')) await recordBaseline(baselineFile, names[0]!, measured);
    const result = compareWithBaseline(names[0]!, measured, readBaseline(baselineFile));
    const { text, passed } = formatBench(result);
    process.stdout.write(`${text}\n`);
    // The current figures live in docs/benchmarks.md: this bench's section is rewritten, the others kept.
    if (!process.argv.includes('--no-doc')) await writeBenchSection(join(packageRoot, 'docs', 'benchmarks.md'), names[0]!, result, Object.keys(BENCHES));
    process.exitCode = passed ? 0 : 1;
  } else {
    // One process per bench: a process's peak RSS is its whole life's, so benches sharing one
    // would each report the largest before them.
    let allPassed = true;
    for (const name of names) {
      const child = spawnSync(
        process.execPath,
        [fileURLToPath(import.meta.url), name, '--no-banner', ...process.argv.slice(2).filter((a) => a === '--no-doc' || a === '--record-baseline')],
        {
          stdio: 'inherit',
        },
      );
      allPassed &&= child.status === 0;
    }
    process.exitCode = allPassed ? 0 : 1;
  }
}
