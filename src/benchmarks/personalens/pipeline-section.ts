import { sampleDataDir } from '../../core/paths.js';
import type { BatchOptions } from '../../engine/llm-stage.js';
import type { Pipeline, SectionContext } from '../../platform/pipeline.js';
import { resolveBatch, STAGE_DEFAULTS } from '../../platform/run-settings.js';
import { DEFAULT_DIMENSIONS, type JudgeDimensionName } from './judge-dimensions.js';
import { scenarioSelectionOf, type ScenarioSelectionInput } from './scenario-settings.js';
import type { ScenarioSelection } from './scenarios/selection-spec.js';
import type { Setting } from './settings.js';

/** PersonaLens's sections of a pipeline file as written (checked against schemas/pipeline.schema.json). */
interface PersonaLensSections {
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
  data?: { from: string; schema?: string };
  selection?: ScenarioSelection;
  dialogues?: { user?: string; assistants: string[]; settings: Setting[]; replicates: number; prompts?: string };
  judge?: { model: string; dimensions: JudgeDimensionName[]; reask: boolean; batch?: BatchOptions };
}

/** The sections resolved: paths absolute, defaults filled in, model specs checked at their lines. */
export function resolvePersonaLensSections(raw: Record<string, unknown>, ctx: SectionContext): Record<string, unknown> {
  const p = raw as PersonaLensSections;
  p.dialogues?.assistants.forEach((a, i) => ctx.checkSpec(a, `/dialogues/assistants/${i}`));
  if (p.dialogues?.user) ctx.checkSpec(p.dialogues.user, '/dialogues/user');
  if (p.judge) ctx.checkSpec(p.judge.model, '/judge/model');
  if (p.judge && !p.dialogues) throw ctx.error('a judge needs dialogues to judge', '/judge');
  const selection = p.scenarios ? scenarioSelectionOf(p.scenarios, ctx.locate) : undefined;
  const judge = p.judge;
  return {
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
