import { usageError } from '../../core/errors.js';

/** The assistant settings of the paper's ablation (Table 4): which context blocks the assistant gets. */
export const SETTINGS = {
  vanilla: { system: 'assistant-system-vanilla', demographics: false, interactions: false, situation: false },
  base: { system: 'assistant-system-base', demographics: false, interactions: false, situation: false },
  'base+d': { system: 'assistant-system-base', demographics: true, interactions: false, situation: false },
  'base+i': { system: 'assistant-system-base', demographics: false, interactions: true, situation: false },
  'base+s': { system: 'assistant-system-base', demographics: false, interactions: false, situation: true },
  'base+all': { system: 'assistant-system-base', demographics: true, interactions: true, situation: true },
} as const;

export type Setting = keyof typeof SETTINGS;
export const SETTING_NAMES = Object.keys(SETTINGS) as Setting[];

export function parseSetting(name: string): Setting {
  const s = name.trim().toLowerCase();
  if (!(s in SETTINGS)) throw usageError(`--setting "${name}": use one of ${SETTING_NAMES.join(', ')}`);
  return s as Setting;
}

/** The paper's sampling: user agent at temperature 0.5, assistant at 0, 800 output tokens each. */
export const PAPER_SAMPLING = {
  user: { temperature: 0.5, maxTokens: 800 },
  assistant: { temperature: 0, maxTokens: 800 },
} as const;

/** Rounds (an assistant answer and a user reply each) before a dialogue ends on the user's message, as in the original. */
export const ROUND_LIMITS = { SD: 20, MD: 30 } as const;

export const TERMINATE = 'TERMINATE';
