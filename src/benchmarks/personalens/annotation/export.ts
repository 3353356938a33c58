import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { stringify } from 'csv-stringify/sync';
import { replaceDirectoryAtomic } from '../../../core/atomic.js';
import { PlensError, usageError } from '../../../core/errors.js';
import { plensVersion } from '../../../core/version.js';
import type { Workspace } from '../../../core/workspace.js';
import { Database, sqlList } from '../../../db/database.js';
import { PromptSet, type TemplateName } from '../prompt-set.js';
import { requireWarehouse } from '../../../warehouse/build.js';
import { DEMOGRAPHIC_LABELS } from '../scenario-context.js';

/**
 * The labels people give, one sheet column each, matching the judge's dimension and target
 * (the `judgments` table) so the warehouse can pair them (Table 5). Ranges follow the judge.
 */
export const LABEL_COLUMNS = [
  { column: 'task_completion', dimension: 'task_completion', target: 'dialogue', min: 0, max: 1, label: 'TC', title: 'Task completion' },
  { column: 'personalization', dimension: 'personalization', target: 'assistant', min: 1, max: 4, label: 'P', title: 'Personalization' },
  { column: 'naturalness_user', dimension: 'naturalness', target: 'user', min: 1, max: 5, label: 'Nat (U)', title: "Naturalness of the user's utterances" },
  { column: 'coherence_user', dimension: 'coherence', target: 'user', min: 1, max: 5, label: 'Coh (U)', title: "Coherence of the user's utterances" },
  {
    column: 'naturalness_assistant',
    dimension: 'naturalness',
    target: 'assistant',
    min: 1,
    max: 5,
    label: 'Nat (A)',
    title: "Naturalness of the assistant's utterances",
  },
  {
    column: 'coherence_assistant',
    dimension: 'coherence',
    target: 'assistant',
    min: 1,
    max: 5,
    label: 'Coh (A)',
    title: "Coherence of the assistant's utterances",
  },
] as const;
export type LabelColumn = (typeof LABEL_COLUMNS)[number];

export const SHEET_COLUMNS = ['item', 'dialogue_id', ...LABEL_COLUMNS.map((c) => c.column), 'notes'] as const;

export const ANNOTATION_DIR = 'annotation';
export const SAMPLE_FILE = 'sample.json';

/** What `plens annotate export` records about a sample; `plens annotate import` reads it back. */
export interface SampleManifest {
  format: 1;
  name: string;
  seed: string;
  n: number;
  run: string;
  judge_model: string;
  judge_config: string;
  dialogue_config: string;
  warehouse: string;
  eligible: number;
  strata: Stratum[];
  dialogue_ids: string[];
  labels: Array<{ column: string; dimension: string; target: string; min: number; max: number }>;
  created_at: string;
  plens_version: string;
}

export interface Stratum {
  kind: string;
  assistant_model: string;
  setting: string;
  eligible: number;
  sampled: number;
}

export interface ExportOptions {
  workspace: Workspace;
  dbPath: string;
  n: number;
  seed: string;
  run?: string;
  name?: string;
  /** Judge templates the rubric is taken from (default: the bundled ones, like `plens judge`). */
  prompts?: string;
  force?: boolean;
  dryRun?: boolean;
}

export interface ExportSummary {
  dry_run: boolean;
  name: string;
  dir: string;
  files: string[];
  seed: string;
  n: number;
  run: string;
  judge_model: string;
  eligible: number;
  strata: Stratum[];
  dialogue_ids: string[];
  warnings: string[];
  elapsed_ms: number;
}

const NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

export function validateSampleName(name: string, what = '--name'): void {
  if (!NAME_PATTERN.test(name)) throw usageError(`${what} "${name}": use letters, digits, '.', '_' and '-' (it names a folder)`);
}

/** Every dialogue-level score present: the sample is annotated on all six labels. */
const ALL_SCORED = 'tc IS NOT NULL AND p IS NOT NULL AND nat_u IS NOT NULL AND coh_u IS NOT NULL AND nat_a IS NOT NULL AND coh_a IS NOT NULL';

