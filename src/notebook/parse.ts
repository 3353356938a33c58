/**
 * SQL notebooks: a Markdown file whose top-level ```sql fences are cells and whose prose is kept.
 * markdown-it finds the fences (with their line ranges), so fences inside lists or quotes, indented
 * code, and ``` inside longer fences are all read the way GitHub reads them.
 */
import MarkdownIt from 'markdown-it';
import { parse as parseYaml } from 'yaml';
import { PlensError } from '../core/errors.js';

export type ParamValue = string | number | boolean;

export interface CellOptions {
  /** Shown above the cell, and used in messages and the JSON summary. */
  name?: string;
  /** Rows shown; the rest are counted ("N more rows"). Undefined: the notebook's or the command's default. */
  maxRows?: number;
  /** Show the SQL in the output (echo=false shows only the result). */
  echo: boolean;
  /** Show the SQL but do not run it. */
  skip: boolean;
}

export interface ProseBlock {
  kind: 'prose';
  /** The source lines, verbatim. */
  text: string;
  /** 1-based line of the first source line. */
  line: number;
}

export interface SqlCell {
  kind: 'sql';
  /** 1-based position among the cells. */
  index: number;
  sql: string;
  /** 1-based line of the opening fence: the cell's file:line in messages. */
  line: number;
  /** The fence's info string as written, e.g. "sql max_rows=20". */
  info: string;
  options: CellOptions;
}

export type Block = ProseBlock | SqlCell;

export interface Notebook {
  file: string;
  /** Parameter defaults from the front matter, in declaration order. */
  params: Record<string, ParamValue>;
  /**
   * Per parameter, a query listing the values it can match in the warehouse (front matter
   * `param_values`): a value that is in none of them is reported, not left to give 0 rows in silence.
   */
  paramValues: Record<string, string>;
  /** The notebook's default row cap (front matter max_rows), if any. */
  maxRows?: number;
  /** The first level-1 heading, if any. */
  title?: string;
  blocks: Block[];
  cells: SqlCell[];
}

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;
const FRONT_MATTER_KEYS = new Set(['params', 'param_values', 'max_rows']);

export function parseNotebook(source: string, file: string): Notebook {
  const text = source.replace(/^\uFEFF/, '').replace(/\r\n?/g, '\n');
  const lines = text.split('\n');
  const front = frontMatter(lines, file);
  const notebook: Notebook = { file, params: front.params, paramValues: front.paramValues, blocks: [], cells: [] };
  if (front.maxRows !== undefined) notebook.maxRows = front.maxRows;

  const bodyStart = front.endLine; // 0-based index of the first body line
  const body = lines.slice(bodyStart).join('\n');
  const tokens = new MarkdownIt('commonmark').parse(body, {});
  let proseFrom = 0; // 0-based body line where the pending prose starts
  const pushProse = (to: number) => {
    const chunk = lines.slice(bodyStart + proseFrom, bodyStart + to);
    // Blank lines around cells are layout, not content.
    while (chunk.length && chunk[0]!.trim() === '') {
      chunk.shift();
      proseFrom++;
    }
    while (chunk.length && chunk[chunk.length - 1]!.trim() === '') chunk.pop();
    if (chunk.length) notebook.blocks.push({ kind: 'prose', text: chunk.join('\n'), line: bodyStart + proseFrom + 1 });
  };

  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i]!;
    if (notebook.title === undefined && token.type === 'heading_open' && token.tag === 'h1' && token.level === 0) {
      const title = tokens[i + 1]?.content.trim();
      if (title) notebook.title = title;
    }
    // Only top-level fences are cells: one inside a list or a quote is an example in the prose.
    if (token.type !== 'fence' || token.level !== 0 || !token.map) continue;
    const [lang = '', ...rest] = token.info.trim().split(/\s+/);
    if (lang.toLowerCase() !== 'sql') continue;
    const [start, end] = token.map;
    pushProse(start);
    const line = bodyStart + start + 1;
    const options = cellOptions(rest.join(' '), file, line);
    const named = /^\s*--\s*name:\s*(.+?)\s*$/m.exec(token.content.split('\n').find((l) => l.trim() !== '') ?? '');
    if (options.name === undefined && named) options.name = named[1]!;
    const cell: SqlCell = { kind: 'sql', index: notebook.cells.length + 1, sql: token.content.replace(/\n$/, ''), line, info: token.info.trim(), options };
    notebook.blocks.push(cell);
    notebook.cells.push(cell);
    proseFrom = end;
  }
  pushProse(lines.length - bodyStart);
  return notebook;
}

