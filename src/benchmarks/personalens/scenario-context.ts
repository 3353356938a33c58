import { existsSync } from 'node:fs';
import { PlensError } from '../../core/errors.js';
import type { Workspace } from '../../core/workspace.js';
import { Database, sqlString } from '../../db/database.js';
import type { Scenario } from './scenarios/scenario.js';
import { datasetFile, requireDataset, scenariosDir, scenariosFile } from './dataset/workspace-files.js';

/** A selected scenario as the dialogue stage streams it (cheap: ids and situation only). */
export type ScenarioRow = Omit<Scenario, 'task_key'>;

/** What counting the work needs of a scenario: its id, and its kind for estimates. */
export type ScenarioHead = Pick<ScenarioRow, 'scenario_id' | 'kind'>;

/** Everything the agents may be shown about a scenario, already rendered as text blocks. */
export interface ScenarioContext {
  /** `- <field>: <value>` lines with the profile's own keys, as the agents see them (no user_id line). */
  demographics: string;
  /** The same with the profile's `user_id` line first: the judge's copy in the original. */
  demographicsWithId: string;
  /** The relevant domains' preferences (grouped by domain for MD). The assistant never gets these. */
  preferences: string;
  interactions: string;
  situation: string;
  intent: string;
  goal: string;
  /** "type: value" lines of the task's relevant preference types (the simulator's material). */
  relevantPreferences: string[];
}

interface UserDomain {
  domain: string;
  preferences: Array<{ type: string; values: string[] }>;
  interactions: string | null;
}

/** The profile's demographic fields and how prompts and annotation sheets label them. */
export const DEMOGRAPHIC_LABELS: Array<[string, string]> = [
  ['age', 'Age'],
  ['gender', 'Gender'],
  ['employment_status', 'Employment status'],
  ['education', 'Education'],
  ['marital_status', 'Marital status'],
  ['english_proficiency', 'English proficiency'],
  ['ethnicity', 'Ethnicity'],
  ['religion', 'Religion'],
  ['birth_country', 'Country of birth'],
  ['reside_country', 'Country of residence'],
];

interface UserProfile {
  demographics: string;
  demographicsWithId: string;
}

/** A batch's users' relevant domains, by user id and domain. */
type BatchDomains = Map<string, Map<string, UserDomain>>;

/**
 * How many scenarios share one batch of context queries. Each query decompresses whole Parquet
 * row groups (2,048 rows of past interactions), so larger batches read each group fewer times:
 * 512 cut the context CPU of 5k scenarios by a quarter against 128. Turning a batch's rows into
 * objects holds the main thread; with the users read once at open, the dialogue bench's
 * event-loop delay (p99) was the same at 512 as at 128.
 */
const BATCH = 512;
const FIRST_BATCH = 32;

/**
 * Reads scenarios and their context from the workspace's Parquet. Context is loaded for a batch of
 * scenarios at a time (one query per table for all their users), so a run costs a few queries per
 * batch, and memory holds one batch, whatever the number of scenarios.
 */
export class ScenarioContextSource {
  private readonly tasks = new Map<string, { intent: string; goal: string }>();
  /** Every user's profile lines, read once: the users table is small, and one query a batch cost more than the rest of it. */
  private readonly users = new Map<string, UserProfile>();

  private constructor(
    private readonly db: Database,
    /** A second connection: a query on the first would cut an open stream short. */
    private readonly streamDb: Database,
    private readonly workspace: Workspace,
  ) {}