/** `plens annotate export`: a seeded, stratified sample of judged dialogues, as files for annotators. */
export async function exportSample(options: ExportOptions): Promise<ExportSummary> {
  const started = performance.now();
  if (!Number.isInteger(options.n) || options.n < 1) throw usageError('--n must be a whole number >= 1');
  if (options.seed === '') throw usageError('--seed must not be empty');
  const name = options.name ?? `sample-${options.seed}-${options.n}`;
  validateSampleName(name);
  const dir = join(options.workspace.root, ANNOTATION_DIR, name);
  // Load the rubric first: a bad --prompts folder should fail before any work.
  const prompts = PromptSet.load(options.prompts);
  requireWarehouse(options.dbPath);
  const db = await Database.open(options.dbPath, { readOnly: true });
  try {
    const relations = new Set((await db.all<{ name: string }>(`SELECT table_name AS name FROM information_schema.tables`)).map((r) => r.name));
    if (!relations.has('dialogue_scores')) {
      throw new PlensError('E_PREREQUISITE', `the warehouse ${options.dbPath} has no judged dialogues (view dialogue_scores)`, {
        hint: 'run `plens dialogues`, `plens judge` and `plens warehouse` first',
      });
    }
    const run = await chooseRun(db, options.run);
    if (!options.dryRun && existsSync(dir) && !options.force) {
      throw usageError(`the sample "${name}" exists already (${dir})`, 'pass --force to replace it, or choose another --name');
    }
    const strata = await db.all<{ kind: string; assistant_model: string; setting: string; eligible: number }>(
      `SELECT kind, assistant_model, setting, count(*)::BIGINT AS eligible FROM dialogue_scores
       WHERE run = $1 AND ${ALL_SCORED} GROUP BY ALL ORDER BY ALL`,
      undefined,
      [run.run],
    );
    const eligible = strata.reduce((s, x) => s + x.eligible, 0);
    if (eligible === 0) {
      throw new PlensError('E_PREREQUISITE', `no dialogue of run ${run.run} is scored on all six dialogue-level judgments`, {
        hint: 'judge with the default --dimensions (task_completion personalization naturalness coherence), then rebuild the warehouse',
      });
    }
    if (options.n > eligible) throw usageError(`--n ${options.n} is more than the ${eligible} dialogues of run ${run.run} that are fully judged`);
    const allocation = allocate(strata, options.n, options.seed);
    const sampled = await drawSample(db, run.run, allocation, options.seed);
    const warnings: string[] = [];
    const judgeVersion = /\| prompts (.+)$/.exec(run.judge_config)?.[1];
    if (judgeVersion && judgeVersion !== prompts.judgeVersion) {
      warnings.push(
        `the run was judged with prompts ${judgeVersion}; the rubric in dialogues.html is from ${prompts.judgeVersion} (pass the judge's --prompts folder)`,
      );
    }
    const files = ['sheet.csv', 'dialogues.html', SAMPLE_FILE].map((f) => join(dir, f));
    if (!options.dryRun) {
      const items = await loadItems(db, relations, sampled);
      const manifest: SampleManifest = {
        format: 1,
        name,
        seed: options.seed,
        n: options.n,
        run: run.run,
        judge_model: run.judge_model,
        judge_config: run.judge_config,
        dialogue_config: run.dialogue_config,
        warehouse: options.dbPath,
        eligible,
        strata: allocation,
        dialogue_ids: sampled,
        labels: LABEL_COLUMNS.map(({ column, dimension, target, min, max }) => ({ column, dimension, target, min, max })),
        created_at: new Date().toISOString(),
        plens_version: plensVersion,
      };
      await replaceDirectoryAtomic(dir, async (staging) => {
        await writeFile(join(staging, 'sheet.csv'), sheetCsv(sampled));
        await writeFile(join(staging, 'dialogues.html'), renderHtml(manifest, items, rubric(prompts)));
        await writeFile(join(staging, SAMPLE_FILE), JSON.stringify(manifest, null, 2) + '\n');
      });
    }
    return {
      dry_run: Boolean(options.dryRun),
      name,
      dir,
      files: options.dryRun ? [] : files,
      seed: options.seed,
      n: options.n,
      run: run.run,
      judge_model: run.judge_model,
      eligible,
      strata: allocation,
      dialogue_ids: sampled,
      warnings,
      elapsed_ms: Math.round(performance.now() - started),
    };
  } finally {
    db.close();
  }
}

interface RunRow {
  run: string;
  judge_model: string;
  judge_config: string;
  dialogue_config: string;
  dialogues: number;
}

