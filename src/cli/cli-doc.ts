/**
 * docs/cli.md, generated from the yargs definitions: every command, its arguments, its options
 * (type, default, description), its examples and the exit codes. `npm run docs:cli` writes the
 * file; `node dist/cli/cli-doc.js --check` (and test/cli/cli-doc.test.ts) fails when it differs.
 *
 * The walk runs each command's builder on a fresh yargs instance that has the shared options,
 * as yargs itself does when the command runs, and reads back what the builder declared.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Argv } from 'yargs';
import type yargsEsm from 'yargs';

/** The CommonJS build, as main.ts uses it (same API). */
const yargs = createRequire(import.meta.url)('yargs') as typeof yargsEsm;

export interface OptionDoc {
  name: string;
  aliases: string[];
  type: string;
  default: string;
  choices: string[];
  required: boolean;
  deprecated: boolean;
  description: string;
}

export interface ExampleDoc {
  command: string;
  description: string;
}

export interface CommandDoc {
  /** The words that name it: `['persona', 'import']`. */
  path: string[];
  /** The command as declared, with its arguments: `import-legacy <output-dir>`. */
  command: string;
  description: string;
  aliases: string[];
  positionals: OptionDoc[];
  options: OptionDoc[];
  examples: ExampleDoc[];
  epilog: string[];
  subcommands: CommandDoc[];
  /** When the same command is also registered elsewhere (a benchmark's stage kept at the top level). */
  sameAs?: string[];
}

export interface CliDoc {
  /** The text `plens --help` opens with, without its usage line. */
  about: string;
  /** What every command accepts. */
  globalOptions: OptionDoc[];
  commands: CommandDoc[];
  /** The exit codes, as `plens --help` lists them: [code, meaning]. */
  exitCodes: Array<[string, string]>;
  /** The rest of the top-level epilog (after the exit codes). */
  epilog: string[];
}

interface Handler {
  builder?: ((y: Argv) => Argv | undefined) | Record<string, unknown>;
}

type Internal = {
  getCommandInstance(): { getCommandHandlers(): Record<string, Handler> };
  getUsageInstance(): {
    getCommands(): Array<[string, string | false, boolean, string[], boolean]>;
    getDescriptions(): Record<string, string | undefined>;
    getPositionalGroupName(): string;
  };
};

const internal = (y: Argv) => (y as unknown as { getInternalMethods(): Internal }).getInternalMethods();

type Options = {
  key: Record<string, boolean>;
  alias: Record<string, string[]>;
  array: string[];
  boolean: string[];
  string: string[];
  number: string[];
  count: string[];
  default: Record<string, unknown>;
  defaultDescription: Record<string, string | undefined>;
  choices: Record<string, unknown[]>;
  demandedOptions: Record<string, unknown>;
  deprecatedOptions: Record<string, unknown>;
  hiddenOptions: string[];
};

const YARGS_STRING = '__yargsString__:';

function valueText(value: unknown): string {
  if (value === undefined) return '';
  if (Array.isArray(value)) return value.map(valueText).join(' ');
  if (typeof value === 'string') return value;
  return JSON.stringify(value);
}

/** The options an instance declares, by name (aliases folded in), with `help` and `version` left out. */
function optionsOf(y: Argv): Map<string, OptionDoc> {
  const o = (y as unknown as { getOptions(): Options }).getOptions();
  const descriptions = internal(y).getUsageInstance().getDescriptions();
  const aliasOf = new Set(Object.values(o.alias).flat());
  const hidden = new Set(o.hiddenOptions);
  const out = new Map<string, OptionDoc>();
  for (const name of Object.keys(o.key)) {
    if (aliasOf.has(name) || name === 'help' || name === 'version' || hidden.has(name)) continue;
    const base = o.boolean.includes(name)
      ? 'boolean'
      : o.number.includes(name)
        ? 'number'
        : o.count.includes(name)
          ? 'count'
          : o.string.includes(name)
            ? 'string'
            : '';
    const kind = base || (o.choices[name] ? 'choice' : 'value');
    const type = o.array.includes(name) ? `${kind} list` : base || (o.choices[name] ? 'choice' : '');
    const description = (descriptions[name] ?? '').replace(YARGS_STRING, '');
    out.set(name, {
      name,
      aliases: [...(o.alias[name] ?? [])].sort((a, b) => a.length - b.length || a.localeCompare(b)),
      type,
      default: o.defaultDescription[name] ?? valueText(o.default[name]),
      choices: (o.choices[name] ?? []).map(valueText),
      required: name in o.demandedOptions,
      deprecated: name in o.deprecatedOptions,
      description,
    });
  }
  return out;
}

