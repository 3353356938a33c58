import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PlensError } from '../../core/errors.js';
import { parseJsonText } from '../../core/json-input.js';

/** PrefEval's 20 topics, as its files name them (benchmark_dataset/explicit_preference/<topic>.json). */
export const TOPICS = [
  'travel_transportation',
  'shop_motors',
  'lifestyle_beauty',
  'travel_restaurant',
  'shop_fashion',
  'entertain_shows',
  'pet_ownership',
  'lifestyle_fit',
  'entertain_games',
  'shop_home',
  'lifestyle_health',
  'travel_activities',
  'education_learning_styles',
  'entertain_music_book',
  'professional_work_location_style',
  'education_resources',
  'lifestyle_dietary',
  'shop_technology',
  'travel_hotel',
  'entertain_sports',
] as const;
export type Topic = (typeof TOPICS)[number];

/** One explicit preference with the question a generic answer would violate. */
export interface ExplicitTask {
  topic: string;
  /** The task's position in its topic file (the original's task_id). */
  index: number;
  preference: string;
  question: string;
  explanation: string | null;
}

export interface ConversationMessage {
  role: 'user' | 'assistant';
  content: string;
}

/** The dataset folder of a checkout (or the folder itself when it is one). */
export function datasetDir(root: string): string {
  return existsSync(join(root, 'benchmark_dataset')) ? join(root, 'benchmark_dataset') : root;
}

function readJson(file: string, what: string): unknown {
  if (!existsSync(file))
    throw new PlensError('E_INPUT_NOT_FOUND', `no ${what} at ${file}`, {
      hint: 'prefeval.data names a PrefEval checkout (github.com/amazon-science/PrefEval) or its benchmark_dataset folder',
    });
  return parseJsonText(readFileSync(file, 'utf8'), file);
}

const bad = (file: string, pointer: string, message: string) =>
  new PlensError('E_INPUT_SCHEMA', message, {
    location: { file, pointer },
    hint: 'the layout of benchmark_dataset/explicit_preference/<topic>.json in the PrefEval release',
  });

/** A topic's explicit preferences, checked: a list of {preference, question} with strings. */
export function readExplicitTopic(root: string, topic: string): ExplicitTask[] {
  const file = join(datasetDir(root), 'explicit_preference', `${topic}.json`);
  const data = readJson(file, `PrefEval topic ${topic}`);
  if (!Array.isArray(data)) throw bad(file, '', 'expected a list of preference records');
  return data.map((r, index): ExplicitTask => {
    if (typeof r !== 'object' || r === null || Array.isArray(r)) throw bad(file, `/${index}`, 'expected an object with preference and question');
    const o = r as Record<string, unknown>;
    for (const field of ['preference', 'question'])
      if (typeof o[field] !== 'string' || (o[field] as string).trim() === '') throw bad(file, `/${index}/${field}`, `expected a non-empty string in ${field}`);
    return {
      topic,
      index,
      preference: o['preference'] as string,
      question: o['question'] as string,
      explanation: typeof o['explanation'] === 'string' ? o['explanation'] : null,
    };
  });
}

/**
 * The filler conversation the original places between the preference and the question: every
 * conversation of filtered_inter_turns.json, concatenated in file order.
 */
export function readInterTurns(root: string): ConversationMessage[] {
  const file = join(datasetDir(root), 'filtered_inter_turns.json');
  const data = readJson(file, 'PrefEval filler conversations (filtered_inter_turns.json)');
  if (!Array.isArray(data)) throw bad(file, '', 'expected a list of conversations');
  const out: ConversationMessage[] = [];
  data.forEach((c, i) => {
    const conversation = (c as { conversation?: unknown } | null)?.conversation;
    if (!Array.isArray(conversation)) throw bad(file, `/${i}/conversation`, 'expected a list of messages');
    conversation.forEach((m, j) => {
      const msg = m as { role?: unknown; content?: unknown } | null;
      if ((msg?.role !== 'user' && msg?.role !== 'assistant') || typeof msg.content !== 'string')
        throw bad(file, `/${i}/conversation/${j}`, 'expected {role: user|assistant, content: string}');
      out.push({ role: msg.role, content: msg.content });
    });
  });
  return out;
}

/**
 * The first `turns` user-assistant pairs of the filler, as the original takes them: the first
 * 2 x turns messages, the last of which must be the assistant's. 0 turns: none.
 */
export function interTurnMessages(all: readonly ConversationMessage[], turns: number): ConversationMessage[] {
  if (turns <= 0) return [];
  const taken = all.slice(0, turns * 2);
  if (taken.length < turns * 2)
    throw new PlensError('E_USAGE', `prefeval.inter_turns ${turns}: the filler conversations hold only ${Math.floor(all.length / 2)} turns`);
  if (taken.at(-1)!.role !== 'assistant')
    throw new PlensError(
      'E_INPUT_SCHEMA',
      `prefeval.inter_turns ${turns}: the filler's message ${turns * 2} is not the assistant's (the original refuses it too)`,
    );
  return taken;
}
