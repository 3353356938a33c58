import { existsSync } from 'node:fs';
import { PlensError } from '../core/errors.js';
import type { Workspace } from '../core/workspace.js';
import { Database, sqlString } from '../db/database.js';

/** A selected scenario as the dialogue stage streams it (cheap: ids and situation only). */
export interface ScenarioRow {
  scenario_id: string;
  user_id: string;
  task_id: string;
  kind: 'SD' | 'MD';
  relevant_domains: string[];
  relevant_preference_types: string[];
  location: string;
  device: string;
  time_of_day: string;
  day_of_week: string;
  environment: string;
}

/** Everything the agents may be shown about a scenario, already rendered as text blocks. */
export interface ScenarioContext {
  demographics: string;
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

const DEMOGRAPHIC_LABELS: Array<[string, string]> = [
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

/** Reads scenarios and their context from the workspace's Parquet, one user at a time. */
export class ScenarioContextSource {
  private readonly users = new Map<string, Promise<{ demographics: string; domains: Map<string, UserDomain> }>>();
  private readonly tasks = new Map<string, { intent: string; goal: string }>();

  private constructor(
    private readonly db: Database,
    private readonly workspace: Workspace,
  ) {}

  static async open(workspace: Workspace): Promise<ScenarioContextSource> {
    workspace.requireDataset();
    if (!existsSync(workspace.scenariosFile)) {
      throw new PlensError('E_PREREQUISITE', `no scenarios selected in ${workspace.scenariosDir}`, { hint: 'run `plens scenarios` first' });
    }
    const db = await Database.open(':memory:', { threads: 2 });
    const file = (t: string) => sqlString(workspace.datasetFile(t));
    await db.run(`
      CREATE TABLE users AS SELECT * FROM read_parquet(${file('users')});
      CREATE TABLE interactions AS SELECT * FROM read_parquet(${file('interactions')}) ORDER BY user_id;
      CREATE TABLE affinities AS
        SELECT a.user_id, a.domain, a.preference_type, list(a.value ORDER BY a.position) FILTER (a.value IS NOT NULL) AS vals, min(p.position) AS type_position
        FROM read_parquet(${file('affinities')}) a JOIN read_parquet(${file('preference_schema')}) p USING (domain, preference_type)
        GROUP BY ALL ORDER BY user_id;
    `);
    const source = new ScenarioContextSource(db, workspace);
    for (const t of await db.all<{ task_id: string; user_intent: string; goal: string }>(`SELECT task_id, user_intent, goal FROM read_parquet(${file('tasks')})`)) {
      source.tasks.set(t.task_id, { intent: t.user_intent, goal: t.goal });
    }
    return source;
  }

  /** The selected scenarios, streamed in their stored order. */
  async *scenarios(): AsyncGenerator<ScenarioRow> {
    yield* this.db.stream<ScenarioRow>(
      `SELECT scenario_id, user_id, task_id, kind, relevant_domains, relevant_preference_types, location, device, time_of_day, day_of_week, environment
       FROM read_parquet(${sqlString(this.workspace.scenariosFile)})`,
    );
  }

  async count(): Promise<number> {
    return (await this.db.all<{ n: number }>(`SELECT count(*)::INTEGER AS n FROM read_parquet(${sqlString(this.workspace.scenariosFile)})`))[0]!.n;
  }

  async contextFor(s: ScenarioRow): Promise<ScenarioContext> {
    const user = await this.user(s.user_id);
    const task = this.tasks.get(s.task_id);
    if (!task) throw new PlensError('E_PREREQUISITE', `scenario ${s.scenario_id} names task ${s.task_id}, which the import does not have; rerun plens scenarios`);
    const domains = s.relevant_domains.map((d) => user.domains.get(d) ?? { domain: d, preferences: [], interactions: null });
    const grouped = domains.length > 1;
    const section = (d: UserDomain, body: string) => (grouped ? `## ${d.domain}\n${body}` : body);
    const preferences = domains
      .map((d) => section(d, d.preferences.map((p) => `- ${p.type}: ${p.values.length ? p.values.join(', ') : '(none)'}`).join('\n')))
      .join('\n\n');
    const interactions = domains
      .filter((d) => d.interactions)
      .map((d) => section(d, d.interactions!))
      .join('\n\n');
    const relevant = new Set(s.relevant_preference_types);
    const relevantPreferences = domains.flatMap((d) => d.preferences.filter((p) => relevant.has(p.type) && p.values.length).map((p) => `${p.type}: ${p.values.join(', ')}`));
    return {
      demographics: user.demographics,
      preferences,
      interactions,
      situation: [
        `Location: ${s.location}`,
        `Device: ${s.device}`,
        `Time of day: ${s.time_of_day}`,
        `Day of the week: ${s.day_of_week}`,
        `Environment: ${s.environment}`,
      ].join('\n'),
      intent: task.intent,
      goal: task.goal,
      relevantPreferences,
    };
  }

  private user(userId: string) {
    let p = this.users.get(userId);
    if (!p) {
      p = this.loadUser(userId);
      this.users.set(userId, p);
      // Scenarios come grouped by user; a small window of users keeps memory flat.
      if (this.users.size > 256) this.users.delete(this.users.keys().next().value!);
    }
    return p;
  }

  private async loadUser(userId: string) {
    const [row] = await this.db.all<Record<string, string>>('SELECT * FROM users WHERE user_id = $1', undefined, [userId]);
    if (!row) throw new PlensError('E_PREREQUISITE', `user ${userId} of the scenarios is not in the import; rerun plens scenarios`);
    const demographics = DEMOGRAPHIC_LABELS.map(([k, label]) => `${label}: ${row[k]}`).join('\n');
    const domains = new Map<string, UserDomain>();
    const get = (d: string) => {
      let x = domains.get(d);
      if (!x) domains.set(d, (x = { domain: d, preferences: [], interactions: null }));
      return x;
    };
    for (const a of await this.db.all<{ domain: string; preference_type: string; vals: string[] | null }>(
      'SELECT domain, preference_type, vals FROM affinities WHERE user_id = $1 ORDER BY domain, type_position',
      undefined,
      [userId],
    )) {
      get(a.domain).preferences.push({ type: a.preference_type, values: a.vals ?? [] });
    }
    for (const i of await this.db.all<{ domain: string; summary: string }>('SELECT domain, summary FROM interactions WHERE user_id = $1', undefined, [userId])) {
      get(i.domain).interactions = i.summary;
    }
    return { demographics, domains };
  }

  close(): void {
    this.db.close();
  }
}