/** A fresh instance as yargs makes one for a command: the shared options and nothing else. */
async function freshInstance(): Promise<Argv> {
  const { globalOptions } = await import('../platform/cli-options.js');
  return globalOptions(yargs([])) as unknown as Argv;
}

function sameOption(a: OptionDoc, b: OptionDoc): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

async function describeCommand(
  path: string[],
  entry: [string, string | false, boolean, string[], boolean],
  handler: Handler,
  globals: Map<string, OptionDoc>,
  seen: Map<unknown, string[]>,
): Promise<CommandDoc> {
  const [command, description, , aliases] = entry;
  const doc: CommandDoc = {
    path,
    command,
    description: description || '',
    aliases: [...aliases],
    positionals: [],
    options: [],
    examples: [],
    epilog: [],
    subcommands: [],
  };
  const owner = handler.builder === undefined ? undefined : seen.get(handler.builder);
  if (owner && owner.join(' ') !== path.join(' ')) {
    doc.sameAs = owner;
    return doc;
  }
  if (handler.builder !== undefined) seen.set(handler.builder, path);
  let y = await freshInstance();
  // Examples and epilogues have no getter: record them as the builder declares them.
  const patched = y as unknown as Record<string, (...args: unknown[]) => unknown>;
  const example = patched['example']!.bind(y);
  patched['example'] = (cmd: unknown, desc?: unknown) => {
    const list = Array.isArray(cmd) ? (cmd as Array<[string, string?]>) : [[cmd as string, desc as string | undefined]];
    for (const [c, d] of list) doc.examples.push({ command: String(c).replace(/\$0/g, 'plens'), description: d ?? '' });
    return example(cmd, desc);
  };
  for (const name of ['epilog', 'epilogue']) {
    const original = patched[name]!.bind(y);
    patched[name] = (text: unknown) => {
      doc.epilog.push(String(text).replace(/\$0/g, 'plens'));
      return original(text);
    };
  }
  if (typeof handler.builder === 'function') y = handler.builder(y) ?? y;
  else if (handler.builder) y = y.options(handler.builder as Record<string, never>);
  const positionalGroup = new Set(
    (y as unknown as { getGroups(): Record<string, string[]> }).getGroups()[internal(y).getUsageInstance().getPositionalGroupName()] ?? [],
  );
  for (const option of optionsOf(y).values()) {
    if (positionalGroup.has(option.name)) doc.positionals.push(option);
    else if (!globals.has(option.name) || !sameOption(option, globals.get(option.name)!)) doc.options.push(option);
  }
  doc.subcommands = await describeCommands(y, path, globals, seen);
  return doc;
}

async function describeCommands(y: Argv, path: string[], globals: Map<string, OptionDoc>, seen: Map<unknown, string[]>): Promise<CommandDoc[]> {
  const handlers = internal(y).getCommandInstance().getCommandHandlers();
  const entries = internal(y).getUsageInstance().getCommands();
  const named = entries.map((entry) => ({ entry, name: entry[0].split(/\s+/)[0]! })).filter(({ name }) => handlers[name]);
  // Register every command of this level first, so that a command registered here and again in a
  // group below is documented here and referred to there.
  for (const { name } of named) {
    const builder = handlers[name]!.builder;
    if (builder !== undefined && !seen.has(builder)) seen.set(builder, [...path, name]);
  }
  const docs: CommandDoc[] = [];
  for (const { entry, name } of named) {
    docs.push(await describeCommand([...path, name], entry, handlers[name]!, globals, seen));
  }
  return docs;
}

