import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { parse as parseCsv } from 'csv-parse/sync';
import type { Argv } from 'yargs';
import type yargsEsm from 'yargs';
import { beforeAll, describe, expect, it } from 'vitest';
import { listParsing, splitList } from '../../src/cli/conventions.js';
import { buildCli } from '../../src/cli/main.js';
import { ExitCode } from '../../src/core/errors.js';
import { globalOptions } from '../../src/platform/cli-options.js';
import { repoRoot, runCli, runCliJson, sampleDir, tempDir } from '../helpers/cli.js';
import { sampleWorkspace } from '../helpers/workspace.js';

/*
 * The conventions every command follows, checked over the yargs definitions themselves: a command
 * added later is walked too. Each command's builder runs on a fresh instance with the shared
 * options, as yargs does when the command runs.
 */

const yargs = createRequire(import.meta.url)('yargs') as typeof yargsEsm;

type Options = {
  key: Record<string, boolean>;
  alias: Record<string, string[]>;
  array: string[];
  number: string[];
  string: string[];
  choices: Record<string, unknown[]>;
};
type Handler = { builder?: unknown; original: string };
const handlersOf = (y: Argv) =>
  (y as unknown as { getInternalMethods(): { getCommandInstance(): { getCommandHandlers(): Record<string, Handler> } } })
    .getInternalMethods()
    .getCommandInstance()
    .getCommandHandlers();
const optionsOf = (y: Argv) => (y as unknown as { getOptions(): Options }).getOptions();

interface Walked {
  path: string;
  instance: Argv;
  options: Options;
  leaf: boolean;
}

function walk(y: Argv, path: string[] = []): Walked[] {
  const out: Walked[] = [];
  for (const [name, h] of Object.entries(handlersOf(y))) {
    const fresh = globalOptions(yargs([]));
    const built = typeof h.builder === 'function' ? ((h.builder as (y: Argv) => Argv | undefined)(fresh) ?? fresh) : fresh;
    const below = walk(built, [...path, name]);
    out.push({ path: [...path, name].join(' '), instance: built, options: optionsOf(built), leaf: below.length === 0 }, ...below);
  }
  return out;
}

const commands = walk(buildCli([]));
const leaves = commands.filter((c) => c.leaf);

/** The long name of each option, with its short aliases. */
function shortFlags(o: Options): Array<[short: string, long: string]> {
  const out: Array<[string, string]> = [];
  for (const [name, aliases] of Object.entries(o.alias)) {
    if (name.length === 1) continue;
    for (const a of aliases) if (a.length === 1) out.push([a, name]);
  }
  return out;
}

/**
 * What each command does with -w: uses it as its workspace (and finds the warehouse built from it),
 * refuses it (it has no workspace), takes it as the workspace its pipeline must have (make, status),
 * or has its own (demo). A new command must be put here: -w is never accepted and ignored.
 */
const WORKSPACE: Record<string, 'uses' | 'refuses' | 'pipeline' | 'own'> = {
  import: 'uses',
  'import-legacy': 'uses',
  scenarios: 'uses',
  dialogues: 'uses',
  judge: 'uses',
  'prompts import-original': 'refuses',
  'annotate export': 'uses',
  'annotate import': 'uses',
  warehouse: 'uses',
  sql: 'uses',
  notebook: 'uses',
  tables: 'uses',
  compare: 'uses',
  report: 'uses',
  export: 'uses',
  'stats lexical': 'refuses',
  demo: 'own',
  make: 'pipeline',
  status: 'pipeline',
  'batches drop': 'uses',
  'personalens import': 'uses',
  'personalens import-legacy': 'uses',
  'personalens scenarios': 'uses',
  'personalens dialogues': 'uses',
  'personalens judge': 'uses',
  'personalens prompts import-original': 'refuses',
  'personalens annotate export': 'uses',
  'personalens annotate import': 'uses',
  'persona import': 'uses',
  'persona select': 'uses',
  'persona import-prompts': 'uses',
  'persona export': 'refuses',
  'persona predict': 'uses',
  'persona score': 'uses',
  'prefeval import': 'refuses',
};

