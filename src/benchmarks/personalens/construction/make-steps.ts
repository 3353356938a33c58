/**
 * Building a PersonaLens benchmark in `plens make` (a pipeline's `build:` section): the users
 * (build-users), then the LLM stages in order (build-masks, build-preferences,
 * build-interactions, build-sd-tasks, build-md-tasks, build-situations, build-consistency),
 * then the export in the released layout (build-export), which `import` reads as it reads the
 * released data. A stage's units come from the records the stages before it kept: a unit whose
 * input was refused or failed is not asked, and its user is left out of the export (and said so).
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeFileAtomic } from '../../../core/atomic.js';
import { PlensError } from '../../../core/errors.js';
import { fileStamp } from '../../../core/file-stamps.js';
import { zeroCost, type WorkCost } from '../../../engine/stage-runner.js';
import { costOfTokens, parseModelSpec, unpriced } from '../../../llm/model-spec.js';
import type { StepContext } from '../../../platform/benchmark.js';
import { hash, manifestStamp } from '../../../platform/make-state.js';
import { stepStageOptions } from '../../../platform/run-settings.js';
import { planCellStep, reasons, type CellWork, type StepResult } from '../../../platform/step-kit.js';
import type { DomainSchema } from '../dataset/upstream/preference-schema.js';
import { PreferenceSchema } from '../dataset/upstream/preference-schema.js';
import type { PersonaLensPipeline } from '../pipeline-section.js';
import { assignTasks } from './assign.js';
import { readBuildRecords, runBuildStage, writeCurrentKeys, type BuildRecord, type BuildStageSummary, type BuildUnit } from './build-stage.js';
import { CONSISTENCY_EXAMPLES, SITUATION_EXAMPLES } from './default-examples.js';
import { buildUsers } from './demographics.js';
import { exportBenchmark } from './export.js';
import { parseConsistency, parseInteractions, parseMask, parseMdTasks, parsePreferences, parseSdTasks, parseSituation } from './parse.js';
import { loadBuildPrompts, type BuildPrompts, type BuildStage } from './prompts.js';
import { openReleased, readReleasedUsers, type ReleasedBenchmark } from './released.js';
import {
  simulateConsistency,
  simulateInteractions,
  simulateMask,
  simulateMdTasks,
  simulatePreferences,
  simulateSdTasks,
  simulateSituation,
} from './simulate.js';
import { buildMarker, buildReferenceDir, buildUsersFile } from './make-state.js';
import type { BuildSettings } from './section.js';
import {
  BUILD_LLM_STAGES,
  type BuildLlmStage,
  type BuiltUser,
  type Demographics,
  type DomainMask,
  type DomainPreferences,
  type GeneratedSituation,
  type ParseResult,
  type TaskDefinition,
} from './types.js';
import { datasetDir } from '../dataset/workspace-files.js';

type Ctx = StepContext<PersonaLensPipeline>;

/** The most tokens a stage's reply may run to, and its temperature (the paper names neither; generation wants variety). */
export const STAGE_LIMITS: Record<BuildLlmStage, { maxTokens: number; temperature: number }> = {
  masks: { maxTokens: 400, temperature: 1 },
  preferences: { maxTokens: 1000, temperature: 1 },
  interactions: { maxTokens: 1200, temperature: 1 },
  'sd-tasks': { maxTokens: 3000, temperature: 1 },
  'md-tasks': { maxTokens: 8000, temperature: 1 },
  situations: { maxTokens: 500, temperature: 1 },
  consistency: { maxTokens: 2000, temperature: 0 },
};

/**
 * The tokens a reply is expected to have, for plans: the released benchmark's records, about 4
 * characters a token (a mask 316 characters, a domain's preferences 329, a past-interaction summary
 * 2,013, an SD task 683 and an MD task 788 as JSON), situations and verdicts from their formats.
 */
export function expectedTokens(stage: BuildLlmStage, u: Pick<BuildUnit, 'domains' | 'user'>, n: number): number {
  switch (stage) {
    case 'masks':
      return 80;
    case 'preferences':
      return 85;
    case 'interactions':
      return 505;
    case 'sd-tasks':
      return 175 * n;
    case 'md-tasks':
      return 215 * n;
    case 'situations':
      return 160;
    case 'consistency':
      return 50 * ((u.domains?.length ?? 15) + 1);
  }
}

/** The simulator asked again answers well (a real model usually does when told what was wrong). */
const CLEAN = { malformedRate: 0 };