async function chooseRun(db: Database, wanted: string | undefined): Promise<RunRow> {
  const runs = await db.all<RunRow>(
    `SELECT run, judge_model, judge_config, dialogue_config, count(*)::BIGINT AS dialogues FROM dialogue_scores GROUP BY ALL ORDER BY run`,
  );
  const list = runs.map((r) => `${r.run} (${r.judge_model}, ${r.dialogues} dialogues)`).join('; ');
  if (runs.length === 0)
    throw new PlensError('E_PREREQUISITE', 'the warehouse holds no judged dialogues', { hint: 'run `plens judge`, then `plens warehouse`' });
  if (wanted !== undefined) {
    const run = runs.find((r) => r.run === wanted);
    if (!run) throw usageError(`--run "${wanted}" is not in the warehouse`, `runs: ${list} (see the view result_runs)`);
    return run;
  }
  if (runs.length > 1) throw usageError(`the warehouse holds ${runs.length} judge runs; name one with --run`, `runs: ${list} (see the view result_runs)`);
  return runs[0]!;
}

/**
 * Proportional allocation by largest remainders (Hamilton), in exact integer arithmetic: stratum h
 * gets floor(n N_h / N), and the seats left go to the largest remainders (n N_h mod N). Ties go by a
 * seeded hash of the stratum, so they fall the same way for every n with this seed.
 */
export function allocate<T extends { kind: string; assistant_model: string; setting: string; eligible: number }>(
  strata: T[],
  n: number,
  seed: string,
): Stratum[] {
  const total = strata.reduce((s, x) => s + x.eligible, 0);
  const rows = strata.map((s) => ({
    kind: s.kind,
    assistant_model: s.assistant_model,
    setting: s.setting,
    eligible: s.eligible,
    sampled: Math.floor((n * s.eligible) / total),
    remainder: (n * s.eligible) % total,
    tie: md5Hex(`${seed}:${s.kind}|${s.assistant_model}|${s.setting}`),
  }));
  let left = n - rows.reduce((s, x) => s + x.sampled, 0);
  const order = [...rows].sort((a, b) => b.remainder - a.remainder || (a.tie < b.tie ? -1 : a.tie > b.tie ? 1 : 0));
  for (const r of order) {
    if (left === 0) break;
    r.sampled++;
    left--;
  }
  return rows.map(({ kind, assistant_model, setting, eligible, sampled }) => ({ kind, assistant_model, setting, eligible, sampled }));
}

function md5Hex(text: string): string {
  return createHash('md5').update(text).digest('hex');
}

/**
 * Within a stratum, dialogues in md5(seed:dialogue_id) order: the same seed gives the same sample,
 * and a larger n (whose allocation is no smaller per stratum) contains a smaller one. Items are in
 * that same hash order across strata, so the sheet does not come in blocks of one setting.
 */
async function drawSample(db: Database, run: string, allocation: Stratum[], seed: string): Promise<string[]> {
  const wanted = allocation.filter((a) => a.sampled > 0);
  if (wanted.length === 0) return [];
  const params: Record<string, string | number> = { run, seed };
  const values = wanted
    .map((a, i) => {
      Object.assign(params, { [`kind${i}`]: a.kind, [`model${i}`]: a.assistant_model, [`setting${i}`]: a.setting, [`take${i}`]: a.sampled });
      return `($kind${i}, $model${i}, $setting${i}, $take${i})`;
    })
    .join(', ');
  const rows = await db.all<{ dialogue_id: string }>(
    `WITH alloc(kind, assistant_model, setting, take) AS (VALUES ${values}),
     ranked AS (
       SELECT dialogue_id, kind, assistant_model, setting, md5($seed || ':' || dialogue_id) AS h,
         row_number() OVER (PARTITION BY kind, assistant_model, setting ORDER BY md5($seed || ':' || dialogue_id), dialogue_id) AS r
       FROM dialogue_scores WHERE run = $run AND ${ALL_SCORED}
     )
     SELECT dialogue_id FROM ranked JOIN alloc USING (kind, assistant_model, setting) WHERE r <= take ORDER BY h, dialogue_id`,
    undefined,
    params,
  );
  return rows.map((r) => r.dialogue_id);
}

function sheetCsv(dialogueIds: string[]): string {
  const empty = LABEL_COLUMNS.map(() => '');
  return stringify(
    dialogueIds.map((id, i) => [i + 1, id, ...empty, '']),
    { header: true, columns: [...SHEET_COLUMNS], record_delimiter: 'unix' },
  );
}

