/**
 * PrefEval's RAG baseline: which earlier exchanges go before the question. Each exchange has a
 * similarity to the question; the original sorts them by it (highest first, ties in order) and
 * takes 5. The similarities come either from the original's precomputed SimCSE retrievals in the
 * user's checkout (benchmark_dataset/rag_retrieval, `retrieval: original`: exact), or from
 * plens's embeddings of the same exchanges (`retrieval: <embeddings spec>`: the cosine of the
 * question's vector and each exchange's, a documented option).
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PlensError } from '../../core/errors.js';
import { parseJsonText } from '../../core/json-input.js';
import type { Embedder } from '../../llm/embeddings.js';
import { type ConversationMessage, datasetDir, type Form } from './data.js';

/** The exchanges RAG puts before the question: the original asserts exactly 5. */
export const RAG_TOP_K = 5;

/** An exchange as the original's retrieval index writes it: `<role>: <content>`. */
export const exchangeText = (m: ConversationMessage) => `${m.role}: ${m.content}`;

/** Why an item cannot be retrieved for (the original stops there with an exception). */
export class RetrievalError extends Error {}

/**
 * Explicit: the scores of the preference (0), its answer (1) and the filler's messages (2...),
 * cut to the 2 + 2 x turns the conversation holds, sorted, the first 5 named: 0 as
 * `User: <preference>`, 1 as `Assistant: <this run's answer>`, the others by the index's text.
 */
export function topExplicit(
  scores: ReadonlyArray<readonly [number, number]>,
  interTurns: number,
  text: { preference: string; answer: string; exchange: (index: number) => string },
): string[] {
  const ranked = [...scores.slice(0, 2 + interTurns * 2)].sort((a, b) => b[1] - a[1]).slice(0, RAG_TOP_K);
  const out = ranked.map(([index]) => (index === 0 ? `User: ${text.preference}` : index === 1 ? `Assistant: ${text.answer}` : text.exchange(index)));
  if (out.length !== RAG_TOP_K) throw new RetrievalError(`only ${out.length} exchanges to retrieve from at ${interTurns} filler turns; RAG takes ${RAG_TOP_K}`);
  return out;
}

/**
 * Implicit: the scores of the revealing conversation's messages, then of the filler's first
 * 2 x turns messages, sorted together (conversation first among equals), the first 5 named by
 * their `<role>: <content>`.
 */
export function topImplicit(
  conversationScores: readonly number[],
  fillerScores: readonly number[],
  interTurns: number,
  conversation: readonly ConversationMessage[],
  filler: readonly ConversationMessage[],
): string[] {
  const combined = [
    ...conversationScores.map((score, i) => ({ score, text: () => exchangeText(conversation[i]!) })),
    ...fillerScores.slice(0, interTurns * 2).map((score, i) => ({ score, text: () => exchangeText(filler[i]!) })),
  ];
  const ranked = combined.sort((a, b) => b.score - a.score).slice(0, RAG_TOP_K);
  if (ranked.length !== RAG_TOP_K)
    throw new RetrievalError(`only ${ranked.length} exchanges to retrieve from at ${interTurns} filler turns; RAG takes ${RAG_TOP_K}`);
  return ranked.map((r) => {
    try {
      return r.text();
    } catch {
      throw new RetrievalError('a retrieval score names a message the conversation does not have');
    }
  });
}

type Scores = Array<[number, number]>;

const FOLDERS = {
  explicit: (topic: string) => [
    `simcse_explicit_pref/${topic}_overall300_topk_history.json`,
    `simcse_explicit_pref/msg_index_${topic}_overall300_topk_history.json`,
  ],
  choice: (topic: string) => [`simcse_implicit_choice/${topic}_overall300_topk_history_mcq.json`],
  persona: (topic: string) => [`simcse_implicit_persona/${topic}_overall300_topk_history_persona.json`],
  inter: (topic: string) => [`simcse_question_inter_conversation_similarities/${topic}_300_inter_similarities.json`],
};

/** The original's precomputed retrievals, read from benchmark_dataset/rag_retrieval of the user's checkout, a file once. */
export class OriginalRetrievals {
  private readonly files = new Map<string, unknown>();
  readonly dir: string;

  constructor(root: string) {
    this.dir = join(datasetDir(root), 'rag_retrieval');
    if (!existsSync(this.dir))
      throw new PlensError('E_INPUT_NOT_FOUND', `no rag_retrieval folder in ${datasetDir(root)}`, {
        hint: "retrieval: original reads the release's precomputed SimCSE retrievals (benchmark_dataset/rag_retrieval of a full PrefEval checkout); or give an embeddings spec, e.g. retrieval: local:models/all-MiniLM-L6-v2",
      });
  }

  private read(path: string): unknown {
    let data = this.files.get(path);
    if (data === undefined) {
      const file = join(this.dir, path);
      if (!existsSync(file))
        throw new PlensError('E_INPUT_NOT_FOUND', `no retrieval file ${file}`, { hint: 'the rag_retrieval folder of a PrefEval checkout as released' });
      data = parseJsonText(readFileSync(file, 'utf8'), file);
      this.files.set(path, data);
    }
    return data;
  }