/** The prompt template of each stage. */
const PROMPT_OF: Record<BuildLlmStage, BuildStage> = {
  masks: 'mask',
  preferences: 'preferences',
  interactions: 'interactions',
  'sd-tasks': 'sd-tasks',
  'md-tasks': 'md-tasks',
  situations: 'situations',
  consistency: 'consistency',
};

/**
 * What a plan assumes of work that depends on records not made yet, from the released benchmark:
 * a user keeps 15.3 of 20 domains (0.763), and of the 25 MD tasks gets 16.0 (24,018 of 37,500).
 */
export const RELEASED_RATES = { domainKept: 15.258 / 20, mdKept: 24018 / (1500 * 25) };

/** Everything the stages read besides the records: the users, the schema, the prompts, the examples. */
/** A user to build: the demographics, and the source's id for the user (never shown to the model). */
type BuildUser = Demographics & { source?: string };

interface BuildWorld {
  settings: BuildSettings;
  users: BuildUser[];
  schema: PreferenceSchema;
  prompts: BuildPrompts;
  /** Example users (a few, from the examples folder) and that folder's task definitions. */
  examples: { users: BuiltUser[]; released: ReleasedBenchmark } | null;
}

const usersFile = buildUsersFile;

function settingsOf(ctx: Ctx): BuildSettings {
  const b = ctx.p.build;
  if (!b) throw new PlensError('E_USAGE', `pipeline ${ctx.p.name} has no build section`);
  return b;
}

/** How many example users are read from the examples folder (the stages draw two of them per unit). */
const EXAMPLE_USERS = 12;

async function worldOf(ctx: Ctx): Promise<BuildWorld> {
  const cached = ctx.shared.get('build.world') as BuildWorld | undefined;
  if (cached) return cached;
  const settings = settingsOf(ctx);
  const file = usersFile(ctx.ws.root);
  // A dry run before the users step ran reads them from the source.
  // The same users either way (a dry run before the users step reads them from the source): their examples, and so their keys, match.
  const users: BuildUser[] = existsSync(file) && !ctx.dryRun ? readUsersFile(file) : buildUsers(settings.demographics);
  const schema = await PreferenceSchema.read(settings.schema);
  const prompts = loadBuildPrompts(settings.prompts ?? undefined);
  let examples: BuildWorld['examples'] = null;
  if (settings.examples) {
    const released = await openReleased(settings.examples);
    const some: BuiltUser[] = [];
    for (const u of readReleasedUsers({ ...released, users: released.users.slice(0, EXAMPLE_USERS) })) some.push(u);
    examples = { users: some, released };
  }
  const world = { settings, users, schema, prompts, examples };
  ctx.shared.set('build.world', world);
  return world;
}

function readUsersFile(file: string): BuildUser[] {
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as BuildUser);
}

/**
 * The example users a unit may be shown: never the person being built (a build from the released
 * data must not show a user their own released record), by the source's id.
 */
export function examplesFor(w: Pick<BuildWorld, 'examples'>, u: BuildUser): BuiltUser[] {
  return (w.examples?.users ?? []).filter((e) => e.demographics.user_id !== u.source);
}

/** A deterministic pick of `k` items for a unit (the same unit always gets the same examples, so its key is stable). */
function pick<T>(items: readonly T[], k: number, seed: string): T[] {
  const scored = items.map((item, i) => ({ item, r: hash([seed, i]) }));
  return scored
    .sort((a, b) => (a.r < b.r ? -1 : a.r > b.r ? 1 : 0))
    .slice(0, k)
    .map((x) => x.item);
}

// ---------------------------------------------------------------------------------------------
// The users step

export async function usersStep(ctx: Ctx): Promise<StepResult> {
  const settings = settingsOf(ctx);
  const inputs = ctx.inputs();
  if (ctx.isCurrent(inputs) && existsSync(usersFile(ctx.ws.root))) return { step: ctx.step, status: 'up-to-date', work: 0, detail: 'up to date' };
  const users = buildUsers(settings.demographics);
  if (ctx.dryRun) return { step: ctx.step, status: 'would-run', work: 1, detail: `would take ${users.length} users from ${settings.demographics.from}` };
  await writeFileAtomic(usersFile(ctx.ws.root), users.map((u) => `${JSON.stringify(u)}\n`).join(''));
  await ctx.save(inputs, fileStamp(usersFile(ctx.ws.root)) ?? undefined);
  ctx.shared.delete('build.world');
  return { step: ctx.step, status: 'ran', work: 1, detail: `${users.length} users from ${settings.demographics.from} -> ${usersFile(ctx.ws.root)}` };
}

// ---------------------------------------------------------------------------------------------
// The LLM stages: their units