/** One sampled dialogue with what a person needs to label it (what the judge was shown). */
interface Item {
  dialogue_id: string;
  kind: string;
  task_id: string;
  description: string | null;
  goal: string | null;
  user_intent: string | null;
  relevant_domains: string[];
  situation: Array<[string, string]>;
  demographics: Array<[string, string]>;
  preferences: Array<{ domain: string; lines: string[] }>;
  interactions: Array<{ domain: string; summary: string }>;
  messages: Array<{ role: string; content: string }>;
}

const SITUATION: Array<[string, string]> = [
  ['location', 'Location'],
  ['device', 'Device'],
  ['time_of_day', 'Time of day'],
  ['day_of_week', 'Day of the week'],
  ['environment', 'Environment'],
];

/** The items' dialogues and context from the warehouse; a context table that is absent is left out. */
async function loadItems(db: Database, relations: Set<string>, ids: string[]): Promise<Item[]> {
  if (ids.length === 0) return [];
  const has = (t: string) => relations.has(t);
  const rows = await db.all<Record<string, unknown>>(
    `SELECT d.dialogue_id, d.kind, d.task_id, d.user_id, d.scenario_id, d.messages,
       ${has('tasks') ? 't.description, t.goal, t.user_intent, t.relevant_domains AS task_domains' : 'NULL AS description, NULL AS goal, NULL AS user_intent, NULL AS task_domains'}
       ${has('scenario_pool') ? `, ${SITUATION.map(([k]) => `s.${k}`).join(', ')}, s.relevant_domains AS scenario_domains` : ''}
       ${has('users') ? `, ${DEMOGRAPHIC_LABELS.map(([k]) => `u.${k} AS demo_${k}`).join(', ')}` : ''}
     FROM dialogues d
       ${has('tasks') ? 'LEFT JOIN tasks t USING (task_id)' : ''}
       ${has('scenario_pool') ? 'LEFT JOIN scenario_pool s ON s.scenario_id = d.scenario_id' : ''}
       ${has('users') ? 'LEFT JOIN users u ON u.user_id = d.user_id' : ''}
     WHERE list_contains($1, d.dialogue_id)`,
    undefined,
    [sqlList(ids)],
  );
  const users = [...new Set(rows.map((r) => String(r['user_id'])))];
  const preferences = has('affinities')
    ? await db.all<{ user_id: string; domain: string; preference_type: string; vals: string[] | null }>(
        `SELECT a.user_id, a.domain, a.preference_type, list(a.value ORDER BY a.position) FILTER (a.value IS NOT NULL) AS vals
         FROM affinities a ${has('preference_schema') ? 'LEFT JOIN preference_schema p USING (domain, preference_type)' : ''}
         WHERE list_contains($1, a.user_id)
         GROUP BY a.user_id, a.domain, a.preference_type
         ORDER BY a.user_id, a.domain, ${has('preference_schema') ? 'min(p.position), ' : ''}a.preference_type`,
        undefined,
        [sqlList(users)],
      )
    : [];
  const interactions = has('interactions')
    ? await db.all<{ user_id: string; domain: string; summary: string }>(
        'SELECT user_id, domain, summary FROM interactions WHERE list_contains($1, user_id)',
        undefined,
        [sqlList(users)],
      )
    : [];
  const byId = new Map(rows.map((r) => [String(r['dialogue_id']), r]));
  return ids.map((id) => {
    const r = byId.get(id);
    if (!r) throw new PlensError('E_PREREQUISITE', `dialogue ${id} is scored in dialogue_scores but missing from the dialogues table; rebuild the warehouse`);
    const domains = ((r['scenario_domains'] ?? r['task_domains'] ?? []) as string[]).slice();
    const user = String(r['user_id']);
    return {
      dialogue_id: id,
      kind: String(r['kind']),
      task_id: String(r['task_id']),
      description: (r['description'] as string | null) ?? null,
      goal: (r['goal'] as string | null) ?? null,
      user_intent: (r['user_intent'] as string | null) ?? null,
      relevant_domains: domains,
      situation: SITUATION.filter(([k]) => r[k] !== undefined && r[k] !== null).map(([k, label]) => [label, String(r[k])]),
      demographics: DEMOGRAPHIC_LABELS.filter(([k]) => r[`demo_${k}`] !== undefined && r[`demo_${k}`] !== null).map(([k, label]) => [
        label,
        String(r[`demo_${k}`]),
      ]),
      preferences: domains.map((domain) => ({
        domain,
        lines: preferences
          .filter((p) => p.user_id === user && p.domain === domain)
          .map((p) => `${p.preference_type}: ${p.vals?.length ? p.vals.join(', ') : '(none)'}`),
      })),
      interactions: domains.flatMap((domain) =>
        interactions.filter((i) => i.user_id === user && i.domain === domain).map((i) => ({ domain, summary: i.summary })),
      ),
      messages: ((r['messages'] ?? []) as Array<{ role: string; content: string }>).map((m) => ({ role: m.role, content: m.content })),
    };
  });
}