  private scores(path: string, index: number, field: string): Scores {
    const data = this.read(path);
    if (!Array.isArray(data)) throw new PlensError('E_INPUT_SCHEMA', `${join(this.dir, path)}: expected a list of records`);
    const record = data[index] as Record<string, unknown> | undefined;
    if (record === undefined) throw new RetrievalError(`${path} has no record ${index} (it holds ${data.length})`);
    const s = record[field];
    if (!Array.isArray(s) || s.some((x) => !Array.isArray(x) || typeof x[0] !== 'number' || typeof x[1] !== 'number'))
      throw new PlensError('E_INPUT_SCHEMA', `${field} is not a list of [index, score] pairs`, {
        location: { file: join(this.dir, path), pointer: `/${index}/${field}` },
      });
    return s as Scores;
  }

  /** Explicit: the record's scores and the index's texts. */
  explicit(topic: string, index: number): { scores: Scores; exchange: (i: number) => string } {
    const [scoresFile, indexFile] = FOLDERS.explicit(topic) as [string, string];
    const scores = this.scores(scoresFile, index, 'sentence_scores');
    const texts = this.read(indexFile) as Record<string, unknown>;
    return {
      scores,
      exchange: (i) => {
        const t = texts[String(i)];
        if (typeof t !== 'string') throw new RetrievalError(`${indexFile} has no text for exchange ${i}`);
        return t;
      },
    };
  }

  /** Implicit: the conversation's scores (all of them) and the filler's. */
  implicit(topic: string, form: Exclude<Form, 'explicit'>, index: number): { conversation: number[]; filler: number[] } {
    return {
      conversation: this.scores(FOLDERS[form](topic)[0]!, index, 'sentence_scores').map((x) => x[1]),
      filler: this.scores(FOLDERS.inter(topic)[0]!, index, 'inter_sentence_scores').map((x) => x[1]),
    };
  }
}

function cosine(a: Float64Array, b: Float64Array): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i]! * b[i]!;
    na += a[i]! * a[i]!;
    nb += b[i]! * b[i]!;
  }
  return na === 0 || nb === 0 ? 0 : dot / Math.sqrt(na * nb);
}

/** Similarities from plens's embeddings: the cosine of the question's vector and each exchange's (vectors are cached). */
export async function similarities(embedder: Embedder, question: string, exchanges: readonly string[], signal?: AbortSignal): Promise<number[]> {
  const vectors = await embedder.embed([question, ...exchanges], signal);
  return vectors.slice(1).map((v) => cosine(vectors[0]!, v));
}

/** What RAG retrieves for a record: by the original's files, or by plens's embeddings. */
export interface Retriever {
  readonly id: string;
  /** Explicit: `answer` is this run's answer to the preference. */
  explicit(
    task: { topic: string; index: number; preference: string; question: string },
    answer: string,
    interTurns: number,
    filler: readonly ConversationMessage[],
    signal?: AbortSignal,
  ): Promise<string[]>;
  implicit(
    task: { topic: string; form: Form; index: number; question: string; conversation: readonly ConversationMessage[] },
    interTurns: number,
    filler: readonly ConversationMessage[],
    signal?: AbortSignal,
  ): Promise<string[]>;
}

/** The original's precomputed retrievals as a Retriever (`retrieval: original`). */
export function originalRetriever(root: string): Retriever {
  const files = new OriginalRetrievals(root);
  return {
    id: 'original',
    explicit: async (task, answer, interTurns) => {
      const r = files.explicit(task.topic, task.index);
      return topExplicit(r.scores, interTurns, { preference: task.preference, answer, exchange: r.exchange });
    },
    implicit: async (task, interTurns, filler) => {
      if (task.form === 'explicit') throw new RetrievalError('an explicit record has no revealing conversation');
      const r = files.implicit(task.topic, task.form, task.index);
      return topImplicit(r.conversation, r.filler, interTurns, task.conversation, filler);
    },
  };
}

/** plens's embeddings as a Retriever (`retrieval: <embeddings spec>`): the same exchanges, scored by cosine similarity to the question. */
export function embeddingRetriever(embedder: Embedder): Retriever {
  return {
    id: embedder.id,
    explicit: async (task, answer, interTurns, filler, signal) => {
      const taken = filler.slice(0, interTurns * 2);
      const texts = [
        exchangeText({ role: 'user', content: task.preference }),
        exchangeText({ role: 'assistant', content: answer }),
        ...taken.map(exchangeText),
      ];
      const scores = await similarities(embedder, task.question, texts, signal);
      return topExplicit(
        scores.map((s, i) => [i, s] as const),
        interTurns,
        { preference: task.preference, answer, exchange: (i) => exchangeText(filler[i - 2]!) },
      );
    },
    implicit: async (task, interTurns, filler, signal) => {
      const taken = filler.slice(0, interTurns * 2);
      const scores = await similarities(embedder, task.question, [...task.conversation.map(exchangeText), ...taken.map(exchangeText)], signal);
      return topImplicit(scores.slice(0, task.conversation.length), scores.slice(task.conversation.length), interTurns, task.conversation, filler);
    },
  };
}