/** What a stage has: its records (by unit), from its current partition. */
async function recordsOf(ctx: Ctx, w: BuildWorld, stage: BuildLlmStage): Promise<Map<string, BuildRecord>> {
  const key = `build.records.${stage}`;
  const cached = ctx.shared.get(key) as Map<string, BuildRecord> | undefined;
  if (cached) return cached;
  const plan = await runStage(ctx, w, stage, [], true);
  const records = await readBuildRecords(plan.dir);
  ctx.shared.set(key, records);
  return records;
}

const keptValue = <V>(r: BuildRecord | undefined): V | undefined => (r?.status === 'ok' && r.value !== null ? (JSON.parse(r.value) as V) : undefined);

/** The user's mask, when kept. */
async function masks(ctx: Ctx, w: BuildWorld): Promise<Map<string, DomainMask>> {
  const r = await recordsOf(ctx, w, 'masks');
  const out = new Map<string, DomainMask>();
  for (const u of w.users) {
    const m = keptValue<DomainMask>(r.get(u.user_id));
    if (m) out.set(u.user_id, m);
  }
  return out;
}

const kept = (mask: DomainMask) => Object.keys(mask).filter((d) => mask[d] === 1);

/** The user's preferences in each kept domain that has them. */
async function preferencesOf(ctx: Ctx, w: BuildWorld): Promise<Map<string, Record<string, DomainPreferences>>> {
  const r = await recordsOf(ctx, w, 'preferences');
  const out = new Map<string, Record<string, DomainPreferences>>();
  for (const [user, mask] of await masks(ctx, w)) {
    const prefs: Record<string, DomainPreferences> = {};
    for (const d of kept(mask)) {
      const v = keptValue<DomainPreferences>(r.get(`${user}/${d}`));
      if (v) prefs[d] = v;
    }
    out.set(user, prefs);
  }
  return out;
}

/** The SD tasks per domain and the MD tasks, where they were made. */
async function tasksOf(ctx: Ctx, w: BuildWorld): Promise<{ sd: Map<string, TaskDefinition[]>; md: TaskDefinition[] | null }> {
  const sdRecords = await recordsOf(ctx, w, 'sd-tasks');
  const sd = new Map<string, TaskDefinition[]>();
  for (const d of w.schema.domains) {
    const v = keptValue<TaskDefinition[]>(sdRecords.get(d.domain));
    if (v) sd.set(d.domain, v);
  }
  const md = keptValue<TaskDefinition[]>((await recordsOf(ctx, w, 'md-tasks')).get('all')) ?? null;
  return { sd, md };
}

/**
 * Preferences to price work whose inputs are not made yet: an example user's, in as many domains as
 * a user keeps on average (none without examples).
 */
function standIn(w: BuildWorld): Record<string, DomainPreferences> {
  const e = w.examples?.users[0];
  if (!e) return {};
  const n = Math.round(w.schema.domains.length * RELEASED_RATES.domainKept);
  return Object.fromEntries(Object.entries(e.affinities).slice(0, n));
}

const domainOf = (w: BuildWorld, name: string) => w.schema.domains.find((d) => d.domain === name)!;
const sdCount = (w: BuildWorld, domain: string) => w.settings.sdTasks[domain] ?? w.settings.sdTasks.default;

/** A stage's units now, and how many more its plan expects once the stages before it are done. */
interface Units {
  units: BuildUnit[];
  /** Units still to come (an estimate), and a representative unit to price them by. */
  coming: number;
  like?: BuildUnit;
}

