import { hashParts, partitionName, samplingIdentity } from '../../engine/llm-stage.js';
import { Partition } from '../../engine/partition.js';
import type { LlmClient } from '../../llm/client.js';
import type { SamplingParams } from '../../llm/types.js';
import type { PromptStyle } from './prompt-set.js';
import { DIALOGUES_FORMAT } from './records.js';
import { PAPER_SAMPLING, type Setting } from './settings.js';

/** One cell of the experiment grid: an assistant under one setting, talking to one user agent. */
export interface DialogueCell {
  setting: Setting;
  assistant: { model: string; params: SamplingParams; endpoint?: string };
  user: { model: string; params: SamplingParams; endpoint?: string };
  promptVersion: string;
  /** The assistant's prompt layout (xml or markdown), part of the cell's identity. */
  promptStyle: PromptStyle;
  simulated: boolean;
}

export function makeCell(setting: Setting, assistant: LlmClient, user: LlmClient, promptVersion: string, promptStyle: PromptStyle): DialogueCell {
  return {
    setting,
    assistant: { model: assistant.id, params: assistant.params(PAPER_SAMPLING.assistant), ...(assistant.endpoint ? { endpoint: assistant.endpoint } : {}) },
    user: { model: user.id, params: user.params(PAPER_SAMPLING.user), ...(user.endpoint ? { endpoint: user.endpoint } : {}) },
    promptVersion,
    promptStyle,
    simulated: assistant.spec.provider === 'sim' || user.spec.provider === 'sim',
  };
}

function identity(cell: DialogueCell): unknown[] {
  const p = samplingIdentity;
  const base = [cell.assistant.model, p(cell.assistant.params), cell.setting, cell.user.model, p(cell.user.params), cell.promptVersion, cell.promptStyle];
  // Two servers are two configurations; the vendor's default endpoint adds nothing, so its keys stay as they were.
  if (!cell.assistant.endpoint && !cell.user.endpoint) return base;
  return [...base, { assistant_endpoint: cell.assistant.endpoint ?? null, user_endpoint: cell.user.endpoint ?? null }];
}

export { hashParts, slugName } from '../../engine/llm-stage.js';

/** Hash of everything that decides a dialogue: the idempotent key of one output record. */
export function dialogueKey(cell: DialogueCell, scenarioId: string, replicate: number): string {
  return hashParts(['dialogue-v1', scenarioId, ...identity(cell), replicate]);
}

/** The cell's folder under <workspace>/dialogues: readable, and unique per configuration. */
export function cellDir(root: string, cell: DialogueCell): string {
  return cellPartition(root, cell).dir;
}

/** The cell's partition under <workspace>/dialogues. */
export function cellPartition(root: string, cell: DialogueCell): Partition {
  return Partition.in(root, partitionName([cell.setting, cell.assistant.model], identity(cell)), DIALOGUES_FORMAT);
}
