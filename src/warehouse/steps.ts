import { readFileSync } from 'node:fs';
import { PlensError } from '../core/errors.js';
import { sqlList, type Database } from '../db/database.js';
import { computeLexical, LEXICAL_SQL, type LexicalProtocol } from '../stats/lexical.js';
import { DEFAULT_LAPS_SPEAKERS, speakerGroupsInOrder, type SpeakerGroup } from '../stats/speaker-groups.js';
import type { WarehouseSqlFile } from './sql-files.js';
import { runWithStepCache, stepFingerprint, type CacheableStep, type StepRun } from './step-cache.js';

/** What a build step may use: the database being built and the build's settings. */
export interface StepContext {
  db: Database;
  /** Protocols for the lexical_diversity step; empty: the step writes an empty table. */
  lexical: readonly LexicalProtocol[];
  /** The speaker groups the laps protocol measures (default DEFAULT_LAPS_SPEAKERS: both); full measures all three. */
  lapsSpeakers?: readonly SpeakerGroup[];
  /** Folder of cached step outputs (see step-cache.ts); null: always compute, store nothing. */
  cacheDir: string | null;
}

interface WarehouseStep extends CacheableStep {
  run: (ctx: StepContext) => Promise<void>;
  /** The settings that change the output (part of the fingerprint); null: nothing worth caching. */
  settings: (ctx: StepContext) => Record<string, unknown> | null;
  /** Source text the outputs depend on besides the inputs (e.g. the SQL macros it calls). */
  sources: () => string[];
}

/**
 * Computations a warehouse .sql file can ask for with `-- step: NAME`: they run before the file, in
 * SQL driven from TypeScript, where plain SQL cannot do the job (the laps protocol draws its subsets
 * with Python's random stream). Their outputs are cached by the fingerprint of their inputs.
 */
export const WAREHOUSE_STEPS: Record<string, WarehouseStep> = {
  lexical_diversity: {
    name: 'lexical_diversity',
    version: '1',
    outputs: ['lexical_diversity'],
    // Every column the step reads, per finished utterance: a change to any of them changes the sum.
    inputQuery: `SELECT count(*)::BIGINT AS n, sum(hash(t.assistant_model, t.kind, t.speaker, t.scenario_id, t.setting, d.replicate, t.dialogue_id, t.turn, t.text))::VARCHAR AS h
      FROM turns t JOIN dialogues d USING (dialogue_id) WHERE t.status = 'ok' AND t.text IS NOT NULL`,
    run: buildLexicalDiversity,
    settings: ({ lexical, lapsSpeakers }) =>
      lexical.length === 0 ? null : { lexical: [...lexical].sort(), ...(lexical.includes('laps') ? { laps_speakers: lapsSpeakersOf(lapsSpeakers) } : {}) },
    sources: () => [readFileSync(LEXICAL_SQL, 'utf8')],
  },
};

export async function runStep(name: string, ctx: StepContext, file: string): Promise<StepRun> {
  const step = WAREHOUSE_STEPS[name];
  if (!step) throw new PlensError('E_SQL', `unknown step "${name}"; known: ${Object.keys(WAREHOUSE_STEPS).join(', ')}`, { location: { file } });
  const settings = step.settings(ctx);
  const fingerprint = ctx.cacheDir && settings !== null ? await stepFingerprint(ctx.db, step, settings, step.sources()) : null;
  return runWithStepCache(ctx.db, step, fingerprint, ctx.cacheDir, () => step.run(ctx), settings);
}

const lapsSpeakersOf = (groups: readonly SpeakerGroup[] | undefined): SpeakerGroup[] => speakerGroupsInOrder(groups ?? DEFAULT_LAPS_SPEAKERS);

/**
 * Table lexical_diversity: Dist-1, Dist-2, Ent-4 and Self-BLEU of the finished dialogues' utterances per
 * assistant and task kind (all settings and user agents together, as the paper pools its dialogues), for
 * both speakers together and each alone: the full protocol for all three groups, the laps protocol for
 * the groups in lapsSpeakers (by default both speakers, the paper's row). Corpus order: scenario,
 * setting, replicate, turn. Each laps group costs about the same whatever its size (100 subsets of 7,012
 * tokens): about a second of CPU.
 */
