import type { ChatMessage } from '../../llm/types.js';

/**
 * `templates: original`: the completion prompts the original builds by hand for Bedrock's Llama and
 * Mistral models, each a model's chat-template markup laid out as the original lays it out (its own
 * line breaks and spaces, the system prompt inside the text) and sent with InvokeModel. Markup and
 * layout are format facts: a byte apart is another request. The wording inside (system prompt,
 * preference, question with its baseline's text) is what the chat requests carry.
 *
 * Covered: the explicit form's preference turn and its question at zero-shot, remind and cot, the
 * requests of the leaderboard. The other paths (implicit forms, self-critic, RAG, the classification
 * task) are refused when the option is set (section.ts).
 */
export type TemplateFamily = 'llama' | 'mistral';

/** The filler turns as one string: each message in the family's markup, joined with nothing between. */
function fillerText(family: TemplateFamily, filler: readonly ChatMessage[]): string {
  return filler
    .map((m) =>
      family === 'llama'
        ? `<|start_header_id|>${m.role}<|end_header_id|>\n${m.content}<|eot_id|>`
        : m.role === 'user'
          ? `[INST] ${m.content} [/INST]`
          : `${m.content}</s>`,
    )
    .join('');
}

/** The explicit preference turn: the system prompt and the preference, the assistant's turn opened. */
export function preferencePrompt(family: TemplateFamily, system: string, preference: string): string {
  if (family === 'mistral') return `<s>[INST]${system} ${preference} [/INST]`;
  return (
    `\n<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\n${system} <|eot_id|>` +
    `<|start_header_id|>user<|end_header_id|>\n\n${preference}<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n`
  );
}

/** The question after the preference, its answer and the filler (`question` already carries its baseline's text and the word limit). */
export function questionPrompt(
  family: TemplateFamily,
  v: { system: string; preference: string; responseToPref: string; filler: readonly ChatMessage[]; question: string },
): string {
  const filler = fillerText(family, v.filler);
  if (family === 'mistral') return `<s>[INST]\n${v.system}\n${v.preference}\n[/INST]\n${v.responseToPref}</s>\n${filler}\n[INST]\n${v.question}\n[/INST]`;
  const turn = (role: string, text: string) => `<|start_header_id|>${role}<|end_header_id|>\n${text}\n<|eot_id|>\n`;
  return (
    `<|begin_of_text|>\n${turn('system', v.system)}${turn('user', v.preference)}${turn('assistant', v.responseToPref)}${filler}\n` +
    `${turn('user', v.question)}<|start_header_id|>assistant<|end_header_id|>`
  );
}