  static async open(workspace: Workspace): Promise<ScenarioContextSource> {
    requireDataset(workspace);
    if (!existsSync(scenariosFile(workspace))) {
      throw new PlensError('E_PREREQUISITE', `no scenarios selected in ${scenariosDir(workspace)}`, { hint: 'run `plens scenarios` first' });
    }
    // One thread keeps the scenario stream in stored order (and --limit deterministic).
    const db = await Database.open(':memory:', { threads: 1, memoryLimit: '256MB' });
    let streamDb: Database | undefined;
    try {
      // A view's body cannot bind values: the paths are written in as literals.
      const file = (t: string) => sqlString(datasetFile(workspace, t));
      // Views, not tables: context is read from Parquet a batch at a time, never held whole.
      await db.run(`
        CREATE VIEW users AS SELECT * FROM read_parquet(${file('users')});
        CREATE VIEW interactions AS SELECT * FROM read_parquet(${file('interactions')});
        CREATE TABLE preference_order AS SELECT domain, preference_type, position AS type_position FROM read_parquet(${file('preference_schema')});
        CREATE VIEW affinities AS
          SELECT a.user_id, a.user_index, a.domain, a.preference_type, list(a.value ORDER BY a.position) FILTER (a.value IS NOT NULL) AS vals, min(p.type_position) AS type_position
          FROM read_parquet(${file('affinities')}) a JOIN preference_order p USING (domain, preference_type)
          GROUP BY ALL;
        -- Every batch reads the same files: their footers are read once, not once a query. It
        -- took a third off a batch's queries, and the last of a run's first wave of dialogues
        -- at c=256 started ~70 ms sooner (docs/performance.md). Set once the views have loaded
        -- the Parquet reader, whose setting it is.
        SET parquet_metadata_cache = true;
      `);
      streamDb = await Database.open(':memory:', { threads: 1, memoryLimit: '128MB' });
      const source = new ScenarioContextSource(db, streamDb, workspace);
      for (const t of await db.all<{ task_id: string; user_intent: string; goal: string }>(
        'SELECT task_id, user_intent, goal FROM read_parquet($1)',
        undefined,
        [datasetFile(workspace, 'tasks')],
      )) {
        source.tasks.set(t.task_id, { intent: t.user_intent, goal: t.goal });
      }
      for (const row of await db.all<Record<string, string>>('SELECT * FROM users')) {
        const lines = DEMOGRAPHIC_LABELS.map(([k]) => `- ${k}: ${row[k]}`);
        source.users.set(row['user_id']!, {
          demographics: lines.join('\n'),
          demographicsWithId: [`- user_id: ${row['user_id']}`, ...lines].join('\n'),
        });
      }
      return source;
    } catch (error) {
      await Promise.all([db.close(), streamDb?.close()]);
      throw error;
    }
  }

  /** The selected scenarios, streamed in their stored order. */
  async *scenarios(): AsyncGenerator<ScenarioRow> {
    yield* this.streamDb.stream<ScenarioRow>(
      `SELECT scenario_id, user_id, user_index, task_id, kind, relevant_domains, relevant_preference_types, location, device, time_of_day, day_of_week, environment
       FROM read_parquet($1)`,
      [scenariosFile(this.workspace)],
    );
  }

  /** The selected scenarios' ids and kinds, in stored order: several times cheaper to stream than whole rows. */
  async *scenarioHeads(): AsyncGenerator<ScenarioHead> {
    yield* this.streamDb.stream<ScenarioHead>('SELECT scenario_id, kind FROM read_parquet($1)', [scenariosFile(this.workspace)]);
  }

  /** The selected scenarios with their context. */
  async *scenariosWithContext(): AsyncGenerator<{ scenario: ScenarioRow; context: ScenarioContext }> {
    for await (const { row, context } of this.withContext(this.scenarios())) yield { scenario: row, context };
  }

  /**
   * Any stream of scenario rows (selected scenarios, judged dialogues) with their context, loaded
   * a batch at a time; the next batch loads while the current one is being worked on, so workers
   * never wait for a query.
   */
  async *withContext<T extends ScenarioRow>(rows: AsyncIterable<T>): AsyncGenerator<{ row: T; context: ScenarioContext }> {
    // Loads run ahead of the consumer. One the consumer never reaches (it stopped early, or an
    // earlier batch failed) is still awaited before this generator ends, so no query outlives it
    // and none rejects with no one listening.
    const started = new Set<Promise<unknown>>();
    const load = (batch: T[]) => {
      const p = (async () => ({ batch, domains: await this.loadDomains([...new Set(batch.map((s) => s.user_index))], batch) }))();
      started.add(p);
      p.then(
        () => started.delete(p),
        () => undefined,
      );
      return p;
    };
    let pending: ReturnType<typeof load> | undefined;
    let batch: T[] = [];
    // Small first batches put the first items in the workers' hands at once; then full batches.
    let size = FIRST_BATCH;
    const emit = async function* (this: ScenarioContextSource, loaded: Awaited<ReturnType<typeof load>>) {
      for (const row of loaded.batch) yield { row, context: this.contextOf(row, loaded.domains) };
    }.bind(this);
    try {
      for await (const s of rows) {
        batch.push(s);
        if (batch.length >= size) {
          const next = load(batch);
          batch = [];
          size = Math.min(BATCH, size * 2);
          if (pending) yield* emit(await pending);
          pending = next;
        }
      }
      const last = batch.length ? load(batch) : undefined;
      if (pending) yield* emit(await pending);
      if (last) yield* emit(await last);
    } finally {
      await Promise.allSettled([...started]);
    }
  }

  /** Streams any query over the workspace on the stream connection (e.g. dialogues to judge). */
  stream<T>(sql: string): AsyncGenerator<T> {
    return this.streamDb.stream<T>(sql);
  }

  /** One scenario's context (loads its user; use scenariosWithContext for many). */
  async contextFor(s: ScenarioRow): Promise<ScenarioContext> {
    return this.contextOf(s, await this.loadDomains([s.user_index], [s]));
  }

