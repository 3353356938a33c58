import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { replaceDirectoryAtomic } from '../../../core/atomic.js';
import { PlensError, usageError } from '../../../core/errors.js';
import { currentDataset } from '../dataset-identity.js';
import { plensVersion } from '../../../core/version.js';
import type { Workspace } from '../../../core/workspace.js';
import { Database } from '../../../db/database.js';
import { requestedUsers, selectionSql, validateSelection, type ScenarioSelection } from './selection.js';
import { datasetFile, requireDataset, scenariosDir, scenariosFile } from '../dataset/workspace-files.js';

export interface ScenariosSummary {
  dry_run: boolean;
  file: string;
  selection: ScenarioSelection;
  scenarios: { total: number; sd: number; md: number };
  users: number;
  missing_users: number[];
  warnings: string[];
  elapsed_ms: number;
}

/** Selects scenarios from the imported pool and writes <workspace>/scenarios/scenarios.parquet. */
export async function runScenarios(workspace: Workspace, selection: ScenarioSelection, options: { dryRun?: boolean } = {}): Promise<ScenariosSummary> {
  const started = performance.now();
  requireDataset(workspace);
  validateSelection(selection);
  const db = await Database.open(':memory:', { threads: 2 });
  try {
    const poolFile = datasetFile(workspace, 'scenario_pool');
    if (selection.domains?.length) {
      const known = new Set(
        (await db.all<{ domain: string }>('SELECT domain FROM read_parquet($1)', undefined, [datasetFile(workspace, 'domains')])).map((r) => r.domain),
      );
      const unknown = selection.domains.filter((d) => !known.has(d));
      if (unknown.length) throw usageError(`--domains: unknown domain(s) ${unknown.map((d) => `"${d}"`).join(', ')}`, `known: ${[...known].join(', ')}`);
    }
    const select = selectionSql(selection, 'read_parquet($pool)');
    await db.run(`CREATE TABLE selected AS ${select.sql}`, undefined, { ...select.params, pool: poolFile });
    const [counts] = await db.all<{ total: number; sd: number; md: number; users: number }>(
      `SELECT count(*)::INTEGER AS total, count(*) FILTER (kind = 'SD')::INTEGER AS sd, count(*) FILTER (kind = 'MD')::INTEGER AS md,
              count(DISTINCT user_index)::INTEGER AS users FROM selected`,
    );
    const warnings: string[] = [];
    let missing: number[] = [];
    const requested = requestedUsers(selection);
    if (requested?.length) {
      const present = new Set((await db.all<{ i: number }>('SELECT DISTINCT user_index AS i FROM read_parquet($1)', undefined, [poolFile])).map((r) => r.i));
      missing = requested.filter((u) => !present.has(u));
      if (missing.length) warnings.push(`${missing.length} of ${requested.length} requested users have no scenarios in the dataset`);
    }
    // An empty selection is not a result: every later stage would fail on it, further from the cause.
    if (counts!.total === 0) throw await emptySelectionError(db, poolFile, selection, missing, requested);
    if (!options.dryRun) {
      await replaceDirectoryAtomic(scenariosDir(workspace), async (staging) => {
        await db.run('COPY selected TO $1 (FORMAT parquet, COMPRESSION zstd)', undefined, [join(staging, 'scenarios.parquet')]);
        const manifest = {
          stage: 'scenarios',
          plens_version: plensVersion,
          created_at: new Date().toISOString(),
          selection,
          // The import it selected from: later stages refuse to mix it with another.
          ...(currentDataset(workspace) ? { dataset: currentDataset(workspace) } : {}),
          tables: { scenarios: { file: 'scenarios.parquet', rows: counts!.total } },
          warnings,
        };
        await writeFile(join(staging, 'manifest.json'), JSON.stringify(manifest, null, 2) + '\n');
      });
    }
    return {
      dry_run: Boolean(options.dryRun),
      file: scenariosFile(workspace),
      selection,
      scenarios: { total: counts!.total, sd: counts!.sd, md: counts!.md },
      users: counts!.users,
      missing_users: missing,
      warnings,
      elapsed_ms: Math.round(performance.now() - started),
    };
  } finally {
    db.close();
  }
}

/** Says which criterion left nothing, and what the dataset has, so the user knows what to change. */
async function emptySelectionError(
  db: Database,
  poolFile: string,
  selection: ScenarioSelection,
  missing: number[],
  requested: number[] | undefined,
): Promise<PlensError> {
  const [has] = await db.all<{ users: number; lo: number; hi: number; sd: number; md: number }>(
    `SELECT count(DISTINCT user_index)::INTEGER AS users, min(user_index)::INTEGER AS lo, max(user_index)::INTEGER AS hi,
            count(*) FILTER (kind = 'SD')::INTEGER AS sd, count(*) FILTER (kind = 'MD')::INTEGER AS md FROM read_parquet($1)`,
    undefined,
    [poolFile],
  );
  const criteria = [
    `--kind ${selection.kind}`,
    selection.sample ? `--sample ${selection.sample}` : '',
    selection.users ? `--users (${selection.users.length} user(s))` : '',
    selection.domains?.length ? `--domains ${selection.domains.join(',')}` : '',
    selection.random !== undefined ? `--random ${selection.random}` : '',
  ].filter(Boolean);
  const why: string[] = [];
  if (requested && missing.length === requested.length) {
    why.push(requested.length === 0 ? 'no user is in both --sample and --users' : `none of the ${requested.length} requested user(s) is in the dataset`);
  }
  if (selection.random === 0) why.push('--random 0 keeps nothing');
  return new PlensError('E_PREREQUISITE', `the scenario selection is empty (${criteria.join(' AND ')})${why.length ? `: ${why.join('; ')}` : ''}`, {
    hint: `the dataset has ${has!.users} users (indices ${has!.lo}-${has!.hi}) and ${has!.sd} SD + ${has!.md} MD scenarios; widen --users, --sample, --domains or --kind (in a pipeline: scenarios:)`,
  });
}

export function formatScenariosSummary(s: ScenariosSummary): string {
  const lines = [`${s.dry_run ? 'Would select' : 'Selected'} ${s.scenarios.total} scenarios (${s.scenarios.sd} SD + ${s.scenarios.md} MD) of ${s.users} users`];
  if (!s.dry_run) lines.push(`  written to ${s.file}`);
  for (const w of s.warnings) lines.push(`  warning: ${w}`);
  if (s.missing_users.length) lines.push(`  missing users: ${s.missing_users.slice(0, 20).join(', ')}${s.missing_users.length > 20 ? ', ...' : ''}`);
  return lines.join('\n');
}
