import { cpSync, existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadPipeline } from '../../src/make/pipeline.js';
import { repoRoot, runCliInProcess, sampleDir, tempDir } from '../helpers/cli.js';

/*
 * Outputs of two different dataset imports never meet: the demo and every pipeline have their own
 * workspace and warehouse, and a stage or warehouse that would put two imports' outputs together
 * (the sample's dialogues next to the released data) refuses with a clear error.
 */
describe('workspaces that do not collide', () => {
  it('each pipeline, the demo included, has its own workspace and warehouse by default', () => {
    const env = { PATH: process.env['PATH'] ?? '' };
    const files = readdirSync(join(repoRoot, 'pipelines')).filter((f) => f.endsWith('.yaml'));
    const pipelines = files.map((f) => loadPipeline(join(repoRoot, 'pipelines', f), env));
    const demo = pipelines.find((p) => p.name === 'demo')!;
    expect(demo.workspace).toBe(resolve('out/demo'));
    expect(demo.warehouse).toBe(resolve('warehouse/demo.duckdb'));
    expect(new Set(pipelines.map((p) => p.workspace)).size).toBe(pipelines.length);
    expect(new Set(pipelines.map((p) => p.warehouse)).size).toBe(pipelines.length);
    // None writes where the plain commands do (out/, warehouse/plens.duckdb): the README's released-data commands.
    for (const p of pipelines) {
      expect(p.workspace).not.toBe(resolve('out'));
      expect(p.warehouse).not.toBe(resolve('warehouse/plens.duckdb'));
    }
  });
});

describe('one dataset import per workspace', () => {
  it('refuses to put the dialogues of one import next to another import, and says what to do', async () => {
    const root = tempDir('plens-two-imports-');
    const ws = join(root, 'out');
    const db = join(root, 'w.duckdb');
    const cli = async (args: string[], code = 0) => {
      const r = await runCliInProcess([...args, '-w', ws, '--no-progress']);
      expect(r.code, r.stdout + r.stderr).toBe(code);
      return r;
    };
    // Another dataset: the sample without user7.
    const other = join(root, 'other');
    cpSync(sampleDir, other, { recursive: true });
    rmSync(join(other, 'profile', 'user7'), { recursive: true });

    await cli(['import', '--from', sampleDir]);
    const fingerprint = (JSON.parse(readFileSync(join(ws, 'dataset', 'manifest.json'), 'utf8')) as { fingerprint: string }).fingerprint;
    expect(fingerprint).toMatch(/^[0-9a-f]{32}$/);
    await cli(['scenarios', '--users', '0']);
    await cli(['dialogues', '--assistant', 'sim:default', '--limit', '3']);
    const cell = readdirSync(join(ws, 'dialogues'))[0]!;
    expect(JSON.parse(readFileSync(join(ws, 'dialogues', cell, 'dataset.json'), 'utf8'))).toEqual({ fingerprint, data_dir: sampleDir });
    await cli(['warehouse', '--db', db, '--lexical', 'none']);

    // The other import is refused before it writes anything: work was made on this one.
    let r = await cli(['import', '--from', other], 4);
    expect(r.stderr).toContain('nothing was written');
    expect((JSON.parse(readFileSync(join(ws, 'dataset', 'manifest.json'), 'utf8')) as { fingerprint: string }).fingerprint).toBe(fingerprint);
    // A workspace that holds another import all the same (put there by hand, or by an older plens):
    // what was made on the first import refuses to mix.
    const elsewhere = join(root, 'elsewhere');
    expect((await runCliInProcess(['import', '--from', other, '-w', elsewhere, '--no-progress'])).code).toBe(0);
    rmSync(join(ws, 'dataset'), { recursive: true });
    cpSync(join(elsewhere, 'dataset'), join(ws, 'dataset'), { recursive: true });
    r = await cli(['warehouse', '--db', db, '--lexical', 'none'], 4);
    expect(r.stderr).toContain('E_PREREQUISITE');
    expect(r.stderr).toContain('plens warehouse would mix two dataset imports');
    expect(r.stderr).toContain(`was made on the import of ${sampleDir} (${fingerprint.slice(0, 12)}), the workspace now holds the import of ${other}`);
    expect(r.stderr).toContain('give each dataset its own workspace and warehouse (-w DIR --db FILE)');
    // A selection made anew from the new import does not fix the dialogues made on the old one.
    await cli(['scenarios', '--users', '0']);
    r = await cli(['dialogues', '--assistant', 'sim:default', '--limit', '3'], 4);
    expect(r.stderr).toContain(`plens dialogues would mix two dataset imports: ${join(ws, 'dialogues', cell)} was made`);
    r = await cli(['judge', '--judge', 'sim:default'], 4);
    expect(r.stderr).toContain('plens judge would mix two dataset imports');
    // The old warehouse is kept as it was.
    expect(existsSync(db)).toBe(true);

    // The same data imported again has the same fingerprint: only the stale selection is named.
    await cli(['import', '--from', sampleDir]);
    r = await cli(['warehouse', '--db', db, '--lexical', 'none'], 4);
    expect(r.stderr).toContain('hint: rerun `plens scenarios` to select from the current import');
    await cli(['scenarios', '--users', '0']);
    await cli(['warehouse', '--db', db, '--lexical', 'none']);
  }, 300_000);
});