/** Everything docs/cli.md says, read from the CLI's yargs definitions. */
export async function describeCli(): Promise<CliDoc> {
  const { buildCli } = await import('./main.js');
  const root = buildCli([]);
  const globals = optionsOf(await freshInstance());
  const commands = await describeCommands(root, [], globals, new Map());
  // The top-level usage and epilogue have no getter either; read them from the help text, unwrapped.
  const help = await root.wrap(null).getHelp();
  const blocks = help.split(/\n\s*\n/);
  const about = blocks
    .slice(
      1,
      blocks.findIndex((b) => /^Commands:/.test(b)),
    )
    .join('\n\n')
    .trim();
  const last = blocks.at(-1)!.trim().split('\n');
  const exitLine = last.find((l) => l.startsWith('Exit codes:')) ?? '';
  const exitCodes = exitLine
    .replace(/^Exit codes:\s*/, '')
    .replace(/\.$/, '')
    .split(/,\s*(?=\d+\s)/)
    .map((part) => {
      const m = /^(\d+)\s+(.*)$/.exec(part.trim());
      return [m?.[1] ?? '', m?.[2] ?? part.trim()] as [string, string];
    })
    .filter(([code]) => code !== '');
  return { about, globalOptions: [...globals.values()], commands, exitCodes, epilog: last.filter((l) => l !== exitLine) };
}

// ---------------------------------------------------------------------------------------------
// Markdown

