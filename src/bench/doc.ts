import { existsSync, readFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { writeFileAtomic } from '../core/atomic.js';
import type { BenchResult } from './report.js';

const HEADER = `# Benchmarks

The current figures of \`npm run bench\`, beside their bounds. Each bench rewrites its own section
when it runs (\`npm run bench -- <name>\` one of them, \`npm run bench\` all), so this file always
holds the last measurement of each, never a history. Timings live here and in the bench's output,
never in unit tests.
`;

const begin = (id: string) => `<!-- bench:${id} -->`;
const end = (id: string) => `<!-- /bench:${id} -->`;

const value = (f: BenchResult['figures'][number]) => `${f.value.toFixed(f.unit === 's' || f.unit === 'ms' ? 2 : 0)} ${f.unit}`;

/** One bench's section: its name, what and where it measured, and a row per figure with its bound and verdict. */
export function benchSection(id: string, result: BenchResult, machine = `Node ${process.version}, ${cpus().length} CPUs`): string {
  const rows = result.figures.map((f) => {
    const against = f.bound !== undefined ? `<= ${f.bound} ${f.unit}` : f.min !== undefined ? `>= ${f.min} ${f.unit}` : '';
    const verdict = f.bound !== undefined ? (f.value <= f.bound ? 'PASS' : 'FAIL') : f.min !== undefined ? (f.value >= f.min ? 'PASS' : 'FAIL') : '';
    return `| ${f.name.trim()} | ${value(f)} | ${against} | ${verdict} |`;
  });
  return [
    begin(id),
    `## ${id}`,
    '',
    `${result.name}. ${result.context}. Measured with ${machine} (\`npm run bench -- ${id}\`).`,
    '',
    '| figure | value | bound | |',
    '| --- | ---: | --- | --- |',
    ...rows,
    end(id),
  ].join('\n');
}

/**
 * Puts a bench's section into the document (default docs/benchmarks.md): replaces its earlier
 * section, or adds it in the order `order` gives the benches; every other section stays as it is.
 */
export async function writeBenchSection(file: string, id: string, result: BenchResult, order: readonly string[], machine?: string): Promise<void> {
  const text = existsSync(file) ? readFileSync(file, 'utf8') : HEADER;
  const sections = new Map<string, string>();
  const pattern = /<!-- bench:([\w-]+) -->[\s\S]*?<!-- \/bench:\1 -->/g;
  for (const m of text.matchAll(pattern)) sections.set(m[1]!, m[0]);
  const head = text.split('<!-- bench:')[0]!.trimEnd();
  sections.set(id, benchSection(id, result, machine));
  const ids = [...sections.keys()].sort((a, b) => rank(order, a) - rank(order, b) || a.localeCompare(b));
  await writeFileAtomic(file, `${head}\n\n${ids.map((i) => sections.get(i)!).join('\n\n')}\n`);
}

function rank(order: readonly string[], id: string): number {
  const i = order.indexOf(id);
  return i < 0 ? order.length : i;
}
