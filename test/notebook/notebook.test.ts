import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { PlensError } from '../../src/core/errors.js';
import { parseNotebook, resolveParams, type SqlCell } from '../../src/notebook/parse.js';
import { markdownText } from '../../src/notebook/render.js';
import { repoRoot, runCli, runCliJson } from '../helpers/cli.js';
import { sampleWorkspace } from '../helpers/workspace.js';

const SOURCE = `---
params:
  who: sim:default
  n: 3
  strict: false
---

# Title

Some prose with \`code\`.

\`\`\`sql max_rows=2 name="First cell"
select 1 as one;
\`\`\`

Between the cells.

\`\`\`python
print("not a cell")
\`\`\`

- a list item with a fence inside, which is an example, not a cell:

  \`\`\`sql
  select 'nested';
  \`\`\`

\`\`\`SQL echo=false skip
-- name: From the comment
select 2;
\`\`\`
\`\`\`sql
\`\`\`
Trailing prose.
`;

describe('parseNotebook', () => {
  const nb = parseNotebook(SOURCE, 'nb.md');
  const cells = nb.cells;

  it('finds the top-level sql fences as cells, with their fence line and options', () => {
    expect(cells.map((c) => [c.index, c.line, c.sql])).toEqual([
      [1, 12, 'select 1 as one;'],
      [2, 28, '-- name: From the comment\nselect 2;'],
      [3, 32, ''],
    ]);
    expect(cells[0]!.options).toEqual({ name: 'First cell', maxRows: 2, echo: true, skip: false });
    expect(cells[1]!.options).toEqual({ name: 'From the comment', echo: false, skip: true });
    expect(cells[2]!.options).toEqual({ echo: true, skip: false });
  });

  it('keeps the prose verbatim, with its first line, fences of other languages and nested sql included', () => {
    const prose = nb.blocks.filter((b) => b.kind === 'prose');
    expect(prose.map((p) => p.line)).toEqual([8, 16, 34]);
    expect(prose[0]!.text).toBe('# Title\n\nSome prose with `code`.');
    expect(prose[1]!.text).toContain('print("not a cell")');
    expect(prose[1]!.text).toContain("  select 'nested';");
    expect(prose[2]!.text).toBe('Trailing prose.');
    expect(nb.blocks.map((b) => b.kind)).toEqual(['prose', 'sql', 'prose', 'sql', 'sql', 'prose']);
  });

  it('reads the front matter parameters and the title', () => {
    expect(nb.params).toEqual({ who: 'sim:default', n: 3, strict: false });
    expect(nb.title).toBe('Title');
  });

  it('handles CRLF files and files without front matter', () => {
    const nb2 = parseNotebook('Intro\r\n\r\n```sql\r\nselect 1;\r\n```\r\n', 'x.md');
    expect(nb2.params).toEqual({});
    expect(nb2.cells.map((c: SqlCell) => [c.line, c.sql])).toEqual([[3, 'select 1;']]);
  });

  it('rejects unknown options and bad values with the file and line', () => {
    const bad = (text: string) => {
      try {
        parseNotebook(text, 'bad.md');
      } catch (error) {
        return error as PlensError;
      }
      throw new Error('no error');
    };
    let e = bad('text\n\n```sql colour=red\nselect 1;\n```\n');
    expect([e.code, e.where, e.message]).toEqual(['E_INPUT_SCHEMA', 'bad.md:3', 'unknown cell option "colour"']);
    e = bad('```sql max_rows=lots\nselect 1;\n```\n');
    expect(e.where).toBe('bad.md:1');
    e = bad('---\nparams:\n  ok: 1\n  bad-name: 2\n---\n');
    expect([e.where, e.message]).toEqual(['bad.md:4', 'parameter name "bad-name" is not an identifier (letters, digits, _)']);
    e = bad('---\ntitel: x\n---\n');
    expect(e.where).toBe('bad.md:2');
    e = bad('---\nparams: {}\n');
    expect(e.code).toBe('E_INPUT_LAYOUT');
  });

  it('applies --param values in the type of their default, and refuses undeclared ones', () => {
    const { values, fromCli } = resolveParams(nb.params, ['n=10', 'strict=true', 'who=a=b'], 'nb.md');
    expect(values).toEqual({ who: 'a=b', n: 10, strict: true });
    expect([...fromCli]).toEqual(['n', 'strict', 'who']);
    expect(() => resolveParams(nb.params, ['nn=1'], 'nb.md')).toThrow(/declares no parameter "nn"/);
    expect(() => resolveParams(nb.params, ['n=ten'], 'nb.md')).toThrow(/must be a number/);
    expect(() => resolveParams(nb.params, ['n'], 'nb.md')).toThrow(/name=value/);
  });

  it('escapes data for Markdown table cells', () => {
    expect(markdownText('<script>alert(1)</script>')).toBe('\\<script\\>alert(1)\\</script\\>');
    expect(markdownText('a*b* [x](y) snake_case _em_ &amp;\nline')).toBe('a\\*b\\* \\[x\\](y) snake_case \\_em\\_ \\&amp;<br>line');
  });
});

