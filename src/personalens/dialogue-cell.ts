import { createHash } from 'node:crypto';
import { join } from 'node:path';
import type { LlmClient } from '../llm/client.js';
import type { SamplingParams } from '../llm/types.js';
import { PAPER_SAMPLING, type Setting } from './settings.js';

/** One cell of the experiment grid: an assistant under one setting, talking to one user agent. */
export interface DialogueCell {
  setting: Setting;
  assistant: { model: string; params: SamplingParams };
  user: { model: string; params: SamplingParams };
  promptVersion: string;
  simulated: boolean;
}

export function makeCell(setting: Setting, assistant: LlmClient, user: LlmClient, promptVersion: string): DialogueCell {
  return {
    setting,
    assistant: { model: assistant.id, params: assistant.params(PAPER_SAMPLING.assistant) },
    user: { model: user.id, params: user.params(PAPER_SAMPLING.user) },
    promptVersion,
    simulated: assistant.spec.provider === 'sim' || user.spec.provider === 'sim',
  };
}

function identity(cell: DialogueCell): unknown[] {
  const p = (x: SamplingParams) => [x.temperature, x.maxTokens];
  return [cell.assistant.model, p(cell.assistant.params), cell.setting, cell.user.model, p(cell.user.params), cell.promptVersion];
}

/** Hash of everything that decides a dialogue: the idempotent key of one output record. */
export function dialogueKey(cell: DialogueCell, scenarioId: string, replicate: number): string {
  return createHash('sha256').update(JSON.stringify(['dialogue-v1', scenarioId, ...identity(cell), replicate])).digest('hex').slice(0, 32);
}

/** The cell's folder under <workspace>/dialogues: readable, and unique per configuration. */
export function cellDir(root: string, cell: DialogueCell): string {
  const hash = createHash('sha256').update(JSON.stringify(identity(cell))).digest('hex').slice(0, 8);
  const slug = (s: string) => s.replace(/[^A-Za-z0-9.+-]+/g, '_');
  return join(root, `${slug(cell.setting)}__${slug(cell.assistant.model)}__${hash}`);
}
