import { resolve } from 'node:path';
import { sampleDataDir } from '../../core/paths.js';
import type { BatchOptions } from '../../engine/llm-stage.js';
import type { Pipeline, SectionContext } from '../../platform/pipeline.js';
import { resolveBatch } from '../../platform/run-settings.js';
import { STAGE_DEFAULTS } from './stage-defaults.js';
import { DEFAULT_DIMENSIONS, type JudgeDimensionName } from './judge-dimensions.js';
import { scenarioSelectionOf, type ScenarioSelectionInput } from './scenario-settings.js';
import type { ScenarioSelection } from './scenarios/selection-spec.js';
import type { Setting } from './settings.js';
import { resolveBuildSection, type BuildSettings } from './construction/section.js';

/** PersonaLens's sections of a pipeline file as written (checked against schemas/pipeline.schema.json). */
interface PersonaLensSections {
  name: string;
  workspace?: string;
  build?: unknown;
  data?: { from: string; schema?: string };
  scenarios?: ScenarioSelectionInput & { kind: 'sd' | 'md' | 'all' };
  dialogues?: { user?: string; assistants: string[]; settings: Setting[]; replicates?: number; prompts?: string };
  judge?: {
    model: string;
    dimensions?: JudgeDimensionName[];
    reask?: boolean;
    batch?: boolean;
    batch_fallback?: string;
    poll_interval_s?: number;
    batch_size?: number;
  };
}

/** A PersonaLens pipeline: the upstream data, the scenario selection, the grid of dialogues and the judge. */
export interface PersonaLensPipeline extends Pipeline {
  /** Building the benchmark first (construction/): with it, data defaults to the build's output. */
  build?: BuildSettings;
  data?: { from: string; schema?: string };
  selection?: ScenarioSelection;
  dialogues?: { user?: string; assistants: string[]; settings: Setting[]; replicates: number; prompts?: string };
  judge?: { model: string; dimensions: JudgeDimensionName[]; reask: boolean; batch?: BatchOptions };
}

/** The sections resolved: paths absolute, defaults filled in, model specs checked at their lines. */
export function resolvePersonaLensSections(raw: Record<string, unknown>, ctx: SectionContext): Record<string, unknown> {
  const p = raw as unknown as PersonaLensSections;
  p.dialogues?.assistants.forEach((a, i) => ctx.checkSpec(a, `/dialogues/assistants/${i}`));
  if (p.dialogues?.user) ctx.checkSpec(p.dialogues.user, '/dialogues/user');
  if (p.judge) ctx.checkSpec(p.judge.model, '/judge/model');
  if (p.judge && !p.dialogues) throw ctx.error('a judge needs dialogues to judge', '/judge');
  const selection = p.scenarios ? scenarioSelectionOf(p.scenarios, ctx.locate) : undefined;
  const judge = p.judge;
  // The workspace as the loader resolves it (a build's output defaults to a folder in it).
  const build = p.build !== undefined ? resolveBuildSection(p.build, resolve(ctx.userPath(p.workspace ?? `out/${p.name}`)), ctx) : undefined;
  if (p.data && build)
    throw ctx.error(
      'a pipeline with a build section imports what the build writes: leave data out',
      '/data',
      'remove the data section (the build exports to build.out, default <workspace>/built), or the build section to import other data',
    );
  if (!p.data && !build)
    throw ctx.error(
      'missing required field "data" (a personalens pipeline needs it, or a build section to make it)',
      '',
      'data: {from: sample}, or a folder in the upstream layout',
    );
  return {
    ...(build ? { build, ...(p.data ? {} : { data: { from: resolve(build.out, 'data'), schema: resolve(build.out, 'res', 'schema.json') } }) } : {}),
    ...(p.data
      ? {
          data: {
            from: p.data.from === 'sample' ? sampleDataDir : ctx.userPath(p.data.from),
            ...(p.data.schema ? { schema: ctx.userPath(p.data.schema) } : {}),
          },
        }
      : {}),
    ...(selection ? { selection } : {}),
    ...(p.dialogues
      ? {
          dialogues: {
            ...(p.dialogues.user ? { user: p.dialogues.user } : {}),
            assistants: p.dialogues.assistants,
            settings: p.dialogues.settings,
            replicates: p.dialogues.replicates ?? STAGE_DEFAULTS.replicates,
            ...(p.dialogues.prompts ? { prompts: ctx.userPath(p.dialogues.prompts) } : {}),
          },
        }
      : {}),
    ...(judge
      ? (() => {
          const batch = resolveBatch({ pipeline: { judge: judge as unknown as Record<string, unknown>, locate: ctx.locate } });
          return {
            judge: {
              model: judge.model,
              dimensions: judge.dimensions ?? DEFAULT_DIMENSIONS,
              reask: judge.reask ?? STAGE_DEFAULTS.reask,
              ...(batch ? { batch } : {}),
            },
          };
        })()
      : {}),
  };
}