  private contextOf(s: ScenarioRow, batch: BatchDomains): ScenarioContext {
    const user = this.users.get(s.user_id);
    if (!user) throw new PlensError('E_PREREQUISITE', `user ${s.user_id} of the scenarios is not in the import; rerun plens scenarios`);
    const task = this.tasks.get(s.task_id);
    if (!task)
      throw new PlensError('E_PREREQUISITE', `scenario ${s.scenario_id} names task ${s.task_id}, which the import does not have; rerun plens scenarios`);
    const own = batch.get(s.user_id);
    const domains = s.relevant_domains.map((d) => own?.get(d) ?? { domain: d, preferences: [], interactions: null });
    // The original's rendering, byte for byte: `- <type>: <value>` lines (a list joined with ", ").
    // MD builds one chunk per domain that starts and ends with a newline and concatenates the
    // chunks as they are: "\n<Domain>:\n" + lines + "\n" for the preferences, and
    // "\n<Domain>\n" + summary + "\n</Domain>\n" for the past interactions (generate_dialogue_md.py,
    // evaluate_dialogue.py -md), so the blocks carry their blank lines into every prompt.
    const preferenceLines = (d: UserDomain) => d.preferences.map((p) => `- ${p.type}: ${p.values.join(', ')}`).join('\n');
    const md = s.kind === 'MD';
    // SD takes the first relevant domain's values alone, as the original does.
    const preferences = md ? domains.map((d) => `\n${d.domain}:\n${preferenceLines(d)}\n`).join('') : domains.slice(0, 1).map(preferenceLines).join('');
    const interactions = md ? domains.map((d) => `\n<${d.domain}>\n${d.interactions ?? ''}\n</${d.domain}>\n`).join('') : (domains[0]?.interactions ?? '');
    const relevant = new Set(s.relevant_preference_types);
    const relevantPreferences = domains.flatMap((d) =>
      d.preferences.filter((p) => relevant.has(p.type) && p.values.length).map((p) => `${p.type}: ${p.values.join(', ')}`),
    );
    return {
      demographics: user.demographics,
      demographicsWithId: user.demographicsWithId,
      preferences,
      interactions,
      situation: [
        `- Location: ${s.location}`,
        `- Device: ${s.device}`,
        `- Time of Day: ${s.time_of_day}`,
        `- Day of the Week: ${s.day_of_week}`,
        `- Environment: ${s.environment}`,
      ].join('\n'),
      intent: task.intent,
      goal: task.goal,
      relevantPreferences,
    };
  }

  /** The preferences and past interactions of the (user, domain) pairs a batch of scenarios needs. */
  private async loadDomains(userIndices: number[], scenarios: ScenarioRow[]): Promise<BatchDomains> {
    const out: BatchDomains = new Map();
    if (userIndices.length === 0) return out;
    // The index range lets DuckDB skip row groups by their statistics; the list picks the users.
    const list = `user_index BETWEEN ${Math.min(...userIndices)} AND ${Math.max(...userIndices)} AND user_index IN (${userIndices.map((i) => Math.trunc(i)).join(', ')})`;
    // Only the (user, domain) pairs the scenarios need: most of a user's 20 domains are not relevant.
    const pairs = [...new Set(scenarios.flatMap((s) => s.relevant_domains.map((d) => `${Math.trunc(s.user_index)}:${d}`)))];
    const needed = `AND (user_index::VARCHAR || ':' || domain) IN (${pairs.map(sqlString).join(', ')})`;
    const domain = (userId: string, d: string): UserDomain => {
      let user = out.get(userId);
      if (!user) out.set(userId, (user = new Map()));
      let x = user.get(d);
      if (!x) user.set(d, (x = { domain: d, preferences: [], interactions: null }));
      return x;
    };
    for (const a of await this.db.all<{ user_id: string; domain: string; preference_type: string; vals: string[] | null }>(
      `SELECT user_id, domain, preference_type, vals FROM affinities WHERE ${list} ${needed} ORDER BY user_id, domain, type_position`,
    )) {
      domain(a.user_id, a.domain).preferences.push({ type: a.preference_type, values: a.vals ?? [] });
    }
    for (const i of await this.db.all<{ user_id: string; domain: string; summary: string }>(
      `SELECT user_id, domain, summary FROM interactions WHERE ${list} ${needed}`,
    )) {
      domain(i.user_id, i.domain).interactions = i.summary;
    }
    return out;
  }

  /** Closes both connections once the queries in flight on them have settled. */
  async close(): Promise<void> {
    await Promise.all([this.db.close(), this.streamDb.close()]);
  }
}