const JUDGE_TEMPLATE: Record<string, TemplateName> = {
  task_completion: 'judge-task-completion',
  personalization: 'judge-personalization',
  naturalness: 'judge-naturalness',
  coherence: 'judge-coherence',
};

/**
 * The rubric, in the judge's own words: each judge template rendered with its inputs blanked, keeping
 * the paragraphs that instruct (criteria, scale) and dropping those that carry the inputs or the
 * reply format, so annotators and the judge work from one text.
 */
export function rubric(prompts: PromptSet): Array<{ dimension: string; columns: string[]; text: string }> {
  const MARK = '\u0001';
  const view = {
    conversation: MARK,
    goal: MARK,
    demographics: MARK,
    preferences: MARK,
    intent: MARK,
    interactions: MARK,
    situation: MARK,
    speaker: 'speaker named by the column, user or assistant',
  };
  return Object.entries(JUDGE_TEMPLATE).map(([dimension, template]) => {
    const paragraphs = prompts
      .render(template, view)
      .split(/\n\s*\n/)
      .map((p) => p.trim())
      .filter((p) => p && !p.includes(MARK) && !/answer in exactly this format|in this format, inside the tags|^answer now|^VERDICT:$/i.test(p));
    return { dimension, columns: LABEL_COLUMNS.filter((c) => c.dimension === dimension).map((c) => c.column), text: paragraphs.join('\n\n') };
  });
}

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (ch) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[ch]!);
}

const CSS = `
body { font: 15px/1.5 system-ui, sans-serif; max-width: 60rem; margin: 2rem auto; padding: 0 1rem; color: #222; }
h1 { font-size: 1.5rem; } h2 { margin-top: 3rem; border-top: 2px solid #888; padding-top: 1rem; } h3 { margin-bottom: .3rem; }
.rubric, .text { white-space: pre-wrap; }
.rubric { background: #f6f6f6; padding: .6rem .8rem; border-radius: 4px; }
dl { display: grid; grid-template-columns: max-content auto; gap: .1rem 1rem; margin: .3rem 0; } dt { font-weight: 600; } dd { margin: 0; }
.turn { margin: .5rem 0; padding: .5rem .8rem; border-radius: 6px; }
.turn.user { background: #eef4ff; } .turn.assistant { background: #f1f8ee; }
.speaker { font-weight: 700; font-size: .85rem; text-transform: uppercase; letter-spacing: .04em; }
.id { font-family: ui-monospace, monospace; font-size: .85rem; color: #555; }
table.columns td, table.columns th { text-align: left; padding: .1rem .8rem .1rem 0; }
@media print { h2 { page-break-before: always; } }
`;