async function buildLexicalDiversity({ db, lexical, lapsSpeakers }: StepContext): Promise<void> {
  await db.run(`
    CREATE OR REPLACE TEMP TABLE lexical_groups AS
    SELECT DISTINCT assistant_model, kind, s.speaker_group, concat_ws(' | ', assistant_model, kind, s.speaker_group) AS grp
    FROM turns, (VALUES ('both'), ('user'), ('assistant')) s(speaker_group)
    WHERE status = 'ok';
    CREATE OR REPLACE TEMP TABLE lexical_dialogue_corpus AS
    SELECT concat_ws(' | ', t.assistant_model, t.kind, s.speaker_group) AS grp,
      row_number() OVER (PARTITION BY t.assistant_model, t.kind, s.speaker_group
                         ORDER BY t.scenario_id, t.setting, d.replicate, t.dialogue_id, t.turn) AS utt,
      t.text
    FROM turns t JOIN dialogues d USING (dialogue_id), (VALUES ('both'), ('user'), ('assistant')) s(speaker_group)
    WHERE t.status = 'ok' AND t.text IS NOT NULL AND (s.speaker_group = 'both' OR s.speaker_group = t.speaker);`);
  const columns = `g.assistant_model, g.kind, g.speaker_group AS speakers`;
  if (lexical.length === 0) {
    await db.run(`CREATE OR REPLACE TABLE lexical_diversity AS SELECT ${columns}, NULL::VARCHAR AS protocol, NULL::BIGINT AS n_utterances, NULL::BIGINT AS n_empty,
      NULL::BIGINT AS n_tokens, NULL::BIGINT AS iterations, NULL::DOUBLE AS dist_1, NULL::DOUBLE AS dist_2, NULL::DOUBLE AS ent_4, NULL::DOUBLE AS self_bleu
      FROM lexical_groups g LIMIT 0`);
  } else {
    const lapsGroups = await db.all<{ grp: string }>(`SELECT grp FROM lexical_groups WHERE list_contains($1, speaker_group)`, undefined, [
      sqlList(lapsSpeakersOf(lapsSpeakers)),
    ]);
    await computeLexical(db, 'lexical_dialogue_corpus', 'lexical_diversity_raw', { protocols: lexical, lapsGroups: lapsGroups.map((g) => g.grp) });
    await db.run(`
      CREATE OR REPLACE TABLE lexical_diversity AS
      SELECT ${columns}, r.* EXCLUDE (grp) FROM lexical_diversity_raw r JOIN lexical_groups g USING (grp);
      DROP TABLE lexical_diversity_raw;`);
  }
  await db.run(`DROP TABLE lexical_groups; DROP TABLE lexical_dialogue_corpus;`);
}

type Settled<T> = { ok: true; value: T } | { ok: false; error: unknown };

/**
 * Computed steps started early, on a second connection to the database being built: Table 10 needs
 * only turns and dialogues, which exist long before its file runs, so it runs beside the files in
 * between. A step starts as soon as its file could run (the files it requires exist, the relations it
 * requires are there); the files in between must not change those relations (they only add tables and
 * views). Its outcome is taken where its file runs, so a failure fails the build there like any other.
 * On any failure the second connection is interrupted and closed, and every started step settled,
 * before the database closes: nothing runs on, or rejects from, a closed connection.
 */
export class EarlySteps {
  private side: Database | null = null;
  /** One statement at a time on a connection: steps on the second one run one after another. */
  private chain: Promise<unknown> = Promise.resolve();
  private readonly started = new Map<string, Promise<Settled<StepRun>>>();

  constructor(
    private readonly db: Database,
    private readonly settings: Omit<StepContext, 'db'>,
  ) {}

  /** Starts the steps of `files` whose requirements are met and that have not started yet. */
  async startReady(files: readonly WarehouseSqlFile[], existing: ReadonlySet<string>, hasFile: (pattern: string) => boolean): Promise<void> {
    for (const file of files) {
      if (file.steps.length === 0 || !file.requiresRelations.every((r) => existing.has(r)) || !file.requiresFiles.every(hasFile)) continue;
      for (const step of file.steps) {
        const key = `${file.name}:${step}`;
        if (this.started.has(key)) continue;
        this.side ??= await this.db.connect();
        const ctx: StepContext = { ...this.settings, db: this.side };
        const run = this.chain.then(() => runStep(step, ctx, file.path));
        this.chain = run.catch(() => undefined);
        this.started.set(
          key,
          run.then(
            (value) => ({ ok: true, value }),
            (error: unknown) => ({ ok: false, error }),
          ),
        );
      }
    }
  }

  /** The step's run: awaited if it started early (its failure thrown here), else run now by `inPlace`. */
  async result(file: WarehouseSqlFile, step: string, inPlace: () => Promise<StepRun>): Promise<StepRun> {
    const started = this.started.get(`${file.name}:${step}`);
    if (!started) return inPlace();
    const settled = await started;
    if (!settled.ok) throw settled.error;
    return { ...settled.value, early: true };
  }

  /** After the last file: every started step has settled; the second connection closes. */
  async finish(): Promise<void> {
    await Promise.all(this.started.values());
    await this.side?.close();
  }

  /** On a failed build: stops the running statement, refuses the next ones, and waits for every step to settle. */
  async cancel(): Promise<void> {
    if (!this.side) return;
    this.side.interrupt();
    const closing = this.side.close();
    await Promise.all(this.started.values());
    await closing;
  }
}