async function unitsOf(ctx: Ctx, w: BuildWorld, stage: BuildLlmStage): Promise<Units> {
  const ex = w.examples;
  const p = w.prompts;
  switch (stage) {
    case 'masks':
      return {
        units: w.users.map((u) => ({
          unit: u.user_id,
          user_id: u.user_id,
          ...p.mask({
            demographics: u,
            domains: w.schema.domains,
            examples: ex ? pick(examplesFor(w, u), 2, `masks|${u.user_id}`).map((e) => ({ demographics: e.demographics, output: e.interests })) : [],
          }),
          simulated: simulateMask(`masks|${u.user_id}`, w.schema),
          simulatedReask: simulateMask(`masks|${u.user_id}`, w.schema, CLEAN),
        })),
        coming: 0,
      };
    case 'preferences': {
      const m = await masks(ctx, w);
      const unit = (u: Demographics, d: DomainSchema): BuildUnit => ({
        unit: `${u.user_id}/${d.domain}`,
        user_id: u.user_id,
        domain: d.domain,
        ...p.preferences({
          demographics: u,
          domain: d,
          examples: ex
            ? pick(
                examplesFor(w, u).filter((e) => e.affinities[d.domain] !== undefined),
                2,
                `preferences|${u.user_id}|${d.domain}`,
              ).map((e) => ({ demographics: e.demographics, output: e.affinities[d.domain]! }))
            : [],
        }),
        simulated: simulatePreferences(`preferences|${u.user_id}|${d.domain}`, u, d),
        simulatedReask: simulatePreferences(`preferences|${u.user_id}|${d.domain}`, u, d, CLEAN),
      });
      const units = w.users.flatMap((u) => {
        const mask = m.get(u.user_id);
        return mask ? kept(mask).map((d) => unit(u, domainOf(w, d))) : [];
      });
      // Users whose mask is not asked yet (a refused or failed mask is done: nothing follows from it).
      const maskRecords = await recordsOf(ctx, w, 'masks');
      const waiting = w.users.filter((u) => !maskRecords.has(u.user_id)).length;
      return { units, coming: Math.round(waiting * w.schema.domains.length * RELEASED_RATES.domainKept), like: unit(w.users[0]!, w.schema.domains[0]!) };
    }
    case 'interactions': {
      const prefs = await preferencesOf(ctx, w);
      const m = await masks(ctx, w);
      const unit = (u: Demographics, d: string, preferences: DomainPreferences): BuildUnit => ({
        unit: `${u.user_id}/${d}`,
        user_id: u.user_id,
        domain: d,
        ...p.interactions({
          demographics: u,
          domain: d,
          preferences,
          examples: ex
            ? pick(
                examplesFor(w, u).filter((e) => e.interactions[d] !== undefined && e.affinities[d] !== undefined),
                2,
                `interactions|${u.user_id}|${d}`,
              ).map((e) => ({ demographics: e.demographics, domain: d, preferences: e.affinities[d]!, output: e.interactions[d]! }))
            : [],
        }),
        simulated: simulateInteractions(`interactions|${u.user_id}|${d}`, u, d, preferences),
        simulatedReask: simulateInteractions(`interactions|${u.user_id}|${d}`, u, d, preferences, CLEAN),
      });
      const units = w.users.flatMap((u) => Object.entries(prefs.get(u.user_id) ?? {}).map(([d, v]) => unit(u, d, v)));
      // Every kept domain whose preferences are not made yet, and every domain of users whose mask is not.
      const maskRecords = await recordsOf(ctx, w, 'masks');
      const prefRecords = await recordsOf(ctx, w, 'preferences');
      const coming =
        w.users.reduce((n, u) => {
          const mask = m.get(u.user_id);
          return n + (mask ? kept(mask).filter((d) => !prefRecords.has(`${u.user_id}/${d}`)).length : 0);
        }, 0) + Math.round(w.users.filter((u) => !maskRecords.has(u.user_id)).length * w.schema.domains.length * RELEASED_RATES.domainKept);
      return { units, coming, like: unit(w.users[0]!, w.schema.domains[0]!.domain, standIn(w)[w.schema.domains[0]!.domain] ?? {}) };
    }
    case 'sd-tasks':
      return {
        units: w.schema.domains.map((d) => {
          const others = ex
            ? pick(
                [...ex.released.sdTasks].filter(([name]) => name !== d.domain),
                2,
                `sd-tasks|${d.domain}`,
              )
            : [];
          return {
            unit: d.domain,
            domain: d.domain,
            ...p.sdTasks({
              domain: d,
              n: sdCount(w, d.domain),
              examples: others.map(([name, tasks]) => ({
                domain: domainOf(w, name) ?? ex!.released.schema.domains.find((x) => x.domain === name)!,
                output: tasks,
              })),
            }),
            simulated: simulateSdTasks(`sd-tasks|${d.domain}`, d, sdCount(w, d.domain)),
            simulatedReask: simulateSdTasks(`sd-tasks|${d.domain}`, d, sdCount(w, d.domain), CLEAN),
          };
        }),
        coming: 0,
      };
    case 'md-tasks':
      return {
        units: [
          {
            unit: 'all',
            ...p.mdTasks({ domains: w.schema.domains, n: w.settings.mdTasks, examples: ex ? [{ output: ex.released.mdTasks.slice(0, 2) }] : [] }),
            simulated: simulateMdTasks('md-tasks', w.schema, w.settings.mdTasks),
            simulatedReask: simulateMdTasks('md-tasks', w.schema, w.settings.mdTasks, CLEAN),
          },
        ],
        coming: 0,
      };
    case 'situations': {
      const m = await masks(ctx, w);
      const prefs = await preferencesOf(ctx, w);
      const tasks = await tasksOf(ctx, w);
      const unit = (u: Demographics, taskId: string, def: TaskDefinition): BuildUnit => ({
        unit: `${u.user_id}/${taskId}`,
        user_id: u.user_id,
        task_id: taskId,
        ...p.situations({ demographics: u, preferences: prefs.get(u.user_id) ?? {}, task: def, examples: SITUATION_EXAMPLES }),
        simulated: simulateSituation(`situations|${u.user_id}|${taskId}`, u, def),
        simulatedReask: simulateSituation(`situations|${u.user_id}|${taskId}`, u, def, CLEAN),
      });
      const units: BuildUnit[] = [];
      let coming = 0;
      const allSd = w.schema.domains.reduce((n, d) => n + sdCount(w, d.domain), 0);
      const tasksReady = tasks.md !== null && w.schema.domains.every((d) => tasks.sd.has(d.domain));
      const tasksAsked = (await recordsOf(ctx, w, 'md-tasks')).size > 0 && (await recordsOf(ctx, w, 'sd-tasks')).size === w.schema.domains.length;
      const maskRecords = await recordsOf(ctx, w, 'masks');
      const prefRecords = await recordsOf(ctx, w, 'preferences');
      const perUser = Math.round(allSd * RELEASED_RATES.domainKept + w.settings.mdTasks * RELEASED_RATES.mdKept);
      for (const u of w.users) {
        const mask = m.get(u.user_id);
        const have = prefs.get(u.user_id) ?? {};
        // A situation is asked with the user's whole profile: once every kept domain has its preferences.
        const complete = mask !== undefined && kept(mask).every((d) => have[d] !== undefined);
        if (!complete || !tasksReady) {
          // Still to come while the mask, a preference or the tasks are not asked yet; a refused or failed one ends here.
          const waiting = !maskRecords.has(u.user_id) || !tasksAsked || (mask !== undefined && kept(mask).some((d) => !prefRecords.has(`${u.user_id}/${d}`)));
          if (waiting)
            coming += mask && tasksReady ? assignTasks(mask, tasks.sd, tasks.md!).sd.length + assignTasks(mask, tasks.sd, tasks.md!).md.length : perUser;
          continue;
        }
        const a = assignTasks(mask, tasks.sd, tasks.md!);
        for (const t of [...a.sd, ...a.md]) units.push(unit(u, t.task_id, t.definition));
      }
      const like: TaskDefinition = { 'Task Number': 1, 'Task Description': 'x'.repeat(300), 'User Intent': '', 'Task Goal': '', 'Relevant Affinity Types': [] };
      const likePrefs = standIn(w);
      const likeUnit: BuildUnit = {
        unit: 'plan',
        ...p.situations({ demographics: w.users[0]!, preferences: likePrefs, task: like, examples: SITUATION_EXAMPLES }),
        simulated: '',
      };
      return { units, coming, like: likeUnit };
    }
    case 'consistency': {
      const m = await masks(ctx, w);
      const prefs = await preferencesOf(ctx, w);
      const unit = (u: Demographics, preferences: Record<string, DomainPreferences>): BuildUnit => ({
        unit: u.user_id,
        user_id: u.user_id,
        domains: Object.keys(preferences),
        ...p.consistency({ demographics: u, preferences, examples: CONSISTENCY_EXAMPLES }),
        simulated: simulateConsistency(`consistency|${u.user_id}`, Object.keys(preferences)),
        simulatedReask: simulateConsistency(`consistency|${u.user_id}`, Object.keys(preferences), CLEAN),
      });
      const units: BuildUnit[] = [];
      let coming = 0;
      const maskRecords = await recordsOf(ctx, w, 'masks');
      const prefRecords = await recordsOf(ctx, w, 'preferences');
      for (const u of w.users) {
        const mask = m.get(u.user_id);
        const have = prefs.get(u.user_id) ?? {};
        // A profile is checked once every kept domain has its preferences; it waits while any is not asked yet.
        if (mask && kept(mask).every((d) => have[d] !== undefined)) units.push(unit(u, have));
        else if (!maskRecords.has(u.user_id) || (mask && kept(mask).some((d) => !prefRecords.has(`${u.user_id}/${d}`)))) coming += 1;
      }
      return { units, coming, like: unit(w.users[0]!, standIn(w)) };
    }
  }
}

