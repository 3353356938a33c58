import type { ChatMessage } from '../../llm/types.js';

/**
 * `requests: original`: the completion prompts the original builds by hand for Bedrock's Llama and
 * Mistral models, each a model's chat-template markup laid out as the original lays it out (its own
 * line breaks, its eight-space indents inside some Llama strings, Mistral's conversation with its
 * first six characters cut, the fixed system prompt of its implicit paths), sent with InvokeModel.
 * Markup and layout are format facts: a byte apart is another request. The wording inside (system
 * prompt, preference, question with its baseline's text, critique and revision requests) is what
 * the chat requests carry.
 *
 * Covered: every request of both tasks. The classification task's strings are the generation
 * task's, the question carrying its options; for Mistral, its question and revision strings end
 * with the answer begun, `<choice>` (`choice: true`).
 */
export type TemplateFamily = 'llama' | 'mistral';

/** How a record opens: the stated preference and its answer (explicit), or the revealing conversation (implicit). */
export type Opening = { preference: string; responseToPref: string } | { conversation: readonly ChatMessage[] };

/** The system prompt the original writes into its implicit paths' strings, whatever the configured one. */
const IMPLICIT_SYSTEM = 'You are a helpful AI assistant.';
/** The indent of the lines of the original's indented Llama strings (they sit inside a function). */
const INDENT = '        ';

const L = {
  begin: '<|begin_of_text|>',
  eot: '<|eot_id|>',
  header: (role: string) => `<|start_header_id|>${role}<|end_header_id|>`,
};

/** Messages in the family's markup, joined with nothing between (the original's filler and implicit conversations). */
function marked(family: TemplateFamily, messages: readonly ChatMessage[]): string {
  return messages
    .map((m) => (family === 'llama' ? `${L.header(m.role)}\n${m.content}${L.eot}` : m.role === 'user' ? `[INST] ${m.content} [/INST]` : `${m.content}</s>`))
    .join('');
}

/** Lines as a triple-quoted string lays them out: each after the first starts with `indent`. */
const lines = (indent: string, ...parts: string[]) => parts.join(`\n${indent}`);

/** A Llama turn in the layout of the original's multi-line strings: header, text, end, a line each. */
const turn = (role: string, text: string) => [L.header(role), text, L.eot];

export class OriginalTemplates {
  private readonly filler: string;
  private readonly conversation: string | undefined;

  constructor(
    private readonly family: TemplateFamily,
    private readonly v: { system: string; opening: Opening; filler: readonly ChatMessage[]; choice?: boolean },
  ) {
    this.filler = marked(family, v.filler);
    this.conversation = 'conversation' in v.opening ? marked(family, v.opening.conversation) : undefined;
  }

  private get explicit(): { preference: string; responseToPref: string } | undefined {
    return 'preference' in this.v.opening ? this.v.opening : undefined;
  }

  /** The explicit preference turn (its answer is the opening's responseToPref afterwards). */
  static preference(family: TemplateFamily, system: string, preference: string): string {
    if (family === 'mistral') return `<s>[INST]${system} ${preference} [/INST]`;
    return `\n${L.begin}${L.header('system')}\n\n${system} ${L.eot}${L.header('user')}\n\n${preference}${L.eot}${L.header('assistant')}\n`;
  }

  /** The question (its baseline's text and the word limit or the options already in it); `rag`: the retrieval baseline's string. */
  question(question: string, rag: boolean): string {
    const text = this.questionText(question, rag);
    return this.family === 'mistral' && this.v.choice ? `${text}\n<choice>\n` : text;
  }

  private questionText(question: string, rag: boolean): string {
    // The plain and the RAG strings are alike for an explicit preference. Implicit: RAG's string
    // names the configured system prompt and is not indented; the others are.
    const implicitSystem = rag ? this.v.system : IMPLICIT_SYSTEM;
    if (this.family === 'mistral') return lines('', ...this.mistralHead(implicitSystem, []), '[INST]', question, '[/INST]');
    const indent = this.explicit || rag ? '' : INDENT;
    return lines(indent, ...this.llamaHead(implicitSystem, []), ...turn('user', question), L.header('assistant'));
  }

  /**
   * The lines of a Mistral string before the question: the explicit preference and its answer, or
   * the implicit conversation under `implicitSystem` followed by `implicitBreak` (the critique's
   * `[/INST]`, the revision's empty line, the question's nothing), then the filler.
   */
  private mistralHead(implicitSystem: string, implicitBreak: string[]): string[] {
    const e = this.explicit;
    return e
      ? ['<s>[INST]', this.v.system, e.preference, '[/INST]', `${e.responseToPref}</s>`, this.filler]
      : ['<s>[INST]', implicitSystem, this.conversation!.slice(6), ...implicitBreak, this.filler];
  }

  /**
   * The lines of a Llama string before the question, as `mistralHead`: the explicit preference and
   * its answer a turn each, or the implicit conversation under `implicitSystem` followed by
   * `implicitBreak` (the self-critic strings' extra end of turn), then the filler.
   */
  private llamaHead(implicitSystem: string, implicitBreak: string[]): string[] {
    const e = this.explicit;
    return e
      ? [L.begin, ...turn('system', this.v.system), ...turn('user', e.preference), ...turn('assistant', e.responseToPref), this.filler]
      : [L.begin, ...turn('system', implicitSystem), this.conversation!, ...implicitBreak, this.filler];
  }

  /** Self-critic's critique request after the zero-shot answer (`question` as asked, no word limit). */
  critique(question: string, answer: string, critique: string): string {
    if (this.family === 'mistral')
      return lines('', ...this.mistralHead(IMPLICIT_SYSTEM, ['[/INST]']), '[INST]', question, '[/INST]', `${answer}</s>`, '[INST]', critique, '[/INST]', '');
    const e = this.explicit;
    // The explicit string alone puts the filler on the line of the answer's end of turn.
    const head = e
      ? [L.begin, ...turn('system', this.v.system), ...turn('user', e.preference), L.header('assistant'), e.responseToPref, `${L.eot}${this.filler}`]
      : this.llamaHead(IMPLICIT_SYSTEM, [L.eot]);
    return lines(INDENT, ...head, ...turn('user', question), ...turn('assistant', answer), ...turn('user', critique), L.header('assistant'), '');
  }

  /** Self-critic's revision request, after the critique and its answer. */
  revision(question: string, answer: string, critique: string, critic: string, revision: string): string {
    const text = this.revisionText(question, answer, critique, critic, revision);
    return this.family === 'mistral' && this.v.choice ? `${text}<choice>\n` : text;
  }

  private revisionText(question: string, answer: string, critique: string, critic: string, revision: string): string {
    if (this.family === 'mistral') {
      return lines(
        '',
        ...this.mistralHead(IMPLICIT_SYSTEM, ['']),
        '[INST]',
        question,
        '[/INST]',
        `${answer}</s>`,
        '[INST]',
        critique,
        '[/INST]',
        `${critic}</s>`,
        '[INST]',
        revision,
        '[/INST]',
        '',
      );
    }
    return lines(
      INDENT,
      ...this.llamaHead(IMPLICIT_SYSTEM, [L.eot]),
      ...turn('user', question),
      ...turn('assistant', answer),
      ...turn('user', critique),
      ...turn('assistant', critic),
      ...turn('user', revision),
      L.header('assistant'),
      '',
    );
  }
}
