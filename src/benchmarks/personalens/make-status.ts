import type { Workspace } from '../../core/workspace.js';
import type { StatusPart } from '../../platform/benchmark.js';
import { readManifest } from '../../platform/make-state.js';
import { emptyWork, formatWork, readPartition, sumStatus, type LogRecord, type WorkStatus } from '../../platform/status-kit.js';
import type { BuildStageStatus } from './construction/make-steps.js';
import type { PersonaLensPipeline } from './pipeline-section.js';
import { scenariosDir } from './dataset/workspace-files.js';

type Cell = { id: string; assistant: string; setting: string; dialogues: WorkStatus; judge: WorkStatus | null };

/** PersonaLens in `plens status`: the scenarios selected, per cell the dialogues and judgments, and open judge batches. */
export const personaLensStatus: StatusPart<PersonaLensPipeline> = {
  async collect({ p, ws, done, signal, spend }) {
    // The stages' code loads only when a PersonaLens status is asked for.
    const { planCells } = await import('./make-cells.js');
    const { dialogueCell, judgeFolder } = await import('./records.js');
    const cells: Cell[] = [];
    let judgeDirForBatches: string | null = null;
    if (done['scenarios'] && p.dialogues) {
      const plans = await planCells(p, ws, signal);
      const judgeDir = p.judge
        ? await judgeDirOf(
            p,
            ws,
            signal,
            plans.map((c) => c.dir),
          )
        : null;
      const judgeLogs = judgeDir ? await readPartition(judgeFolder(judgeDir)) : null;
      judgeDirForBatches = judgeDir;
      for (const c of plans) {
        const d = await readPartition(dialogueCell(c.dir));
        const dialogues: WorkStatus = {
          done: c.dialogues.done,
          pending: c.dialogues.pending,
          failed: c.dialogues.failed,
          failure_reasons: d.reasons(),
          spent: d.spent(undefined, spend),
        };
        let judge: WorkStatus | null = null;
        if (judgeLogs && c.judge) {
          // Judgments belong to a cell through the dialogue they judge.
          const mine = (r: LogRecord) => r.dialogue_id !== undefined && d.okKeys.has(r.dialogue_id);
          judge = {
            done: c.judge.done,
            pending: c.judge.pending,
            failed: c.judge.failed,
            failure_reasons: judgeLogs.reasons(mine),
            spent: judgeLogs.spent(mine, spend),
          };
        } else if (c.judge) {
          judge = { ...emptyWork(), pending: c.judge.pending };
        }
        if (judge && c.judge?.estimated) judge.pending_estimated = true;
        cells.push({ id: c.id, assistant: c.assistant, setting: c.setting, dialogues, judge });
      }
    } else if (p.dialogues) {
      for (const a of p.dialogues.assistants)
        for (const s of p.dialogues.settings) {
          cells.push({ id: '', assistant: a, setting: s, dialogues: emptyWork(), judge: p.judge ? emptyWork() : null });
        }
    }
    const steps = p.build ? await import('./construction/make-steps.js') : null;
    const build = steps ? await steps.buildStatus({ p, ws, signal }) : null;
    const exported = steps?.lastExport(ws.root) ?? null;
    return {
      build,
      build_export: exported ? { users: exported.users, left_out: exported.left_out.length, flagged_inconsistent: exported.flagged_inconsistent.length } : null,
      scenarios: done['scenarios'] ? scenarioCount(ws) : null,
      cells,
      totals: { dialogues: sumStatus(cells.map((c) => c.dialogues)), judge: p.judge ? sumStatus(cells.map((c) => c.judge ?? emptyWork())) : null },
      open_batches: await openBatches(judgeDirForBatches),
    };
  },

  format(s) {
    const cells = s['cells'] as Cell[];
    const totals = s['totals'] as { dialogues: WorkStatus; judge: WorkStatus | null };
    const batches = s['open_batches'] as { batches: number; requests: number; batch_ids: string[] };
    const scenarios = s['scenarios'] as number | null;
    const body: string[] = [];
    const build = s['build'] as BuildStageStatus[] | null | undefined;
    if (build) {
      const n = (x: number) => x.toLocaleString('en-US');
      const steps = [
        ['build-users', 'users'],
        ['build-reference', 'reference'],
        ['build-export', 'export'],
      ] as const;
      const exported = s['build_export'] as { users: number; left_out: number; flagged_inconsistent: number } | null;
      const wrote = exported
        ? ` (${n(exported.users)} users, ${n(exported.left_out)} left out, ${n(exported.flagged_inconsistent)} flagged by the consistency check)`
        : '';
      body.push(`build      ${steps.flatMap(([step, label]) => (s.stages[step] ? [`${label} ${s.stages[step]}`] : [])).join(' | ')}${wrote}`);
      for (const b of build)
        body.push(
          `  ${b.stage.padEnd(13)}${n(b.done)} done, ${b.estimated ? '~' : ''}${n(b.pending)} pending, ${n(b.refused)} refused, ${n(b.failed)} failed (${b.model})`,
        );
    }
    if (s.stages['import']) body.push(`import     ${s.stages['import']}`);
    if (s.stages['scenarios']) body.push(`scenarios  ${s.stages['scenarios']}${scenarios !== null ? ` (${scenarios} selected)` : ''}`);
    if (cells.length) {
      body.push(`dialogues  ${formatWork(totals.dialogues)}`);
      for (const c of cells) body.push(`  ${c.setting} | ${c.assistant}: ${formatWork(c.dialogues)}`);
      if (totals.judge) {
        body.push(`judge      ${formatWork(totals.judge)}`);
        for (const c of cells) if (c.judge) body.push(`  ${c.setting} | ${c.assistant}: ${formatWork(c.judge)}`);
      }
      if (s.stages['scenarios'] !== 'done') body.push('  (pending is known once the scenarios are selected: plens make scenarios)');
    }
    const footer = batches.batches
      ? [
          `batches    ${batches.batches} open (${batches.requests} requests; ${batches.batch_ids.join(', ')}): plens make judge (or plens judge --batch) collects them`,
        ]
      : [];
    return { body, footer };
  },
};

/** The judge's batches not yet collected, from its partition's ledgers. */
async function openBatches(dir: string | null): Promise<{ batches: number; requests: number; batch_ids: string[] }> {
  const { readLedgers } = await import('../../engine/batch-ledger.js');
  const open = dir ? (await readLedgers(dir)).filter((b) => !b.processed) : [];
  return { batches: open.length, requests: open.reduce((n, b) => n + b.keys.length, 0), batch_ids: open.map((b) => b.batchId ?? `${b.id} (not yet created)`) };
}

async function judgeDirOf(p: PersonaLensPipeline, ws: Workspace, signal: AbortSignal, dirs: string[]): Promise<string | null> {
  const { runJudge } = await import('./judge-stage.js');
  const { stageOptions } = await import('./make-cells.js');
  const { dialogueCell } = await import('./records.js');
  const withDialogues = dirs.filter((d) => dialogueCell(d).isCompacted());
  if (withDialogues.length === 0) return null;
  const base = stageOptions(p, ws, { signal, dryRun: true, progress: false, retryFailed: false, concurrency: 1 });
  const j = await runJudge({ ...base, judge: p.judge!.model, dimensions: p.judge!.dimensions, dialogueDirs: withDialogues });
  return j.dir;
}

function scenarioCount(ws: Workspace): number | null {
  return readManifest<{ tables?: { scenarios?: { rows?: number } } }>(scenariosDir(ws))?.tables?.scenarios?.rows ?? null;
}
