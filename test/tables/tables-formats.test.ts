import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, expect, it } from 'vitest';
import { tableCatalog } from '../../src/registry/registry.js';
import { Workspace } from '../../src/core/workspace.js';
import { collectTables } from '../../src/tables/tables.js';
import { ViewRows } from '../../src/tables/view-rows.js';
import { buildWarehouse } from '../../src/warehouse/build.js';
import { tempDir } from '../helpers/cli.js';
import { handMadeWarehouse } from '../helpers/hand-experiment.js';

// `formats` renders every format from one pass over the views (plens make and the benches write md
// and tex); the files must be exactly what one call per format writes.
let db: string;
let ws: string;
beforeAll(async () => {
  ({ db, ws } = await handMadeWarehouse());
}, 300_000);

it('writes md, tex and csv from one pass, byte for byte what one call per format writes', async () => {
  const together = tempDir('plens-tables-together-');
  const r = await collectTables({ catalog: tableCatalog(), dbPath: db, format: 'md', formats: ['md', 'tex', 'csv'], outDir: together });
  const separate = tempDir('plens-tables-separate-');
  for (const format of ['md', 'tex', 'csv'] as const) await collectTables({ catalog: tableCatalog(), dbPath: db, format, outDir: separate });

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
  const r = await collectTables({ catalog: tableCatalog(), dbPath: db, format: 'tex', outDir: dir });
  expect(r.files.length).toBe(r.tables.length);
  expect(readdirSync(dir).every((n) => n.endsWith('.tex'))).toBe(true);
});

// make's report step reads the rows its tables step queried from the same build (ViewRows), and only those.
it('reuses the rows an earlier reader of the same warehouse build kept, and forgets them once the file changes', async () => {
  const file = db;
  const kept = new ViewRows();
  const first = await collectTables({ catalog: tableCatalog(), dbPath: file, format: 'md', viewRows: kept });
  const table3 = first.tables.find((t) => t.name === 'table3')!;
  expect(table3.rows.length).toBeGreaterThan(0);
  // A marker row stands in for what was kept: the next reader shows it, so it did not query table3 again.
  kept.of(file).set('table3', { rows: [{ ...table3.rows[0], mean: -1 }], notes: [] });
  const second = await collectTables({ catalog: tableCatalog(), dbPath: file, format: 'md', viewRows: kept });
  expect(second.tables.find((t) => t.name === 'table3')!.rows).toEqual([{ ...table3.rows[0], mean: -1 }]);
  // --exclude-flagged reads other rows: it neither uses nor fills what is kept.
  const flagged = await collectTables({ catalog: tableCatalog(), dbPath: file, format: 'md', viewRows: kept, excludeFlagged: true });
  expect(flagged.tables.find((t) => t.name === 'table3')!.rows).not.toContainEqual(expect.objectContaining({ mean: -1 }));
  expect(kept.of(file).get('table3')!.rows).toEqual([{ ...table3.rows[0], mean: -1 }]);
  // A rebuilt warehouse (the same inputs, so the same rows) is a new file: what was kept is gone, the views are queried again.
  await buildWarehouse({ workspace: new Workspace(ws), dbPath: file, force: true, lexical: [] });
  const rebuilt = await collectTables({ catalog: tableCatalog(), dbPath: file, format: 'md', viewRows: kept });
  expect(rebuilt.tables.find((t) => t.name === 'table3')!.rows).toEqual(table3.rows);
});