/** Prose for Markdown: `<` and `>` outside code spans as entities, so `<workspace>` is not read as HTML. */
function prose(text: string): string {
  return text
    .split(/(`[^`]+`)/)
    .map((part, i) => (i % 2 === 1 ? part : part.replace(/</g, '&lt;').replace(/>/g, '&gt;')))
    .join('');
}

/** A table cell: one line, pipes escaped. */
function cell(text: string): string {
  return text
    .replace(/\s*\n\s*/g, ' ')
    .replace(/\|/g, '\\|')
    .trim();
}

function code(text: string): string {
  if (text === '') return '';
  const ticks = text.includes('`') ? '``' : '`';
  const pad = text.startsWith('`') || text.endsWith('`') ? ' ' : '';
  return `${ticks}${pad}${text}${pad}${ticks}`;
}

function flags(o: OptionDoc, positional: boolean): string {
  if (positional) return code(o.name);
  const names = [...o.aliases.filter((a) => a.length === 1), o.name, ...o.aliases.filter((a) => a.length > 1)];
  return names.map((n) => code(n.length === 1 ? `-${n}` : `--${n}`)).join(', ');
}

function optionTable(options: OptionDoc[], positional: boolean): string[] {
  const head = positional ? '| argument | type | default | description |' : '| option | type | default | description |';
  const lines = [head, '|---|---|---|---|'];
  for (const o of options) {
    const notes: string[] = [];
    if (o.required) notes.push('required');
    if (o.deprecated) notes.push('deprecated');
    if (o.choices.length > 0) notes.push(`one of: ${o.choices.map(code).join(', ')}`);
    const description = [o.description, notes.length > 0 ? `(${notes.join('; ')})` : ''].filter(Boolean).join(' ');
    lines.push(`| ${flags(o, positional)} | ${cell(o.type)} | ${cell(code(o.default))} | ${cell(prose(description))} |`);
  }
  return lines;
}

/** The anchor GitHub gives a heading. */
function anchor(heading: string): string {
  return heading
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .trim()
    .replace(/\s/g, '-');
}

function title(doc: CommandDoc): string {
  return `plens ${doc.path.join(' ')}`;
}

function flatten(docs: CommandDoc[]): CommandDoc[] {
  return docs.flatMap((d) => [d, ...flatten(d.subcommands)]);
}

function renderCommand(doc: CommandDoc): string[] {
  const out = [`## ${title(doc)}`, ''];
  if (doc.sameAs) {
    const other = `plens ${doc.sameAs.join(' ')}`;
    out.push(`The same command as [${other}](#${anchor(other)}).`, '');
    return out;
  }
  const usage = ['plens', ...doc.path.slice(0, -1), doc.command].join(' ');
  out.push(cell(prose(doc.description)), '', `Usage: ${code(usage)}`);
  if (doc.aliases.length > 0) out.push('', `Also: ${doc.aliases.map((a) => code(['plens', ...doc.path.slice(0, -1), a].join(' '))).join(', ')}`);
  out.push('');
  if (doc.subcommands.length > 0) {
    out.push('| subcommand | what it does |', '|---|---|');
    for (const s of doc.subcommands) out.push(`| [${code(s.command)}](#${anchor(title(s))}) | ${cell(prose(s.description))} |`);
    out.push('');
  }
  if (doc.positionals.length > 0) out.push(...optionTable(doc.positionals, true), '');
  if (doc.options.length > 0) out.push(...optionTable(doc.options, false), '');
  if (doc.examples.length > 0) {
    out.push('Examples:', '', '```sh');
    for (const e of doc.examples) out.push(e.description ? `${e.command}   # ${e.description.replace(/\s*\n\s*/g, ' ')}` : e.command);
    out.push('```', '');
  }
  for (const e of doc.epilog) out.push(prose(e), '');
  return out;
}

/** docs/cli.md's text. */
export function renderCliDoc(cli: CliDoc): string {
  const all = flatten(cli.commands);
  const out = [
    '# CLI reference',
    '',
    '<!-- Generated by `npm run docs:cli` (src/cli/cli-doc.ts) from the yargs definitions. Do not edit: test/cli/cli-doc.test.ts fails when this file differs. -->',
    '',
    'Every command of `plens`, with its arguments and options, as `plens <command> --help` prints them.',
    'This file is generated from the CLI itself by `npm run docs:cli`; a test fails when it is out of date.',
    'In a clone, run the CLI as `npx plens <command>`.',
    '',
    cell(prose(cli.about)),
    '',
    '## Options of every command',
    '',
    ...optionTable(cli.globalOptions, false),
    '',
    'Also `-h, --help` (show help) and `--version`.',
    '',
    '## Exit codes',
    '',
    '| exit | meaning |',
    '|---|---|',
    ...cli.exitCodes.map(([c, meaning]) => `| ${c} | ${cell(prose(meaning))} |`),
    '',
    'Errors and their codes: [errors.md](errors.md).',
    '',
    '## Commands',
    '',
    '| command | what it does |',
    '|---|---|',
    ...all.map(
      (d) => `| [${code(title(d))}](#${anchor(title(d))}) | ${cell(d.sameAs ? `the same as \`plens ${d.sameAs.join(' ')}\`` : prose(d.description))} |`,
    ),
    '',
  ];
  for (const d of all) out.push(...renderCommand(d));
  return out
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .replace(/\n*$/, '\n');
}

/** The file the generator writes, relative to the repository root. */
export const CLI_DOC_PATH = join('docs', 'cli.md');

/**
 * Renders docs/cli.md as a fresh clone sees it: shared-option defaults that the environment can
 * change (PLENS_WORKSPACE, PLENS_WAREHOUSE) are read without those variables, and the CLI is
 * loaded from an empty folder, so nothing of the current project leaks into the reference.
 * Run it in a process of its own (the defaults are read when the CLI's modules load).
 */
export async function generateCliDoc(): Promise<string> {
  for (const name of Object.keys(process.env)) if (name.startsWith('PLENS_')) delete process.env[name];
  const cwd = process.cwd();
  const empty = mkdtempSync(join(tmpdir(), 'plens-cli-doc-'));
  process.chdir(empty);
  try {
    return renderCliDoc(await describeCli());
  } finally {
    process.chdir(cwd);
    rmSync(empty, { recursive: true, force: true });
  }
}

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

// `node dist/cli/cli-doc.js` writes docs/cli.md; `--check` exits 1 when the file differs;
// `--stdout` prints it; `--out FILE` writes or checks another file.
if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const out = process.argv.indexOf('--out');
  const target = out > 0 && process.argv[out + 1] ? resolve(process.argv[out + 1]!) : join(repoRoot, CLI_DOC_PATH);
  const shown = relative(process.cwd(), target) || target;
  const text = await generateCliDoc();
  if (process.argv.includes('--check')) {
    let current = '';
    try {
      current = readFileSync(target, 'utf8');
    } catch {
      // missing: differs
    }
    if (current !== text) {
      process.stderr.write(`${shown} is out of date with the CLI's definitions\n  hint: run \`npm run docs:cli\` and commit the file\n`);
      process.exitCode = 1;
    } else {
      process.stdout.write(`${shown} is up to date\n`);
    }
  } else if (process.argv.includes('--stdout')) {
    process.stdout.write(text);
  } else {
    writeFileSync(target, text);
    process.stdout.write(`wrote ${shown}\n`);
  }
}