/** How a stage reads a reply. */
function parserOf(w: BuildWorld, stage: BuildLlmStage): (text: string, u: BuildUnit) => ParseResult<unknown> {
  switch (stage) {
    case 'masks':
      return (text) => parseMask(text, w.schema);
    case 'preferences':
      // The release answers "none" with an empty list (389 Dietary Restrictions): accepted.
      return (text, u) => parsePreferences(text, domainOf(w, u.domain!), { allowEmptyList: true });
    case 'interactions':
      return (text) => parseInteractions(text);
    case 'sd-tasks':
      return (text, u) => parseSdTasks(text, domainOf(w, u.domain!), sdCount(w, u.domain!));
    case 'md-tasks':
      return (text) => parseMdTasks(text, w.schema, w.settings.mdTasks);
    case 'situations':
      return (text) => parseSituation(text);
    case 'consistency':
      return (text, u) => parseConsistency(text, u.domains ?? []);
  }
}

function stageOptions(ctx: Ctx, w: BuildWorld, stage: BuildLlmStage, dryRun: boolean) {
  return {
    ...stepStageOptions(ctx, dryRun),
    ...(w.settings.batch ? { batch: w.settings.batch } : {}),
    model: w.settings.models[stage],
    promptsHash: w.prompts.stageVersion(PROMPT_OF[stage]),
    ...STAGE_LIMITS[stage],
    expectedTokens: (u: BuildUnit) => expectedTokens(stage, u, stage === 'md-tasks' ? w.settings.mdTasks : stage === 'sd-tasks' ? sdCount(w, u.domain!) : 1),
  };
}

