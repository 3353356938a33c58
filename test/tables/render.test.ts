import { describe, expect, it } from 'vitest';
import { escapeLatex, formatCell, renderTable, type RenderableTable } from '../../src/tables/render.js';

const table: RenderableTable = {
  name: 'table_x',
  title: 'Table X: 50% & more',
  columns: [
    { key: 'group', label: 'Group', group: true },
    { key: 'name', label: 'Name' },
    { key: 'n', label: '#N', format: 'int' },
    { key: 'e', label: 'E', format: 'float2', nullText: '-' },
  ],
  rows: [
    { group: 'A', name: 'x_1 "q", y', n: 12345, e: 0.456 },
    { group: 'A', name: 'a|b', n: 7, e: null },
    { group: 'B', name: '$5 & up', n: 1000000, e: 1 },
  ],
};

describe('formatCell', () => {
  it('groups thousands, rounds to the column precision, prints nullText', () => {
    expect(formatCell(12345, { key: 'n', label: '', format: 'int' }, ',')).toBe('12,345');
    expect(formatCell(0.455, { key: 'e', label: '', format: 'float3' }, ',')).toBe('0.455');
    expect(formatCell(null, { key: 'e', label: '', nullText: '-' }, ',')).toBe('-');
    expect(formatCell(true, { key: 'b', label: '', format: 'yesno' }, ',')).toBe('Yes');
  });
});

describe('renderTable', () => {
  it('markdown: aligned columns, escaped pipes, grouped attribute blanked when repeated', () => {
    const md = renderTable(table, 'md');
    const lines = md.split('\n');
    expect(lines[0]).toBe('### Table X: 50% & more');
    expect(md).toContain('a\\|b');
    expect(md).toContain('12,345');
    const rows = lines.filter((l) => l.startsWith('| ') && !l.includes('Group') && !l.includes('---'));
    expect(rows[1]!.startsWith('|       | a\\|b')).toBe(true);
  });

  it('csv: raw values at full precision, RFC 4180 quoting, no grouping', () => {
    expect(renderTable(table, 'csv').split('\n')).toEqual(['group,name,n,e', 'A,"x_1 ""q"", y",12345,0.456', 'A,a|b,7,', 'B,$5 & up,1000000,1']);
  });

  it('tex: booktabs, escaped specials, thousands as {,}, a rule between groups', () => {
    const tex = renderTable(table, 'tex');
    expect(tex).toContain('\\begin{tabular}{llrr}');
    expect(tex).toContain('\\caption{Table X: 50\\% \\& more}');
    expect(tex).toContain('A & x\\_1 "q", y & 12{,}345 & 0.46 \\\\');
    expect(tex).toContain(' & a|b & 7 & - \\\\\n\\midrule\nB & \\$5 \\& up & 1{,}000{,}000 & 1.00 \\\\');
    expect(tex).toContain('\\label{tab:table-x}');
  });

  it('json: the raw rows', () => {
    expect(JSON.parse(renderTable(table, 'json'))).toMatchObject({ name: 'table_x', columns: ['group', 'name', 'n', 'e'], rows: table.rows });
  });

  it('escapeLatex escapes every special character', () => {
    expect(escapeLatex('\\ & % $ # _ { } ~ ^')).toBe('\\textbackslash{} \\& \\% \\$ \\# \\_ \\{ \\} \\textasciitilde{} \\textasciicircum{}');
  });
});
