import { findNodeAtLocation, parseTree, type JSONPath } from 'jsonc-parser';
import { PlensError } from '../../../core/errors.js';
import { lineColumnOf, parseJsonText, readInputText } from '../../../core/json-input.js';

export interface LegacyMessage {
  role: 'user' | 'assistant';
  content: string;
}

/**
 * Reads one dialogue file of the original scripts. Accepted shapes (our reading; docs/personalens.md):
 * - a list of messages, or an object with exactly one of `messages` / `dialogue` holding that list
 *   (other keys of the object are ignored);
 * - a message is an object with a role under `role` or `speaker` ("user" or "assistant", any case)
 *   and its text under `content` or `text` (a string; empty is allowed); other keys are ignored.
 * Anything else (another role, a non-string text, both spellings of a key in one place, an empty
 * list) is a problem naming the file, the line and the JSON pointer. Every problem is collected.
 */
export async function readLegacyDialogue(file: string): Promise<{ messages: LegacyMessage[] | undefined; problems: PlensError[] }> {
  let text: string;
  try {
    text = await readInputText(file);
  } catch (error) {
    if (error instanceof PlensError) return { messages: undefined, problems: [error] };
    throw error;
  }
  return parseLegacyDialogue(text.replace(/^\uFEFF/, ''), file);
}

export function parseLegacyDialogue(text: string, file: string): { messages: LegacyMessage[] | undefined; problems: PlensError[] } {
  let value: unknown;
  try {
    value = parseJsonText(text, file);
  } catch (error) {
    if (error instanceof PlensError) return { messages: undefined, problems: [error] };
    throw error;
  }
  const problems: PlensError[] = [];
  // The line of a pointer is looked up only when there is a problem to report.
  let tree: ReturnType<typeof parseTree> | undefined;
  const problem = (path: JSONPath, message: string) => {
    tree ??= parseTree(text);
    const node = tree ? findNodeAtLocation(tree, path) : undefined;
    const line = node ? lineColumnOf(text, node.offset).line : undefined;
    const pointer = '/' + path.map((p) => String(p).replace(/~/g, '~0').replace(/\//g, '~1')).join('/');
    problems.push(
      new PlensError('E_INPUT_SCHEMA', message, { location: { file, ...(line !== undefined ? { line } : {}), pointer: path.length ? pointer : '' } }),
    );
  };

  let list: unknown = value;
  let base: JSONPath = [];
  if (!Array.isArray(value)) {
    if (value === null || typeof value !== 'object') {
      problem([], `expected a list of messages (or an object with "messages" or "dialogue"), found ${kindOf(value)}`);
      return { messages: undefined, problems };
    }
    const keys = ['messages', 'dialogue'].filter((k) => k in value);
    if (keys.length !== 1) {
      problem(
        [],
        keys.length === 0
          ? 'expected a list of messages, or an object with "messages" or "dialogue" holding one'
          : 'both "messages" and "dialogue" are present: which one is the dialogue is ambiguous',
      );
      return { messages: undefined, problems };
    }
    base = [keys[0]!];
    list = (value as Record<string, unknown>)[keys[0]!];
    if (!Array.isArray(list)) {
      problem(base, `"${keys[0]}" must be a list of messages, found ${kindOf(list)}`);
      return { messages: undefined, problems };
    }
  }
  const items = list as unknown[];
  if (items.length === 0) {
    problem(base, 'the dialogue has no messages');
    return { messages: undefined, problems };
  }
  const messages: LegacyMessage[] = [];
  items.forEach((item, i) => {
    const at = [...base, i];
    if (item === null || typeof item !== 'object' || Array.isArray(item)) {
      problem(at, `a message must be an object with role and content, found ${kindOf(item)}`);
      return;
    }
    const m = item as Record<string, unknown>;
    const role = oneOf(m, ['role', 'speaker'], at, problem);
    const content = oneOf(m, ['content', 'text'], at, problem);
    if (role === undefined || content === undefined) return;
    let r: LegacyMessage['role'] | undefined;
    if (typeof role.value !== 'string') problem([...at, role.key], `the role must be a string, found ${kindOf(role.value)}`);
    else {
      const lower = role.value.trim().toLowerCase();
      if (lower === 'user' || lower === 'assistant') r = lower;
      else problem([...at, role.key], `role "${role.value}" is not "user" or "assistant"`);
    }
    if (typeof content.value !== 'string') problem([...at, content.key], `the message text must be a string, found ${kindOf(content.value)}`);
    else if (r) messages.push({ role: r, content: content.value });
  });
  return { messages: problems.length ? undefined : messages, problems };
}

/** The one key of `keys` present in the message; none or both is a problem. */
function oneOf(
  m: Record<string, unknown>,
  keys: [string, string],
  at: JSONPath,
  problem: (path: JSONPath, message: string) => void,
): { key: string; value: unknown } | undefined {
  const present = keys.filter((k) => k in m);
  if (present.length === 1) return { key: present[0]!, value: m[present[0]!] };
  problem(
    at,
    present.length === 0
      ? `the message has no "${keys[0]}" (or "${keys[1]}")`
      : `the message has both "${keys[0]}" and "${keys[1]}": which one counts is ambiguous`,
  );
  return undefined;
}

function kindOf(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'a list';
  return typeof v === 'object' ? 'an object' : `a ${typeof v}`;
}

/** A judge reply file: its text as is (BOM removed); the judge-reply parser does the rest. */
export async function readLegacyReply(file: string): Promise<{ text: string } | { problem: PlensError }> {
  try {
    return { text: (await readInputText(file)).replace(/^\uFEFF/, '') };
  } catch (error) {
    if (error instanceof PlensError) return { problem: error };
    throw error;
  }
}