function runStage(ctx: Ctx, w: BuildWorld, stage: BuildLlmStage, units: readonly BuildUnit[], dryRun: boolean): Promise<BuildStageSummary> {
  return runBuildStage(stage, units, parserOf(w, stage), stageOptions(ctx, w, stage, dryRun));
}

/** The step of one LLM stage: its plan (with what the stages before it will add), or its run. */
export function llmStep(stage: BuildLlmStage) {
  return async (ctx: Ctx): Promise<StepResult> => {
    const step = `build-${stage}`;
    const w = await worldOf(ctx);
    const { units, coming, like } = await unitsOf(ctx, w, stage);
    const plan = await runStage(ctx, w, stage, units, true);
    const model = w.settings.models[stage];
    const work: CellWork = {
      done: plan.already_done,
      pending: plan.planned,
      failed: ctx.retryFailed ? 0 : plan.already_failed,
      estimate: plan.estimate ?? zeroCost(),
      priceUnknown: plan.price_unknown.length ? plan.price_unknown : unpriced([parseModelSpec(model)]),
    };
    if (coming > 0 && like) {
      const per = estimateOf(like, model, expectedTokens(stage, like, 1));
      work.pending += coming;
      work.estimated = true;
      work.estimate = {
        calls: work.estimate.calls + coming,
        cachedCalls: work.estimate.cachedCalls,
        inputTokens: work.estimate.inputTokens + coming * per.inputTokens,
        outputTokens: work.estimate.outputTokens + coming * per.outputTokens,
        costUsd: work.estimate.costUsd + coming * per.costUsd,
      };
    }
    const cell = { id: model, assistant: model, setting: stage, work };
    if (ctx.dryRun) return planCellStep(step, [cell], { noun: 'model' });
    if (units.length > 0) {
      await writeCurrentKeys(stage, units, plan.dir);
      ctx.shared.delete(`build.records.${stage}`);
    }
    const counted = async () => {
      const records = [...(await readBuildRecords(plan.dir)).values()];
      return { refused: records.filter((r) => r.status === 'parse_error').length, failed: records.filter((r) => r.status === 'failed').length };
    };
    // A refused reply is a recorded parse state (its unit goes no further, and the export says so);
    // a failed call fails the step. --retry-failed asks both again.
    if (plan.planned === 0) {
      const c = await counted();
      const refusedNote = c.refused ? `; ${c.refused} reply(ies) refused by the parser (--retry-failed asks again)` : '';
      return c.failed > 0 && !ctx.retryFailed
        ? { step, status: 'failed', work: 0, detail: `${c.failed} unit(s) recorded failed (--retry-failed asks again)${refusedNote}` }
        : { step, status: 'up-to-date', work: 0, detail: `up to date (${work.done} ${stage} record(s))${refusedNote}` };
    }
    const s = await runStage(ctx, w, stage, units, false);
    ctx.shared.delete(`build.records.${stage}`);
    const c = await counted();
    ctx.log(`  ${step}  ${model}: ${s.ok} ok, ${s.failed} failed or refused${s.failed ? ` (${reasons(s.failure_reasons)})` : ''}`);
    return {
      step,
      status: c.failed > 0 ? 'failed' : 'ran',
      work: s.ok + s.failed,
      detail: `${s.ok} new record(s), ${s.failed} failed or refused; ${s.already_done} kept${c.refused ? `; ${c.refused} reply(ies) refused by the parser in all (parse states recorded; --retry-failed asks again)` : ''}`,
      ...(s.spend ? { spend: s.spend } : {}),
      ...(s.spend_capped ? { spend_capped: true } : {}),
    };
  };
}