/** `key=value` (value may be "quoted" or 'quoted') or a bare flag, separated by spaces. */
function cellOptions(info: string, file: string, line: number): CellOptions {
  const options: CellOptions = { echo: true, skip: false };
  const bad = (message: string) =>
    new PlensError('E_INPUT_SCHEMA', message, { location: { file, line }, hint: 'cell options: max_rows=N, name=TEXT, echo=false, skip' });
  for (const m of info.matchAll(/([A-Za-z_]+)(?:=("[^"]*"|'[^']*'|\S*))?|(\S+)/g)) {
    if (m[3] !== undefined) throw bad(`cannot read cell option "${m[3]}"`);
    const key = m[1]!;
    const raw = m[2];
    const value = raw !== undefined && /^(["']).*\1$/.test(raw) ? raw.slice(1, -1) : raw;
    switch (key) {
      case 'max_rows':
        options.maxRows = wholeNumber(value, () => bad(`max_rows must be a whole number >= 0 (got ${JSON.stringify(value ?? '')})`));
        break;
      case 'name':
        if (!value) throw bad('name needs a value, e.g. name="Table 3"');
        options.name = value;
        break;
      case 'echo':
      case 'skip': {
        const flag = value === undefined ? true : value === 'true' ? true : value === 'false' ? false : undefined;
        if (flag === undefined) throw bad(`${key} is true or false (got ${JSON.stringify(value)})`);
        options[key] = flag;
        break;
      }
      default:
        throw bad(`unknown cell option "${key}"`);
    }
  }
  return options;
}

function wholeNumber(value: string | number | undefined, error: () => PlensError): number {
  const n = typeof value === 'number' ? value : value !== undefined && /^\d+$/.test(value) ? Number(value) : NaN;
  if (!Number.isSafeInteger(n) || n < 0) throw error();
  return n;
}

/** YAML between a first line `---` and the next `---`: parameter defaults and the notebook's row cap. */
function frontMatter(
  lines: string[],
  file: string,
): { params: Record<string, ParamValue>; paramValues: Record<string, string>; maxRows?: number; endLine: number } {
  if (lines[0]?.trimEnd() !== '---') return { params: {}, paramValues: {}, endLine: 0 };
  const close = lines.findIndex((l, i) => i > 0 && (l.trimEnd() === '---' || l.trimEnd() === '...'));
  if (close < 0) throw new PlensError('E_INPUT_LAYOUT', 'front matter opened with --- is never closed', { location: { file, line: 1 } });
  const at = (line: number, message: string) => new PlensError('E_INPUT_SCHEMA', message, { location: { file, line } });
  let data: unknown;
  try {
    data = parseYaml(lines.slice(1, close).join('\n'));
  } catch (error) {
    const pos = (error as { linePos?: Array<{ line: number }> }).linePos?.[0]?.line;
    throw at(pos === undefined ? 1 : pos + 1, `front matter is not valid YAML: ${(error as Error).message.split('\n')[0]}`);
  }
  // Find a key's line for messages; YAML positions would be exact, but a key at the start of a line is what people write.
  const lineOf = (key: string) => {
    const i = lines.slice(0, close).findIndex((l) => new RegExp(`^\\s*${key}\\s*:`).test(l));
    return i < 0 ? 1 : i + 1;
  };
  const result: { params: Record<string, ParamValue>; paramValues: Record<string, string>; maxRows?: number; endLine: number } = {
    params: {},
    paramValues: {},
    endLine: close + 1,
  };
  if (data === null || data === undefined) return result;
  if (typeof data !== 'object' || Array.isArray(data)) throw at(2, 'front matter must be a mapping (params:, max_rows:)');
  for (const [key, value] of Object.entries(data as Record<string, unknown>)) {
    if (!FRONT_MATTER_KEYS.has(key)) throw at(lineOf(key), `unknown front matter key "${key}" (known: ${[...FRONT_MATTER_KEYS].join(', ')})`);
    if (key === 'max_rows') result.maxRows = wholeNumber(value as number, () => at(lineOf(key), 'max_rows must be a whole number >= 0'));
  }
  const params = (data as Record<string, unknown>)['params'];
  if (params === undefined || params === null) return result;
  if (typeof params !== 'object' || Array.isArray(params)) throw at(lineOf('params'), 'params must be a mapping of name: default value');
  for (const [name, value] of Object.entries(params as Record<string, unknown>)) {
    if (!IDENTIFIER.test(name)) throw at(lineOf(name), `parameter name "${name}" is not an identifier (letters, digits, _)`);
    if (typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean') {
      throw at(lineOf(name), `parameter ${name}: the default must be a string, a number or true/false`);
    }
    if (typeof value === 'number' && !Number.isFinite(value)) throw at(lineOf(name), `parameter ${name}: the default must be a finite number`);
    result.params[name] = value;
  }
  const checks = (data as Record<string, unknown>)['param_values'];
  if (checks === undefined || checks === null) return result;
  if (typeof checks !== 'object' || Array.isArray(checks))
    throw at(lineOf('param_values'), 'param_values must be a mapping of parameter name: SQL query listing its values');
  for (const [name, sql] of Object.entries(checks as Record<string, unknown>)) {
    if (!(name in result.params)) throw at(lineOf(name), `param_values: "${name}" is not a declared parameter`);
    if (typeof sql !== 'string' || sql.trim() === '') throw at(lineOf(name), `param_values: ${name} needs a SQL query (one column: the values it can take)`);
    result.paramValues[name] = sql;
  }
  return result;
}

/**
 * Applies `--param name=value` to the declared defaults. A value takes the type of its default
 * (so `--param n=5` stays a number where the notebook compares it with one); an undeclared name is a typo.
 */
export function resolveParams(
  declared: Record<string, ParamValue>,
  given: string[],
  file: string,
): { values: Record<string, ParamValue>; fromCli: Set<string> } {
  const values = { ...declared };
  const fromCli = new Set<string>();
  for (const item of given) {
    const eq = item.indexOf('=');
    if (eq <= 0) throw new PlensError('E_USAGE', `--param takes name=value (got ${JSON.stringify(item)})`);
    const name = item.slice(0, eq);
    const raw = item.slice(eq + 1);
    if (!(name in declared)) {
      const known = Object.keys(declared);
      throw new PlensError('E_USAGE', `${file} declares no parameter "${name}"`, {
        hint: known.length ? `its parameters: ${known.join(', ')}` : 'declare parameters in the front matter: ---\\nparams:\\n  name: default\\n---',
      });
    }
    const kind = typeof declared[name];
    if (kind === 'number') {
      const n = Number(raw);
      if (raw.trim() === '' || !Number.isFinite(n)) throw new PlensError('E_USAGE', `--param ${name} must be a number (got ${JSON.stringify(raw)})`);
      values[name] = n;
    } else if (kind === 'boolean') {
      if (raw !== 'true' && raw !== 'false') throw new PlensError('E_USAGE', `--param ${name} must be true or false (got ${JSON.stringify(raw)})`);
      values[name] = raw === 'true';
    } else {
      values[name] = raw;
    }
    fromCli.add(name);
  }
  return { values, fromCli };
}