describe('plens notebook on a small warehouse', () => {
  let dir: string;
  let db: string;

  beforeAll(async () => {
    const ws = await sampleWorkspace(['--users', '0-1']);
    for (const args of [
      ['dialogues', '--assistant', 'sim:default'],
      ['judge', '--judge', 'sim:default'],
    ]) {
      const r = await runCli([...args, '-w', ws, '--no-progress', '-q']);
      expect(r.code, r.stderr).toBe(0);
    }
    dir = join(ws, '..');
    db = join(dir, 'w.duckdb');
    const r = await runCli(['warehouse', '-w', ws, '--db', db, '-q']);
    expect(r.code, r.stderr).toBe(0);
  });

  const write = (name: string, text: string) => {
    const file = join(dir, name);
    writeFileSync(file, text);
    return file;
  };

  it('writes Markdown with the prose, each cell and its result, capped rows counted', async () => {
    const file = write(
      'basic.sql.md',
      [
        '# Basic',
        '',
        'Intro <b>prose</b> kept as written.',
        '',
        '```sql name="Counts"',
        'select setting, count(*) as dialogues from dialogues group by setting;',
        '```',
        '',
        '```sql max_rows=3',
        'select i, i * 1.5 as x, null as nothing from range(10) t(i) order by i;',
        '```',
        '',
        '```sql',
        "select '<script>alert(1)</script>' as html, 'a|b' as pipe, 'two' || chr(10) || 'lines' as multi;",
        '```',
        '',
        '```sql',
        'create temp table t as select 42 as answer;',
        'select * from t;',
        '```',
      ].join('\n'),
    );
    const out = join(dir, 'basic-out.md');
    const r = await runCli(['notebook', file, '--db', db, '--out', out]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout.trim()).toBe(out);
    const md = readFileSync(out, 'utf8');
    expect(md).toMatch(/^<!-- Generated by plens notebook/);
    expect(md).toContain('# Basic');
    expect(md).toContain('Intro <b>prose</b> kept as written.');
    expect(md).toContain('**Counts**\n\n```sql\nselect setting, count(*) as dialogues from dialogues group by setting;\n```');
    expect(md).toMatch(/\| base +\| +49 \|/);
    expect(md).toContain('_7 more rows (3 of 10 shown)_');
    expect(md).toMatch(/\| +2 \| +3 \| NULL +\|/);
    expect(md).not.toMatch(/\| +3 \| +4\.5 \|/);
    expect(md).toContain('\\<script\\>alert(1)\\</script\\>');
    expect(md).toContain('a\\|b');
    expect(md).toContain('two<br>lines');
    expect(md).toMatch(/\| +42 \|/);
    // Raw HTML only inside the echoed SQL (a code block), never in a table.
    expect(md.split('\n').filter((l) => l.startsWith('|') && l.includes('<script>'))).toEqual([]);
  });

  it('writes self-contained HTML with everything escaped', async () => {
    const file = write(
      'escape.md',
      [
        '# <i>Escapes</i>',
        '',
        '<script>alert("prose")</script>',
        '',
        '```sql name="<b>bold</b>"',
        'select \'<img src=x onerror=alert(1)>\' as "<col>", 1000000 as big;',
        '```',
      ].join('\n'),
    );
    const r = await runCliJson<{ output: string; format: string }>(['notebook', file, '--db', db, '--format', 'html', '-w', join(dir, 'ws-html')]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.json.format).toBe('html');
    expect(r.json.output).toBe(join(dir, 'ws-html', 'notebooks', 'escape.html'));
    const html = readFileSync(r.json.output, 'utf8');
    expect(html).toMatch(/^<!doctype html>/);
    expect(html).toContain('<title>&lt;i&gt;Escapes&lt;/i&gt;</title>');
    expect(html).toContain('&lt;script&gt;alert(&quot;prose&quot;)&lt;/script&gt;');
    expect(html).toContain('<strong>&lt;b&gt;bold&lt;/b&gt;</strong>');
    expect(html).toContain('<th>&lt;col&gt;</th>');
    expect(html).toContain('&lt;img src=x onerror=alert(1)&gt;');
    expect(html).toContain('<td class="num">1000000</td>');
    expect(html).not.toMatch(/<script|<img|<b>|<i>/);
    // Self-contained: no stylesheet, script or image fetched from anywhere.
    expect(html).not.toMatch(/<(link|script|img|iframe)\b|(src|href)="?https?:/i);
  });

  it('binds parameters as DuckDB variables, never as SQL text', async () => {
    const file = write(
      'params.md',
      [
        '---',
        'params:',
        '  who: nobody',
        '  n: 2',
        '---',
        '',
        '```sql',
        "select getvariable('who') as who, getvariable('n') + 1 as n1, count(*) as rows from dialogues where assistant_model = getvariable('who');",
        '```',
      ].join('\n'),
    );
    const evil = "x' or 1=1; --";
    let r = await runCli(['notebook', file, '--db', db, '-o', '-', '-P', 'who=sim:default', '-P', 'n=5']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/\| sim:default \| +6 \| +49 \|/);
    expect(r.stdout).toMatch(/\| who +\| sim:default \| --param \|/);
    r = await runCli(['notebook', file, '--db', db, '-o', '-', '-P', `who=${evil}`]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/\| +3 \| +0 \|/);
    r = await runCli(['notebook', file, '--db', db, '-o', '-', '-P', 'whom=x']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('declares no parameter "whom"');
    expect(r.stderr).toContain('its parameters: who, n');
  });

  it('says when a parameter matches nothing in the warehouse (param_values), with the values there are', async () => {
    const file = write(
      'checked.md',
      [
        '---',
        'params:',
        '  who: sim:default',
        '  setting: ""',
        'param_values:',
        '  who: select distinct assistant_model from dialogues',
        '  setting: select distinct setting from dialogues',
        '---',
        '',
        '```sql',
        "select count(*) as n from dialogues where assistant_model = getvariable('who');",
        '```',
      ].join('\n'),
    );
    // A value that is there, and an empty one ("all"), are not reported.
    let r = await runCliJson<{ warnings: string[] }>(['notebook', file, '--db', db, '-o', join(dir, 'checked-ok.md')]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.json.warnings).toEqual([]);
    const nobody = 'parameter who = "openai:gpt-4o" matches nothing in the warehouse, so the cells that use it show no rows; it has: "sim:default"';
    r = await runCliJson<{ warnings: string[] }>([
      'notebook',
      file,
      '--db',
      db,
      '-o',
      join(dir, 'checked.md.out'),
      '-P',
      'who=openai:gpt-4o',
      '-P',
      'setting=base+al',
    ]);
    expect(r.code).toBe(0);
    expect(r.json.warnings).toEqual([
      nobody,
      'parameter setting = "base+al" matches nothing in the warehouse, so the cells that use it show no rows; it has: "base"',
    ]);
    expect(readFileSync(join(dir, 'checked.md.out'), 'utf8')).toContain('> **Warning:** parameter who = "openai:gpt-4o" matches nothing');
    const text = await runCli(['notebook', file, '--db', db, '-o', '-', '-P', 'who=openai:gpt-4o']);
    expect(text.stderr).toContain(`plens: warning: ${nobody}`);
    // A check naming an undeclared parameter is an error in the notebook.
    const bad = write('bad-check.md', ['---', 'params:', '  who: x', 'param_values:', '  whom: select 1', '---', ''].join('\n'));
    const e = await runCli(['notebook', bad, '--db', db, '-o', '-']);
    expect(e.code).toBe(3);
    expect(e.stderr).toContain('param_values: "whom" is not a declared parameter');
  });

  it('shows a failing cell under itself, runs the rest, reports every failure with file:line and exits 5', async () => {
    const file = write(
      'broken.md',
      [
        'Intro.',
        '',
        '```sql',
        'select nope from dialogues;',
        '```',
        '',
        '```sql',
        "select 'still runs' as after;",
        '```',
        '',
        '```sql name=second',
        'select * from no_such_table;',
        '```',
        '',
        '```sql',
        'create table w.t as select 1;',
        '```',
      ].join('\n'),
    );
    const out = join(dir, 'broken-out.md');
    const r = await runCli(['notebook', file, '--db', db, '-o', out]);
    expect(r.code).toBe(5);
    expect(r.stderr).toContain(`plens: error E_SQL: ${file}:3: 3 of 4 cells failed`);
    expect(r.stderr).toContain(`${file}:3: cell 1: Binder Error`);
    expect(r.stderr).toContain(`${file}:11: cell 3 (second): Catalog Error`);
    expect(r.stderr).toContain(`${file}:15: cell 4: `);
    const md = readFileSync(out, 'utf8');
    expect(md).toContain(`> **Error** at \`${file}:3\` (E_SQL)`);
    expect(md).toContain('still runs');
    expect(md).toContain(`> **Error** at \`${file}:11\` (E_SQL)`);
    // The warehouse is opened read-only.
    expect(md).toMatch(/read-only/);

    const j = await runCliJson<{ ok: boolean; failed: number; cells: Array<{ status: string; line: number }>; error: { code: string; line: number } }>([
      'notebook',
      file,
      '--db',
      db,
      '-o',
      out,
    ]);
    expect(j.code).toBe(5);
    expect(j.json.ok).toBe(false);
    expect(j.json.failed).toBe(3);
    expect(j.json.cells.map((c) => [c.line, c.status])).toEqual([
      [3, 'error'],
      [7, 'ok'],
      [11, 'error'],
      [15, 'error'],
    ]);
    expect([j.json.error.code, j.json.error.line]).toEqual(['E_SQL', 3]);
  });

  it('refuses to overwrite the notebook, and needs a warehouse', async () => {
    const file = write('self.md', '```sql\nselect 1;\n```\n');
    let r = await runCli(['notebook', file, '--db', db, '--out', file]);
    expect(r.code).toBe(2);
    expect(readFileSync(file, 'utf8')).toBe('```sql\nselect 1;\n```\n');
    r = await runCli(['notebook', file, '--db', join(dir, 'missing.duckdb'), '-o', '-']);
    expect(r.code).toBe(4);
    r = await runCli(['notebook', join(dir, 'missing.md'), '--db', db]);
    expect(r.code).toBe(3);
  });

  const shipped = readdirSync(join(repoRoot, 'notebooks')).filter((f) => f.endsWith('.md') && f !== 'README.md');

  it('ships the notebooks the README promises', () => {
    expect(shipped).toEqual(expect.arrayContaining(['paper-tables.md', 'compare-assistants.md', 'personalization-failures.md', 'cost.md']));
  });

  it.each(shipped)('notebooks/%s runs without error (md and html)', async (name) => {
    for (const format of ['md', 'html'] as const) {
      const out = join(dir, 'shipped', `${name}.${format}`);
      const r = await runCliJson<{ failed: number; cells: Array<{ status: string; error?: string }> }>([
        'notebook',
        join('notebooks', name),
        '--db',
        db,
        '--format',
        format,
        '-o',
        out,
      ]);
      expect(r.code, JSON.stringify(r.json.cells.filter((c) => c.status === 'error'))).toBe(0);
      expect(r.json.failed).toBe(0);
      expect(existsSync(out)).toBe(true);
    }
  });
});

describe('plens notebook runs cell by cell on a warehouse without dialogues', () => {
  it.each(['paper-tables.md', 'cost.md'])('notebooks/%s: every cell runs, the failing ones show their error, the output is written, exit 5', async (name) => {
    // The sample imported and its scenarios selected: dataset tables, no dialogue views.
    const ws = await sampleWorkspace(['--users', '0-1']);
    const db = join(ws, '..', 'no-dialogues.duckdb');
    const built = await runCli(['warehouse', '-w', ws, '--db', db, '-q']);
    expect(built.code, built.stderr).toBe(0);
    const out = join(ws, '..', `${name}.out.md`);
    const r = await runCliJson<{ ok: boolean; failed: number; cells: Array<{ status: string }>; warnings: string[]; error: { code: string } }>([
      'notebook',
      join('notebooks', name),
      '--db',
      db,
      '-o',
      out,
    ]);
    expect(r.code, r.stderr).toBe(5);
    expect(r.json.ok).toBe(false);
    expect(r.json.error.code).toBe('E_SQL');
    // Every cell ran: none was left out because an earlier one (or a parameter check) failed.
    expect(r.json.cells.every((c) => c.status === 'ok' || c.status === 'error')).toBe(true);
    expect(r.json.failed).toBeGreaterThan(0);
    const md = readFileSync(out, 'utf8');
    expect(md.match(/> \*\*Error\*\* at/g)?.length).toBe(r.json.failed);
    if (name === 'paper-tables.md') {
      // Table 1 is a dataset table: it runs; a parameter check that cannot run is a warning.
      expect(r.json.cells.filter((c) => c.status === 'ok').length).toBeGreaterThan(1);
      expect(md).toContain('Alarm');
      expect(r.json.warnings.join('\n')).toMatch(/parameter setting = "base" could not be checked \(param_values in notebooks\/paper-tables.md: Catalog Error/);
    }
    // The text form names the failing cells and says why they failed.
    const text = await runCli(['notebook', join('notebooks', name), '--db', db, '-o', out]);
    expect(text.code).toBe(5);
    expect(text.stderr).toMatch(/cells failed; each error is shown under its cell in /);
    expect(text.stderr).toContain('the warehouse lacks the views these cells read');
  });
});