const tokens = (chars: number) => Math.ceil(chars / 4);

function estimateOf(u: BuildUnit, model: string, outputTokens: number): WorkCost {
  const usage = { inputTokens: tokens((u.system?.length ?? 0) + u.user.length), outputTokens };
  return { calls: 1, cachedCalls: 0, ...usage, costUsd: costOfTokens(parseModelSpec(model), usage) };
}

// ---------------------------------------------------------------------------------------------
// The benchmark compared with

/** Imports the benchmark the built one is compared with (build.compare_with) into <workspace>/build/reference, as import does. */
export async function referenceStep(ctx: Ctx): Promise<StepResult> {
  const from = settingsOf(ctx).compareWith!;
  const inputs = ctx.inputs();
  if (ctx.isCurrent(inputs)) return { step: ctx.step, status: 'up-to-date', work: 0, detail: `up to date (${from})` };
  if (ctx.dryRun) return { step: ctx.step, status: 'would-run', work: 1, detail: `would import ${from} to compare the built benchmark with` };
  const { runImport } = await import('../dataset/import.js');
  const { Workspace } = await import('../../../core/workspace.js');
  const ws = new Workspace(buildReferenceDir(ctx.ws.root));
  const r = await runImport({ from, workspace: ws, progress: ctx.progress });
  await ctx.save(inputs, manifestStamp(datasetDir(ws)) ?? undefined);
  return { step: ctx.step, status: 'ran', work: 1, detail: `imported ${r.users} users of ${from} to compare with -> ${datasetDir(ws)}` };
}

// ---------------------------------------------------------------------------------------------
// The export

/** Why a user is left out of the export: the first stage that has nothing for them. */
export interface ExportReport {
  out: string;
  users: number;
  left_out: Array<{ user_id: string; reason: string }>;
  flagged_inconsistent: string[];
}

