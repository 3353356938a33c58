import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, expect, it } from 'vitest';
import { collectTables } from '../../src/tables/tables.js';
import { tempDir } from '../helpers/cli.js';
import { handMadeWarehouse } from '../helpers/hand-experiment.js';

// `formats` renders every format from one pass over the views (plens make and the benches write md
// and tex); the files must be exactly what one call per format writes.
let db: string;
beforeAll(async () => {
  db = (await handMadeWarehouse()).db;
}, 300_000);

it('writes md, tex and csv from one pass, byte for byte what one call per format writes', async () => {
  const together = tempDir('plens-tables-together-');
  const r = await collectTables({ dbPath: db, format: 'md', formats: ['md', 'tex', 'csv'], outDir: together });
  const separate = tempDir('plens-tables-separate-');
  for (const format of ['md', 'tex', 'csv'] as const) await collectTables({ dbPath: db, format, outDir: separate });

  const names = readdirSync(separate).sort();
  expect(readdirSync(together).sort()).toEqual(names);
  expect(r.files.map((f) => f.slice(together.length + 1)).sort()).toEqual(names);
  expect(names.filter((n) => n.endsWith('.tex')).length).toBe(r.tables.length);
  expect(names).toContain('table3.tex');
  expect(readFileSync(join(together, 'table3.tex'), 'utf8')).toContain('\\toprule');
  for (const name of names) expect(readFileSync(join(together, name), 'utf8'), name).toBe(readFileSync(join(separate, name), 'utf8'));
});

it('writes only `format` when no formats are given', async () => {
  const dir = tempDir('plens-tables-one-');
  const r = await collectTables({ dbPath: db, format: 'tex', outDir: dir });
  expect(r.files.length).toBe(r.tables.length);
  expect(readdirSync(dir).every((n) => n.endsWith('.tex'))).toBe(true);
});