/** Options that are lists of name=value pairs, not list flags: a space would swallow the positional after them. */
const KEY_VALUE_SPECS = new Set(['compare a', 'compare where', 'export where', 'import-legacy setting-map', 'personalens import-legacy setting-map']);

describe('the conventions of every command (walked from the yargs definitions)', () => {
  it('finds every command, nested ones included', () => {
    const paths = commands.map((c) => c.path);
    for (const p of ['sql', 'make', 'notebook', 'stats lexical', 'persona predict', 'batches drop', 'personalens annotate export']) expect(paths).toContain(p);
  });

  it('each short flag means one long option in every command (-p is --pipeline, -P --param, -w --workspace)', () => {
    const meaning = new Map<string, Set<string>>();
    const where = new Map<string, string[]>();
    for (const c of commands)
      for (const [short, long] of shortFlags(c.options)) {
        meaning.set(short, (meaning.get(short) ?? new Set()).add(long));
        where.set(`${short}=${long}`, [...(where.get(`${short}=${long}`) ?? []), c.path]);
      }
    const clashes = [...meaning]
      .filter(([, longs]) => longs.size > 1)
      .map(([s, longs]) => `-${s}: ${[...longs].map((l) => `--${l} (${where.get(`${s}=${l}`)!.join(', ')})`).join(' vs ')}`);
    expect(clashes).toEqual([]);
    expect([...meaning.get('p')!]).toEqual(['pipeline']);
    expect([...meaning.get('P')!]).toEqual(['param']);
    expect([...meaning.get('w')!]).toEqual(['workspace']);
    expect([...meaning.get('o')!]).toEqual(['out']);
  });

  it('every list option takes commas and spaces alike (through the same middleware the CLI runs)', () => {
    let checked = 0;
    for (const c of commands) {
      const aliases = new Set(Object.values(c.options.alias).flat());
      for (const name of c.options.array) {
        if (aliases.has(name)) continue;
        const choices = c.options.choices[name];
        const [a, b] = choices && choices.length >= 2 ? choices.map(String) : c.options.number.includes(name) ? ['1', '2'] : ['a', 'b'];
        const config = { type: c.options.number.includes(name) ? ('number' as const) : ('string' as const), array: true, ...(choices ? { choices } : {}) };
        const parse = (tokens: string[]) =>
          yargs([])
            .option(name, config)
            .middleware(listParsing as never, true)
            .strict()
            .exitProcess(false)
            .fail((message, error) => {
              throw error ?? new Error(`${c.path} --${name}: ${message}`);
            })
            .parseSync(tokens)[name];
        const spaced = parse([`--${name}`, a!, b!]);
        expect(parse([`--${name}`, `${a},${b}`]), `${c.path} --${name}`).toEqual(spaced);
        expect(parse([`--${name}`, `${a}, ${b}`]), `${c.path} --${name}`).toEqual(spaced);
        expect(spaced).toHaveLength(2);
        checked++;
      }
    }
    expect(checked).toBeGreaterThanOrEqual(15);
  });

  it('no option asks for a comma-separated string: lists are list options', () => {
    const strings: string[] = [];
    for (const c of commands) {
      const described = (c.instance as unknown as { getInternalMethods(): { getUsageInstance(): { getDescriptions(): Record<string, string> } } })
        .getInternalMethods()
        .getUsageInstance()
        .getDescriptions();
      for (const [name, text] of Object.entries(described))
        if (/comma-separated|comma separated/i.test(text ?? '') && !c.options.array.includes(name) && !KEY_VALUE_SPECS.has(`${c.path} ${name}`))
          strings.push(`${c.path} --${name}`);
    }
    expect(strings).toEqual([]);
  });

  it('name=value lists split only before another name=, so a value may hold commas', () => {
    expect(splitList(['n=1,title=a,b', 'x=2'])).toEqual(['n=1', 'title=a,b', 'x=2']);
    expect(splitList(['3.1=last-match,3.2=first-number'])).toEqual(['3.1=last-match', '3.2=first-number']);
    expect(splitList(['openai:gpt-4o?temperature=0,sim:default'])).toEqual(['openai:gpt-4o?temperature=0', 'sim:default']);
    expect(splitList(['base,base+all', 'vanilla'])).toEqual(['base', 'base+all', 'vanilla']);
  });

  it('every command has --json, and -w/--workspace; every command that uses a warehouse has --db and -p/--pipeline', () => {
    for (const c of leaves) {
      expect(c.options.key['json'], c.path).toBe(true);
      expect(c.options.alias['workspace'], c.path).toContain('w');
      if (c.options.key['db'] && c.path !== 'demo') expect(c.options.alias['pipeline'], c.path).toContain('p');
    }
  });

  it('every command has decided what -w means (uses it, refuses it, or takes it as its pipeline workspace)', () => {
    expect(leaves.map((c) => c.path).sort()).toEqual(Object.keys(WORKSPACE).sort());
  });

  it('--help lists every exit code', async () => {
    const r = await runCli(['--help']);
    const epilog = r.stdout.slice(r.stdout.indexOf('Exit codes:')).replace(/\s+/g, ' ');
    for (const code of [...Object.values(ExitCode), 130]) expect(epilog).toMatch(new RegExp(`[ :]${code} [a-zA-Z]`));
  });
});

