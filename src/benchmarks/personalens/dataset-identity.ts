import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { writeFileAtomic } from '../../core/atomic.js';
import { PlensError } from '../../core/errors.js';
import type { Workspace } from '../../core/workspace.js';
import type { StageInputs } from '../../engine/llm-stage.js';
import { datasetDir, scenariosDir } from './dataset/workspace-files.js';

/**
 * Which dataset import a stage's output was built from. The import records a fingerprint of what
 * it imported (its users, tasks and scenario pool); the scenario selection and every dialogue cell
 * and judgment folder record the fingerprint they were made on. A stage or warehouse that would
 * put outputs of two different imports together (the sample's dialogues next to the released
 * data, whose scenario ids collide) refuses instead. Outputs made before fingerprints existed
 * carry none and are not checked.
 */
export interface DatasetIdentity {
  fingerprint: string;
  /** Where the import read from, for messages. */
  data_dir: string;
}

export const DATASET_MARKER = 'dataset.json';

/** The fingerprint of the workspace's current import, if it has one. */
export function currentDataset(workspace: Workspace): DatasetIdentity | undefined {
  const manifest = readJson(join(datasetDir(workspace), 'manifest.json')) as { fingerprint?: string; source?: { data_dir?: string } } | undefined;
  if (!manifest?.fingerprint) return undefined;
  return { fingerprint: manifest.fingerprint, data_dir: manifest.source?.data_dir ?? '?' };
}

/** Records in an output folder (a dialogue cell, a judgment folder) the import it is built on; once. */
export async function recordDataset(dir: string, workspace: Workspace): Promise<void> {
  const current = currentDataset(workspace);
  if (!current || existsSync(join(dir, DATASET_MARKER))) return;
  await writeFileAtomic(join(dir, DATASET_MARKER), JSON.stringify(current, null, 2) + '\n');
}

/**
 * Refuses when the scenario selection, a dialogue cell or a judgment folder of the workspace was
 * made on another import than the current one. `doing` says what would have mixed them.
 */
export function assertOneImport(workspace: Workspace, doing: string): void {
  const current = currentDataset(workspace);
  if (!current) return;
  const others: Array<{ what: string; identity: DatasetIdentity }> = [];
  const scenarios = readJson(join(scenariosDir(workspace), 'manifest.json')) as { dataset?: DatasetIdentity } | undefined;
  if (scenarios?.dataset && scenarios.dataset.fingerprint !== current.fingerprint)
    others.push({ what: shown(scenariosDir(workspace)), identity: scenarios.dataset });
  for (const stage of ['dialogues', 'judgments']) {
    const root = join(workspace.root, stage);
    if (!existsSync(root)) continue;
    for (const entry of readdirSync(root, { withFileTypes: true })) {
      if (!entry.isDirectory()) continue;
      const marker = readJson(join(root, entry.name, DATASET_MARKER)) as DatasetIdentity | undefined;
      if (marker && marker.fingerprint !== current.fingerprint) others.push({ what: shown(join(root, entry.name)), identity: marker });
    }
  }
  if (others.length === 0) return;
  const first = others[0]!;
  const more = others.length > 1 ? ` (and ${others.length - 1} more folder(s))` : '';
  const scenariosStale = others.some((o) => o.what.endsWith('scenarios'));
  throw new PlensError(
    'E_PREREQUISITE',
    `${doing} would mix two dataset imports: ${first.what}${more} was made on the import of ${first.identity.data_dir} (${first.identity.fingerprint.slice(0, 12)}), the workspace now holds the import of ${current.data_dir} (${current.fingerprint.slice(0, 12)})`,
    {
      hint:
        scenariosStale && others.length === 1
          ? 'rerun `plens scenarios` to select from the current import'
          : 'give each dataset its own workspace and warehouse (-w DIR --db FILE), or remove the folders made on the other import',
    },
  );
}

/**
 * Refuses, before the import replaces anything, to put an import of other data over one that paid
 * work was built on (dialogue cells, judgments): the work would be stranded on a dataset the
 * workspace no longer holds (say, the demo's sample imported over the released data's workspace).
 * Re-importing the same data, the data the work was made on, or into a workspace with no such
 * work goes ahead; a scenario selection alone is remade in seconds (the next stage says so).
 */
export function assertImportReplaceable(workspace: Workspace, fingerprint: string, dataDir: string): void {
  const current = currentDataset(workspace);
  if (!current || current.fingerprint === fingerprint) return;
  // Work made on the incoming data (its marker says so) is not stranded by it: it comes home.
  const strandedBy = (identity: DatasetIdentity | undefined) => identity?.fingerprint !== fingerprint;
  const built = [
    ...['dialogues', 'judgments'].flatMap((stage) => {
      const root = join(workspace.root, stage);
      const stranded =
        existsSync(root) &&
        readdirSync(root, { withFileTypes: true }).some(
          (e) => e.isDirectory() && strandedBy(readJson(join(root, e.name, DATASET_MARKER)) as DatasetIdentity | undefined),
        );
      return stranded ? [shown(root)] : [];
    }),
  ];
  if (built.length === 0) return;
  throw new PlensError(
    'E_PREREQUISITE',
    `importing ${dataDir} (${fingerprint.slice(0, 12)}) would replace the workspace's import of ${current.data_dir} (${current.fingerprint.slice(0, 12)}), on which ${built.join(', ')} ${built.length > 1 ? 'were' : 'was'} made; nothing was written`,
    {
      location: { file: datasetDir(workspace) },
      hint: "import into a workspace of its own (-w DIR, or the pipeline's workspace:), or remove that work first if it is no longer wanted",
    },
  );
}

/** A path as the user would type it: relative when below the current directory. */
function shown(path: string): string {
  const rel = relative(process.cwd(), path);
  return rel && !rel.startsWith('..') ? rel : path;
}

function readJson(file: string): unknown {
  try {
    return JSON.parse(readFileSync(file, 'utf8'));
  } catch {
    return undefined;
  }
}

/**
 * The dataset guard PersonaLens's LLM stages give the kit: refuse a workspace that mixes imports,
 * name the import in the run record, and mark each output folder with the import it is built on.
 */
export function datasetInputs(workspace: Workspace): StageInputs {
  return {
    assertConsistent: (doing) => assertOneImport(workspace, doing),
    fingerprint: () => currentDataset(workspace)?.fingerprint ?? null,
    record: (dir) => recordDataset(dir, workspace),
  };
}