function renderHtml(manifest: SampleManifest, items: Item[], rubricParts: ReturnType<typeof rubric>): string {
  const e = escapeHtml;
  const dl = (pairs: Array<[string, string]>) => `<dl>${pairs.map(([k, v]) => `<dt>${e(k)}</dt><dd>${e(v)}</dd>`).join('')}</dl>`;
  const out: string[] = [];
  out.push(
    '<!DOCTYPE html>',
    '<html lang="en">',
    '<head>',
    '<meta charset="utf-8">',
    `<title>${e(`Annotation sample ${manifest.name}`)}</title>`,
    `<style>${CSS}</style>`,
    '</head>',
    '<body>',
  );
  out.push(`<h1>${e(`Annotation sample ${manifest.name}: ${items.length} dialogues`)}</h1>`);
  out.push(
    '<p>Label every dialogue below in <code>sheet.csv</code>: one row per item, one column per label. ' +
      'Judge each dialogue on its own, from the rubric and the context shown with it. Leave a cell empty when you cannot decide; ' +
      'use the <code>notes</code> column for anything worth saying. Do not reorder or edit the <code>item</code> and <code>dialogue_id</code> columns.</p>',
  );
  out.push('<table class="columns"><tr><th>column</th><th>label</th><th>values</th></tr>');
  for (const c of LABEL_COLUMNS) {
    const values = c.dimension === 'task_completion' ? '1 = completed, 0 = not completed' : `a whole number ${c.min}-${c.max}`;
    out.push(`<tr><td><code>${e(c.column)}</code></td><td>${e(c.title)}</td><td>${e(values)}</td></tr>`);
  }
  out.push('</table>');
  out.push('<h2 id="rubric">Rubric</h2>');
  for (const part of rubricParts) {
    out.push(`<h3>${e(part.dimension.replace('_', ' '))} <span class="id">(${e(part.columns.join(', '))})</span></h3>`);
    out.push(`<div class="rubric">${e(part.text)}</div>`);
  }
  items.forEach((item, i) => {
    const n = i + 1;
    out.push(`<section id="item-${n}">`, `<h2>Item ${n}</h2>`, `<p class="id">dialogue_id ${e(item.dialogue_id)}</p>`);
    const task: Array<[string, string]> = [['Task', `${item.task_id} (${item.kind === 'MD' ? 'multi-domain' : 'single-domain'})`]];
    if (item.description) task.push(['Description', item.description]);
    if (item.user_intent) task.push(["The user's intent", item.user_intent]);
    if (item.goal) task.push(['Goal (what completes the task)', item.goal]);
    task.push(['Relevant domains', item.relevant_domains.join(', ')]);
    out.push('<h3>Task</h3>', dl(task));
    if (item.demographics.length) out.push('<h3>The user</h3>', dl(item.demographics));
    if (item.preferences.some((p) => p.lines.length)) {
      out.push('<h3>Preferences in the relevant domains</h3>');
      for (const p of item.preferences.filter((x) => x.lines.length)) {
        if (item.preferences.length > 1) out.push(`<p><strong>${e(p.domain)}</strong></p>`);
        out.push(`<ul>${p.lines.map((l) => `<li>${e(l)}</li>`).join('')}</ul>`);
      }
    }
    if (item.interactions.length) {
      out.push('<h3>Past interactions</h3>');
      for (const x of item.interactions)
        out.push(`<p class="text">${item.interactions.length > 1 ? `<strong>${e(x.domain)}:</strong> ` : ''}${e(x.summary)}</p>`);
    }
    if (item.situation.length) out.push('<h3>Current situation</h3>', dl(item.situation));
    out.push('<h3>Conversation</h3>');
    item.messages.forEach((m, t) => {
      const role = m.role === 'user' ? 'user' : 'assistant';
      out.push(`<div class="turn ${role}"><div class="speaker">${t + 1}. ${role}</div><div class="text">${e(m.content)}</div></div>`);
    });
    out.push('</section>');
  });
  out.push(`<p class="id">plens ${e(manifest.plens_version)}, sample ${e(manifest.name)}, seed ${e(manifest.seed)}, created ${e(manifest.created_at)}</p>`);
  out.push('</body>', '</html>');
  return out.join('\n') + '\n';
}

export function formatExportSummary(s: ExportSummary): string {
  const lines = [
    `${s.dry_run ? 'Would sample' : 'Sampled'} ${s.dialogue_ids.length} of ${s.eligible} fully judged dialogues of run ${s.run} (judge ${s.judge_model}), seed ${s.seed}`,
    '  strata (kind | assistant | setting): sampled / eligible',
  ];
  for (const x of s.strata) lines.push(`    ${x.kind} | ${x.assistant_model} | ${x.setting}: ${x.sampled} / ${x.eligible}`);
  if (!s.dry_run) {
    lines.push(`  written to ${s.dir}/`);
    lines.push('    sheet.csv       one row per dialogue, labels blank: one copy per annotator');
    lines.push('    dialogues.html  the rubric and every dialogue, for reading');
    lines.push('    sample.json     what was sampled, and how');
    lines.push(`Then: plens annotate import <annotator>.csv ... --sample ${s.name}`);
  }
  for (const w of s.warnings) lines.push(`  warning: ${w}`);
  return lines.join('\n');
}