export async function exportStep(ctx: Ctx): Promise<StepResult> {
  const inputs = ctx.inputs();
  if (!ctx.upstreamChanged && ctx.isCurrent(inputs)) return { step: ctx.step, status: 'up-to-date', work: 0, detail: `up to date (${settingsOf(ctx).out})` };
  const w = await worldOf(ctx);
  if (ctx.dryRun) return { step: ctx.step, status: 'would-run', work: 1, detail: `would write the built benchmark to ${w.settings.out}` };
  const m = await masks(ctx, w);
  const prefs = await preferencesOf(ctx, w);
  const interactions = await recordsOf(ctx, w, 'interactions');
  const situations = await recordsOf(ctx, w, 'situations');
  const consistency = await recordsOf(ctx, w, 'consistency');
  const tasks = await tasksOf(ctx, w);
  const missingDomains = w.schema.domains.filter((d) => !tasks.sd.has(d.domain)).map((d) => d.domain);
  if (missingDomains.length > 0 || tasks.md === null)
    return {
      step: ctx.step,
      status: 'failed',
      work: 0,
      detail: `no task definitions yet for ${[...missingDomains, ...(tasks.md === null ? ['Multi-Domain'] : [])].join(', ')} (build-sd-tasks / build-md-tasks; --retry-failed asks again)`,
    };
  const report: ExportReport = { out: w.settings.out, users: 0, left_out: [], flagged_inconsistent: [] };
  const built: BuiltUser[] = [];
  for (const u of w.users) {
    const mask = m.get(u.user_id);
    const why = (reason: string) => report.left_out.push({ user_id: u.user_id, reason });
    if (!mask) {
      why('no domain mask');
      continue;
    }
    const domains = kept(mask);
    const have = prefs.get(u.user_id) ?? {};
    const noPrefs = domains.filter((d) => have[d] === undefined);
    if (noPrefs.length) {
      why(`no preferences for ${noPrefs.join(', ')}`);
      continue;
    }
    const inter: Record<string, string> = {};
    const noInter = domains.filter((d) => {
      const v = keptValue<string>(interactions.get(`${u.user_id}/${d}`));
      if (v !== undefined) inter[d] = v;
      return v === undefined;
    });
    if (noInter.length) {
      why(`no past interactions for ${noInter.join(', ')}`);
      continue;
    }
    const a = assignTasks(mask, tasks.sd, tasks.md);
    const withSituation = (t: (typeof a.sd)[number]) => {
      const s = keptValue<GeneratedSituation>(situations.get(`${u.user_id}/${t.task_id}`));
      return s ? { ...t, situations: s.values } : null;
    };
    const sd = a.sd.map(withSituation);
    const md = a.md.map(withSituation);
    const noSituation = [...a.sd, ...a.md].filter((_, i) => (i < a.sd.length ? sd[i] : md[i - a.sd.length]) === null).map((t) => t.task_id);
    if (noSituation.length) {
      why(`no situation for ${noSituation.length} task(s), e.g. ${noSituation[0]}`);
      continue;
    }
    const verdict = keptValue<{ domains: Record<string, { label: number }>; cross_domain: { label: number } }>(consistency.get(u.user_id));
    if (verdict && (verdict.cross_domain.label === 1 || Object.values(verdict.domains).some((d) => d.label === 1))) report.flagged_inconsistent.push(u.user_id);
    built.push({
      demographics: u,
      interests: mask,
      affinities: Object.fromEntries(domains.map((d) => [d, have[d]!])),
      interactions: inter,
      sd: sd as NonNullable<(typeof sd)[number]>[],
      md: md as NonNullable<(typeof md)[number]>[],
    });
  }
  if (built.length === 0) {
    // Nothing to export; the report says why each user is out (plens status shows it too).
    await writeFileAtomic(join(ctx.ws.root, 'build', 'export-report.json'), `${JSON.stringify(report, null, 2)}\n`);
    return {
      step: ctx.step,
      status: 'failed',
      work: 0,
      detail: `no user is complete (${report.left_out[0]?.user_id ?? '-'}: ${report.left_out[0]?.reason ?? 'no users'}); build/export-report.json says why for each`,
    };
  }
  const schemaText = readFileSync(w.settings.schema, 'utf8');
  const summary = await exportBenchmark(w.settings.out, { schema: schemaText, sdTasks: tasks.sd, mdTasks: tasks.md, users: built });
  report.users = summary.users;
  await writeFileAtomic(join(ctx.ws.root, 'build', 'export-report.json'), `${JSON.stringify(report, null, 2)}\n`);
  await ctx.save(inputs, fileStamp(buildMarker(w.settings.out)) ?? undefined);
  const left = report.left_out.length;
  return {
    step: ctx.step,
    status: 'ran',
    work: 1,
    detail: `${summary.users} users, ${summary.sd_scenarios} SD + ${summary.md_scenarios} MD scenarios -> ${w.settings.out}${left ? `; ${left} user(s) left out (build/export-report.json)` : ''}${report.flagged_inconsistent.length ? `; ${report.flagged_inconsistent.length} flagged by the consistency check` : ''}`,
  };
}

// ---------------------------------------------------------------------------------------------
// plens status

/** One build stage in `plens status`: its records kept, refused and failed, and what is left (estimated while earlier stages are not done). */
export interface BuildStageStatus {
  stage: BuildLlmStage;
  model: string;
  done: number;
  refused: number;
  failed: number;
  pending: number;
  estimated: boolean;
}

/** What the last export wrote (build/export-report.json), or null before any. */
export function lastExport(workspace: string): ExportReport | null {
  try {
    return JSON.parse(readFileSync(join(workspace, 'build', 'export-report.json'), 'utf8')) as ExportReport;
  } catch {
    return null;
  }
}

/** The build's part of `plens status`: per LLM stage, from the stage's own plan and records (nothing is called). */
export async function buildStatus(o: { p: PersonaLensPipeline; ws: Ctx['ws']; signal: AbortSignal }): Promise<BuildStageStatus[]> {
  const ctx = { p: o.p, ws: o.ws, signal: o.signal, dryRun: true, progress: false, retryFailed: false, shared: new Map(), runId: '' } as unknown as Ctx;
  const w = await worldOf(ctx);
  const out: BuildStageStatus[] = [];
  for (const stage of BUILD_LLM_STAGES) {
    const { units, coming } = await unitsOf(ctx, w, stage);
    const plan = await runStage(ctx, w, stage, units, true);
    const records = [...(await readBuildRecords(plan.dir)).values()];
    out.push({
      stage,
      model: w.settings.models[stage],
      done: records.filter((r) => r.status === 'ok').length,
      refused: records.filter((r) => r.status === 'parse_error').length,
      failed: records.filter((r) => r.status === 'failed').length,
      pending: plan.planned + coming,
      estimated: coming > 0,
    });
  }
  return out;
}