describe('-w in every command: honoured, or refused with a clear error', () => {
  /** The least each command needs to reach its workspace. */
  const sample = (file: string) => join(repoRoot, 'data', file);
  const promptFile = join(repoRoot, 'test', 'fixtures', 'personabench', 'prompts', 'WithConversationPrompts_ScorePrediction_Refactored.jsonl');
  const ARGS: Record<string, string[]> = {
    import: ['--from', sampleDir],
    'import-legacy': [join(repoRoot, 'test', 'fixtures', 'legacy', 'output')],
    scenarios: [],
    dialogues: ['--assistant', 'sim:default'],
    judge: ['--judge', 'sim:default'],
    'prompts import-original': [join(repoRoot, '..', 'nowhere'), '--out', join(tempDir(), 'prompts')],
    'annotate export': ['--n', '2', '--seed', '1'],
    'annotate import': [join(tempDir(), 'labels.jsonl')],
    warehouse: [],
    sql: ['select 1'],
    notebook: [join(repoRoot, 'notebooks', 'cost.md')],
    tables: [],
    compare: ['setting=base', 'setting=base+all'],
    report: [],
    export: [],
    'stats lexical': ['-i', join(tempDir(), 'u.jsonl')],
    'batches drop': ['b-0000'],
    'persona import': ['--from', sample('personabench-sample/raw.json')],
    'persona select': ['--from', sample('personabench-sample/raw.json')],
    'persona import-prompts': [promptFile],
    'persona export': ['--from', sample('personabench-sample/raw.json'), '--out', join(tempDir(), 'export')],
    'persona predict': ['--model', 'sim:default'],
    'persona score': [],
    'prefeval import': ['--from', join(tempDir(), 'prefeval')],
  };

  // The same commands under their benchmark's own name take the same arguments.
  const argsOf = (path: string) => ARGS[path.replace(/^personalens /, '')];

  it.each(leaves.filter((c) => WORKSPACE[c.path] === 'uses' || WORKSPACE[c.path] === 'refuses').map((c) => c.path))('%s', async (path) => {
    const args = argsOf(path);
    expect(args, `no arguments for ${path} in this test`).toBeDefined();
    const ws = join(tempDir('plens-w-'), 'ws');
    const r = await runCli([...path.split(' '), ...args!, '-w', ws, '--no-progress']);
    const said = r.stdout + r.stderr;
    if (WORKSPACE[path] === 'refuses') {
      expect(r.code, said).toBe(2);
      expect(r.stderr).toMatch(/takes no workspace \(-w\): /);
      return;
    }
    // Either it wrote there or it says it looked there: never out/ instead.
    expect(existsSync(ws) || said.includes(ws), `${path}: ${said}`).toBe(true);
    expect(said).not.toContain(join(repoRoot, 'out'));
  });
});

