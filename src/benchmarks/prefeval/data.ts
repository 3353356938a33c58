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

/**
 * How the preference reaches the assistant: stated (explicit), or revealed in a conversation the
 * user had with it (implicit: choice-based, the user picking among offered options; persona-driven,
 * a chat in which the preference comes up).
 */
export const FORMS = ['explicit', 'choice', 'persona'] as const;
export type Form = (typeof FORMS)[number];

/** One preference with the question a generic answer would violate. */
export interface ExplicitTask {
  topic: string;
  form: Form;
  /** The task's position in its topic file (the original's task_id). */
  index: number;
  preference: string;
  question: string;
  explanation: string | null;
  /** Implicit forms: the conversation that reveals the preference, as the original turns it into messages. */
  conversation: ConversationMessage[] | null;
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

/** A task's common fields from its checked record. */
function taskOf(topic: string, form: Form, index: number, o: Record<string, unknown>, conversation: ConversationMessage[] | null): ExplicitTask {
  return {
    topic,
    form,
    index,
    preference: o['preference'] as string,
    question: o['question'] as string,
    explanation: typeof o['explanation'] === 'string' ? o['explanation'] : null,
    conversation,
  };
}

/** A record of a topic file: an object whose preference and question are non-empty strings. */
function recordOf(file: string, index: number, r: unknown, expected: string): Record<string, unknown> {
  if (typeof r !== 'object' || r === null || Array.isArray(r)) throw bad(file, `/${index}`, expected);
  const o = r as Record<string, unknown>;
  for (const field of ['preference', 'question'])
    if (typeof o[field] !== 'string' || (o[field] as string).trim() === '') throw bad(file, `/${index}/${field}`, `expected a non-empty string in ${field}`);
  return o;
}

/** A topic's explicit preferences, checked: a list of {preference, question} with strings. */
export function readExplicitTopic(root: string, topic: string): ExplicitTask[] {
  const file = join(datasetDir(root), 'explicit_preference', `${topic}.json`);
  const data = readJson(file, `PrefEval topic ${topic}`);
  if (!Array.isArray(data)) throw bad(file, '', 'expected a list of preference records');
  return data.map((r, index): ExplicitTask => {
    const o = recordOf(file, index, r, 'expected an object with preference and question');
    return taskOf(topic, 'explicit', index, o, null);
  });
}

const IMPLICIT_FOLDER: Record<Exclude<Form, 'explicit'>, string> = { choice: 'choice-based', persona: 'persona-driven' };

/**
 * A topic's implicit preferences, each with its conversation as the original's
 * extract_conversation_to_messages (choice-based: every field in file order, `query` and
 * `user_selection` the user's, the others the assistant's) or extract_conversation_to_msg_persona
 * (persona-driven: turns in file order, within each its fields in file order, `user` the user's,
 * any other the assistant's; the turns must number as the last key says) makes it.
 */
export function readImplicitTopic(root: string, topic: string, form: Exclude<Form, 'explicit'>): ExplicitTask[] {
  const file = join(datasetDir(root), 'implicit_preference', IMPLICIT_FOLDER[form], `${topic}.json`);
  const data = readJson(file, `PrefEval ${IMPLICIT_FOLDER[form]} topic ${topic}`);
  if (!Array.isArray(data)) throw bad(file, '', 'expected a list of preference records');
  return data.map((r, index): ExplicitTask => {
    const o = recordOf(file, index, r, 'expected an object with preference, question and conversation');
    const c = o['conversation'];
    if (typeof c !== 'object' || c === null || Array.isArray(c)) throw bad(file, `/${index}/conversation`, 'expected an object');
    const conversation: ConversationMessage[] = [];
    const text = (v: unknown, pointer: string): string => {
      if (typeof v !== 'string') throw bad(file, pointer, 'expected a string');
      return v;
    };
    const entries = Object.entries(c as Record<string, unknown>);
    if (form === 'choice') {
      for (const [key, v] of entries)
        conversation.push({ role: key === 'query' || key === 'user_selection' ? 'user' : 'assistant', content: text(v, `/${index}/conversation/${key}`) });
    } else {
      for (const [turn, t] of entries) {
        if (typeof t !== 'object' || t === null || Array.isArray(t)) throw bad(file, `/${index}/conversation/${turn}`, 'expected {user, assistant}');
        for (const [role, v] of Object.entries(t as Record<string, unknown>))
          conversation.push({ role: role === 'user' ? 'user' : 'assistant', content: text(v, `/${index}/conversation/${turn}/${role}`) });
      }
      const last = entries.at(-1)?.[0];
      if (last === undefined || conversation.length !== (Number.parseInt(last, 10) + 1) * 2)
        throw bad(file, `/${index}/conversation`, 'expected turns numbered 0, 1, ... each with a user and an assistant message (the original asserts it)');
    }
    return taskOf(topic, form, index, o, conversation);
  });
}

/** A topic's tasks in one form. */
export function readTopic(root: string, topic: string, form: Form): ExplicitTask[] {
  return form === 'explicit' ? readExplicitTopic(root, topic) : readImplicitTopic(root, topic, form);
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

/**
 * One record of the classification (MCQ) task: the preference and question of
 * benchmark_dataset/mcq_options/<topic>.json with its four options, the first of which is the
 * one that follows the preference; for an implicit form, the conversation of the implicit file's
 * record at the same position (the original pairs them by position).
 */
export interface McqTask extends ExplicitTask {
  /** The options as the file lists them: options[0] follows the preference. */
  options: string[];
  /** Implicit forms: the implicit file's question at the same position (the original's implicit RAG asks it). */
  implicitQuestion: string | null;
}

/** A topic's MCQ records in one form, checked: four non-empty option strings each (the original letters them A-D). */
export function readMcqTopic(root: string, topic: string, form: Form): McqTask[] {
  const file = join(datasetDir(root), 'mcq_options', `${topic}.json`);
  const data = readJson(file, `PrefEval MCQ options for ${topic}`);
  if (!Array.isArray(data)) throw bad(file, '', 'expected a list of MCQ records');
  const implicit = form === 'explicit' ? null : readImplicitTopic(root, topic, form);
  if (implicit && implicit.length < data.length)
    throw new PlensError(
      'E_INPUT_SCHEMA',
      `${file}: ${data.length} MCQ records but the ${IMPLICIT_FOLDER[form as Exclude<Form, 'explicit'>]} file has ${implicit.length}; the original pairs them by position`,
      { location: { file, pointer: '' }, hint: 'use the MCQ and implicit files of one PrefEval release' },
    );
  return data.map((r, index): McqTask => {
    if (typeof r !== 'object' || r === null || Array.isArray(r))
      throw bad(file, `/${index}`, 'expected an object with preference, question and classification_task_options');
    const o = r as Record<string, unknown>;
    for (const field of ['preference', 'question'])
      if (typeof o[field] !== 'string' || (o[field] as string).trim() === '') throw bad(file, `/${index}/${field}`, `expected a non-empty string in ${field}`);
    const options = o['classification_task_options'];
    if (!Array.isArray(options) || options.length !== 4 || options.some((x) => typeof x !== 'string'))
      throw bad(
        file,
        `/${index}/classification_task_options`,
        'expected four option strings (the original letters them A-D; the first is the one that follows the preference)',
      );
    return {
      ...taskOf(topic, form, index, o, implicit ? implicit[index]!.conversation : null),
      options: options as string[],
      implicitQuestion: implicit ? implicit[index]!.question : null,
    };
  });
}
