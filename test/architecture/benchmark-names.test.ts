import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, posix, relative } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { benchmarks } from '../../src/registry/registry.js';

/**
 * A benchmark is a folder and a registry entry (docs/architecture.md): below the registry no file
 * imports a benchmark module, above it only the registry does, and no file outside a benchmark's
 * folder spells one of its steps, tables or workspace folders. The few places that still
 * do are listed below with their reason; an entry no longer needed fails the test, so the list only
 * shrinks.
 */
const srcDir = join(dirname(new URL(import.meta.url).pathname), '..', '..', 'src');

/** Files outside the benchmarks that still name one of a benchmark's names, and why. */
const KNOWN: Record<string, { names: string[]; why: string }> = {
  'llm/sim-persona.ts': { names: ['persona-bench'], why: "the offline simulator plays each benchmark's models from facts on the request" },
  'engine/spend-budget.ts': { names: ['judge', 'persona'], why: 'call roles (`judge:<dimension>`, `persona:<task>`), named by the stages, grouped for spend' },
  'metrics/score-worker.ts': { names: ['scores'], why: "a worker message's field, not PERSONA-bench's step" },
};

/** Folders whose files are a benchmark's own, or entry points and harnesses that may name any. */
const OWN = (file: string) => file.startsWith('benchmarks/') || file.startsWith('bench/') || file.startsWith('testkit/');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sourceFiles(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

const files = new Map(sourceFiles(srcDir).map((f) => [relative(srcDir, f).split('\\').join('/'), readFileSync(f, 'utf8')]));

/** A file's string literals and its relative imports. */
function scan(file: string, text: string): { strings: Set<string>; imports: string[] } {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.ES2022, true);
  const strings = new Set<string>();
  const imports: string[] = [];
  const visit = (node: ts.Node): void => {
    const spec =
      ts.isImportDeclaration(node) || ts.isExportDeclaration(node)
        ? node.moduleSpecifier
        : ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword
          ? node.arguments[0]
          : undefined;
    if (spec && ts.isStringLiteralLike(spec)) {
      if (spec.text.startsWith('.')) imports.push(posix.normalize(posix.join(posix.dirname(file), spec.text)));
    } else if (ts.isStringLiteralLike(node)) strings.add(node.text);
    else if (ts.isTemplateExpression(node)) {
      strings.add(node.head.text);
      for (const s of node.templateSpans) strings.add(s.literal.text);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return { strings, imports };
}

/** Every name a registered benchmark owns: its id, steps, tables and workspace folders (its sections are the pipeline loader's to check). */
function ownedNames(): Map<string, string> {
  const owner = new Map<string, string>();
  for (const b of benchmarks())
    for (const name of [b.id, ...b.steps.map((s) => s.name), ...b.tables.tables.map((t) => t.name), ...b.folders]) owner.set(name, b.id);
  return owner;
}

/** Per file outside the benchmarks, the names of a benchmark it spells. */
function namesOutside(sources: Map<string, string>, owner: Map<string, string>): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const [file, text] of sources) {
    if (OWN(file)) continue;
    const found = [...scan(file, text).strings].filter((s) => owner.has(s)).sort();
    if (found.length) out.set(file, found);
  }
  return out;
}

/** Imports of a benchmark's code by a file outside the benchmarks other than the registry (the harness may). */
function benchmarkImports(sources: Map<string, string>): string[] {
  const out: string[] = [];
  for (const [file, text] of sources) {
    if (OWN(file) || file.startsWith('registry/')) continue;
    for (const to of scan(file, text).imports) if (to.startsWith('benchmarks/')) out.push(`${file} imports ${to}`);
  }
  return out;
}

describe('benchmarks are modules: only their folder and the registry know them', () => {
  it('no file but the registry imports a benchmark', () => {
    expect(files.size).toBeGreaterThan(100);
    expect(benchmarkImports(files)).toEqual([]);
  });

  it("no shared file spells a benchmark's id, steps, tables or folders, but the known ones listed with their reason", () => {
    const found = namesOutside(files, ownedNames());
    const unexpected = [...found].flatMap(([file, names]) => names.filter((n) => !KNOWN[file]?.names.includes(n)).map((n) => `${file}: "${n}"`));
    expect(unexpected).toEqual([]);
    // The list only shrinks: an entry whose name the file no longer spells is taken out.
    const stale = Object.entries(KNOWN).flatMap(([file, k]) => k.names.filter((n) => !found.get(file)?.includes(n)).map((n) => `${file}: "${n}"`));
    expect(stale).toEqual([]);
  });

  it('sees a name in a string, a template and a dynamic import, and names the file', () => {
    const owner = new Map([
      ['dialogues', 'personalens'],
      ['persona_results', 'persona-bench'],
    ]);
    const sources = new Map([
      ['make/x.ts', "const step = 'dialogues';"],
      ['tables/y.ts', 'const q = `SELECT * FROM ${v} persona_results`; const t = `persona_results`;'],
      ['report/z.ts', "const m = await import('../benchmarks/personalens/module.js');"],
      ['benchmarks/personalens/w.ts', "const own = 'dialogues';"],
      ['registry/registry.ts', "import { b } from '../benchmarks/personabench/module.js';"],
    ]);
    expect([...namesOutside(sources, owner)]).toEqual([
      ['make/x.ts', ['dialogues']],
      ['tables/y.ts', ['persona_results']],
    ]);
    expect(benchmarkImports(sources)).toEqual(['report/z.ts imports benchmarks/personalens/module.js']);
  });
});