describe('the surface on a real warehouse', () => {
  let ws: string;
  let db: string;

  beforeAll(async () => {
    ws = await sampleWorkspace(['--users', '0-1']);
    db = join(ws, '..', 'w.duckdb');
    const r = await runCli(['warehouse', '-w', ws, '--db', db, '-q']);
    expect(r.code, r.stderr).toBe(0);
  });

  it('tables --format csv on stdout is one valid CSV table; several are refused with the names and --out-dir', async () => {
    const one = await runCli(['tables', '--db', db, '--only', 'table1', '--format', 'csv']);
    expect(one.code, one.stderr).toBe(0);
    expect(one.stdout).not.toMatch(/^#/m);
    const rows = parseCsv(one.stdout, { relax_column_count: false }) as string[][];
    expect(rows[0]).toContain('domain');
    expect(rows.length).toBeGreaterThan(2);
    expect(new Set(rows.map((r) => r.length)).size).toBe(1);

    const all = await runCli(['tables', '--db', db, '--format', 'csv']);
    expect(all.code).toBe(2);
    expect(all.stdout).toBe('');
    expect(all.stderr).toContain('CSV on stdout holds one table');
    expect(all.stderr).toMatch(/--only NAME \(table1, /);
    expect(all.stderr).toContain('--out-dir DIR');
    expect((await runCli(['tables', '--db', db, '--only', 'table1', 'table6_7', '--format', 'csv'])).code).toBe(2);

    // The hint works: one file per table.
    const dir = join(tempDir(), 'csv');
    const files = await runCli(['tables', '--db', db, '--format', 'csv', '--out-dir', dir]);
    expect(files.code, files.stderr).toBe(0);
    expect(readdirSync(dir)).toContain('table1.csv');
  });

  it('list flags take commas and spaces alike, end to end (tables --only, scenarios --users)', async () => {
    const comma = await runCliJson<{ tables: Array<{ name: string }> }>(['tables', '--db', db, '--only', 'table1,table6_7']);
    const space = await runCliJson<{ tables: Array<{ name: string }> }>(['tables', '--db', db, '--only', 'table1', 'table6_7']);
    expect(comma.json.tables.map((t) => t.name)).toEqual(['table1', 'table6_7']);
    expect(space.json).toEqual(comma.json);
    const a = await runCliJson<{ selected: number }>(['scenarios', '-w', ws, '--users', '0,1', '--dry-run']);
    const b = await runCliJson<{ selected: number }>(['scenarios', '-w', ws, '--users', '0', '1', '--dry-run']);
    expect(a.code, a.stderr).toBe(0);
    const { elapsed_ms: _a, ...same } = a.json as Record<string, unknown>;
    const { elapsed_ms: _b, ...also } = b.json as Record<string, unknown>;
    expect(also).toEqual(same);
    expect(JSON.stringify(same)).toContain('"users":[0,1]');
  });

  it('sql has one JSON switch: --json, with --format json the same', async () => {
    const q = 'select domain from table1 order by domain limit 2';
    const json = await runCli(['sql', q, '--db', db, '--json']);
    const format = await runCli(['sql', q, '--db', db, '--format', 'json']);
    expect(json.code).toBe(0);
    expect(format.stdout).toBe(json.stdout);
    expect(JSON.parse(json.stdout)).toHaveLength(2);
    // tables too: --format json is --json.
    const t1 = await runCli(['tables', '--db', db, '--only', 'table1', '--json']);
    const t2 = await runCli(['tables', '--db', db, '--only', 'table1', '--format', 'json']);
    expect(t2.stdout).toBe(t1.stdout);
    expect(JSON.parse(t1.stdout).ok).toBe(true);
  });

  it('the commands that print data print one JSON document with --json', async () => {
    const nb = join(tempDir(), 'nb.md');
    writeFileSync(nb, '```sql\nselect 1 as one;\n```\n');
    const out = tempDir();
    for (const args of [
      ['sql', 'select 1 as x', '--db', db],
      ['tables', '--db', db],
      ['notebook', nb, '--db', db, '-o', join(out, 'nb.out.md')],
      ['report', '--db', db, '-o', join(out, 'r.html')],
      ['warehouse', '-w', ws, '--db', db, '--dry-run'],
    ]) {
      const r = await runCli([...args, '--json']);
      expect(r.code, `${args[0]}: ${r.stderr}`).toBe(0);
      expect(() => JSON.parse(r.stdout), `${args[0]} --json`).not.toThrow();
    }
  });

  it('notebook: -P sets a parameter; -p is --pipeline, and a name=value after it is explained', async () => {
    const nb = join(tempDir(), 'p.md');
    writeFileSync(nb, "---\nparams:\n  n: 1\n  who: x\n---\n\n```sql\nselect getvariable('n') + 1 as m, getvariable('who') as who;\n```\n");
    const r = await runCli(['notebook', nb, '--db', db, '-o', '-', '-P', 'n=41,who=a,b']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/\| +42 \| a,b +\|/);
    const wrong = await runCli(['notebook', nb, '--db', db, '-o', '-', '-p', 'n=41']);
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toContain('-p is --pipeline');
    expect(wrong.stderr).toContain('-P/--param name=value');
  });

  it('colours errors on a terminal (FORCE_COLOR stands in for one), never with NO_COLOR or on a pipe', async () => {
    const args = ['sql', 'select 1', '--db', join(tempDir(), 'none.duckdb')];
    const red = '\u001b[31merror E_PREREQUISITE\u001b[39m';
    const forced = await runCli(args, { env: { FORCE_COLOR: '1', NO_COLOR: '' } });
    expect(forced.code).toBe(4);
    expect(forced.stderr).toContain(red);
    expect(forced.stderr).toContain('\u001b[36mhint\u001b[39m');
    const none = await runCli(args, { env: { FORCE_COLOR: '1', NO_COLOR: '1' } });
    expect(none.stderr).not.toContain('\u001b[');
    expect(none.stderr).toContain('plens: error E_PREREQUISITE');
    const piped = await runCli(args, { env: { FORCE_COLOR: '', NO_COLOR: '' } });
    expect(piped.stderr).not.toContain('\u001b[');
    const help = await runCli(['--help'], { env: { FORCE_COLOR: '1', NO_COLOR: '' } });
    expect(help.stdout).toContain('\u001b[1mCommands:\u001b[22m');
  });

  it('a warehouse of a workspace with outputs: the hint is plens warehouse with the flags it needs, and it works', async () => {
    const other = join(tempDir(), 'other.duckdb');
    const cwd = tempDir();
    mkdirSync(join(cwd, 'x'));
    const r = await runCli(['tables', '-w', ws, '--db', other], { cwd });
    expect(r.code).toBe(4);
    const hint = /`(plens warehouse[^`]*)`/.exec(r.stderr)?.[1];
    expect(hint, r.stderr).toBe(`plens warehouse -w ${ws} --db ${other}`);
    const built = await runCli([...hint!.split(' ').slice(1), '--lexical', 'none', '-q'], { cwd });
    expect(built.code, built.stderr).toBe(0);
    expect((await runCli(['tables', '-w', ws, '--db', other, '-q'], { cwd })).code).toBe(0);
  });
});
