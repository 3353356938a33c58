import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, posix, relative } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

/**
 * The layer rule (docs/architecture.md): a folder of src/ may import its own files and those of
 * lower layers only; folders of one layer do not import each other; each benchmark is a layer of
 * its own folder; src/testkit (test servers) is imported by src/bench and the tests, never by a
 * production layer. Every import counts: static, type-only, re-exports and dynamic import().
 */
const LAYERS: string[][] = [
  ['core'],
  ['db'],
  ['llm', 'stats'],
  // The LLM-stage kit (engine/llm-stage.ts) makes clients: the engine sits on the LLM layer.
  // Benchmark-neutral text and score metrics (ROUGE, BLEU, METEOR, tokenisers, classification,
  // regression, embedding similarity) sit beside it, below every benchmark.
  ['engine', 'metrics'],
  ['warehouse'],
  ['tables'],
  // export: a run's cells as eval logs (each benchmark says what its samples are, through platform).
  ['report', 'notebook', 'compare', 'export'],
  // What a benchmark module implements and uses: the Benchmark interface, the pipeline's shared
  // fields, run limits, the make state and the step kit.
  ['platform'],
  // Each benchmark is a folder of its own (benchmarks/<name>), importing no other benchmark.
  ['benchmarks/*'],
  // The one list of benchmarks; everything above it works from the list.
  ['registry'],
  ['make'],
  ['testkit'],
  // src/index.ts: the package's programmatic API (`import { ... } from 'plens'`), beside the CLI.
  ['cli', 'bench', 'index.ts'],
];
/** Layers whose imports of src/testkit are allowed: the benchmarks harness only. */
const TESTKIT_USERS = new Set(['bench']);

const srcDir = join(dirname(new URL(import.meta.url).pathname), '..', '..', 'src');

/** The layer folder of a path under src/ (`benchmarks/<name>` for a benchmark). */
function folderOf(path: string): string {
  const parts = path.split('/');
  return parts[0] === 'benchmarks' ? `benchmarks/${parts[1]}` : parts[0]!;
}

function rankOf(folder: string): number | undefined {
  // Every benchmark folder is in the benchmarks' layer: a new benchmark needs no line here.
  const i = LAYERS.findIndex((layer) => layer.includes(folder) || (folder.startsWith('benchmarks/') && layer.includes('benchmarks/*')));
  return i < 0 ? undefined : i;
}

interface ImportEdge {
  from: string;
  to: string;
  line: number;
}

/** Relative imports of one source file, with computed dynamic imports reported apart (they hide an edge). */
function importsOf(file: string, text: string): { edges: ImportEdge[]; computed: number[] } {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.ES2022, true);
  const edges: ImportEdge[] = [];
  const computed: number[] = [];
  const lineOf = (node: ts.Node) => source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1;
  const add = (node: ts.Node, spec: ts.Expression | undefined) => {
    if (!spec) return;
    if (!ts.isStringLiteralLike(spec)) return computed.push(lineOf(node));
    if (!spec.text.startsWith('.')) return;
    edges.push({ from: file, to: posix.normalize(posix.join(posix.dirname(file), spec.text)), line: lineOf(node) });
  };
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) add(node, node.moduleSpecifier);
    else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) add(node, node.arguments[0]);
    else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) add(node, node.argument.literal as ts.Expression);
    ts.forEachChild(node, visit);
  };
  visit(source);
  return { edges, computed };
}

/** Every breach of the layer rule in a set of files (paths relative to src/, posix). */
function layerViolations(files: Map<string, string>): string[] {
  const out: string[] = [];
  for (const [file, text] of files) {
    const { edges, computed } = importsOf(file, text);
    for (const line of computed) out.push(`${file}:${line}: import() of a computed name (the layer rule cannot see it)`);
    const from = folderOf(file);
    const fromRank = rankOf(from);
    if (fromRank === undefined) {
      out.push(`${file}: folder src/${from} is in no layer (add it to the layer table)`);
      continue;
    }
    for (const edge of edges) {
      if (edge.to.startsWith('..')) {
        out.push(`${file}:${edge.line}: imports ${edge.to}, outside src/`);
        continue;
      }
      const to = folderOf(edge.to);
      if (to === from) continue;
      const toRank = rankOf(to);
      if (to === 'testkit' && !TESTKIT_USERS.has(from))
        out.push(`${file}:${edge.line}: imports the test servers (src/testkit/); only ${[...TESTKIT_USERS].join(', ')} may`);
      else if (toRank === undefined) out.push(`${file}:${edge.line}: imports src/${to}, which is in no layer`);
      else if (toRank >= fromRank)
        out.push(`${file}:${edge.line}: ${from} imports ${to} (${toRank === fromRank ? 'same layer' : 'a higher layer'}): ${edge.to}`);
    }
  }
  return out;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sourceFiles(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

describe('the layer rule', () => {
  it('no file of src/ imports a higher layer, a peer layer, or the test servers', () => {
    const files = new Map(sourceFiles(srcDir).map((f) => [relative(srcDir, f).split('\\').join('/'), readFileSync(f, 'utf8')]));
    expect(files.size).toBeGreaterThan(100);
    expect(layerViolations(files)).toEqual([]);
  });

  it('sees every kind of import: static, type-only, re-export, dynamic, import type', () => {
    const text = [
      "import { a } from '../core/errors.js';",
      "import type { B } from '../warehouse/build.js';",
      "export { C } from '../make/make.js';",
      "const d = await import('../cli/main.js');",
      "type E = import('../report/report.js').Report;",
      "import { parse } from 'yaml';",
    ].join('\n');
    expect(importsOf('tables/x.ts', text).edges.map((e) => `${e.line} ${e.to}`)).toEqual([
      '1 core/errors.js',
      '2 warehouse/build.js',
      '3 make/make.js',
      '4 cli/main.js',
      '5 report/report.js',
    ]);
  });

  it('names each kind of breach with its file and line', () => {
    const files = new Map([
      ['core/workspace.ts', "import { DATASET_FORMAT } from '../benchmarks/personalens/dataset/tables.js';"],
      ['tables/tables.ts', "import { requireWarehouse } from '../warehouse/build.js';"],
      ['warehouse/query.ts', "\nimport type { RenderableTable } from '../tables/render.js';"],
      ['llm/client.ts', "import { x } from '../stats/lexical.js';\nimport { startMockLlm } from '../testkit/mock-server.js';"],
      ['benchmarks/personabench/a.ts', "import { b } from '../personalens/b.js';"],
      ['make/make.ts', 'const m = await import(REPORT_MODULE);'],
      ['bench/dialogues.ts', "import { startMockLlm } from '../testkit/mock-server.js';"],
      ['extra/x.ts', ''],
    ]);
    expect(layerViolations(files)).toEqual([
      'core/workspace.ts:1: core imports benchmarks/personalens (a higher layer): benchmarks/personalens/dataset/tables.js',
      'warehouse/query.ts:2: warehouse imports tables (a higher layer): tables/render.js',
      'llm/client.ts:1: llm imports stats (same layer): stats/lexical.js',
      'llm/client.ts:2: imports the test servers (src/testkit/); only bench may',
      'benchmarks/personabench/a.ts:1: benchmarks/personabench imports benchmarks/personalens (same layer): benchmarks/personalens/b.js',
      'make/make.ts:1: import() of a computed name (the layer rule cannot see it)',
      'extra/x.ts: folder src/extra is in no layer (add it to the layer table)',
    ]);
  });
});
