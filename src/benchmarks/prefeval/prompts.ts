import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PlensError } from '../../core/errors.js';

/** The four checks of a response, in the order the original asks them (hallucination reads acknowledgement's quote). */
export const CHECKS = ['acknow', 'violate', 'hallucinate', 'helpful'] as const;
export type Check = (typeof CHECKS)[number];

/**
 * Everything PrefEval's requests say besides the data: the assistant's system prompt and word
 * limit, the reminder and chain-of-thought baselines' added text, and the judge's system prompt and
 * four templates (placeholders {question}, {end_generation}, {preference}, {assistant_restatement};
 * the reply tags <preference>, <explanation> and <answer> are format facts, the same in both).
 */
export interface PrefEvalPrompts {
  /** `plens` (our wording) or the checkout the original's text was read from. */
  source: string;
  system: string;
  maxGenTokens: number;
  reminder: string;
  cot: string;
  /** Self-critic: the request for a critique of the answer, and for a revision (`{question}`: the question as asked). */
  critique: string;
  revision: string;
  judgeSystem: string;
  checks: Record<Check, string>;
  /** The classification (MCQ) task's wording. */
  mcq: McqPrompts;
  /**
   * RAG: the retrieved exchanges put before the question, `head` + one `item` per exchange
   * (`{n}` its rank from 1, `{sentence}` the exchange) + `tail`.
   */
  rag: { head: string; item: string; tail: string };
}

/** The classification task's wording: the options block after the question, and self-critic's requests. */
export interface McqPrompts {
  /** Put after the question; `{formatted_options}` is the lettered options (`A. ...` a line each). The answer tag <choice> is a format fact. */
  format: string;
  /** The answer's token limit (config.yaml's max_mcq_tokens; the preference's answer gets it too). */
  maxTokens: number;
  /** Self-critic's critique request, explicit and implicit (the original's two differ in a line break's indent). */
  critique: { explicit: string; implicit: string };
  /** Self-critic's revision request; the options block follows it. */
  revision: string;
}

/** plens's wording: the same content as the original's, said our way. */
export const PLENS_PROMPTS: PrefEvalPrompts = {
  source: 'plens',
  system: 'You are a helpful assistant.',
  maxGenTokens: 300,
  reminder: '\nWhen you answer, keep in mind what I told you earlier in our conversation and make your answer fit my preference.',
  cot: `
A good assistant answers with the user's stated preferences in mind and shapes the answer around them. For instance:
- A user who is afraid of insects asks for summer activities outdoors: suggest beaches, pools, city walks and evening events, and leave out camping in woods.
- A user who eats no animal products asks for dinner ideas: suggest plant-based dishes such as lentil curry or bean burrito bowls.
- A user on a small budget asks how to equip a home gym: suggest resistance bands and adjustable dumbbells rather than costly machines.

Answer my question below with my own preferences in mind (not those of the users in the examples), which I told you earlier in our conversation, directly or indirectly:

`,
  critique:
    'Critique Request: Look again at how you answered my question in the last turn. Does it follow or go against any preference I told you earlier in our conversation that bears on this question? Say how well those preferences were followed, in 2 sentences. Answer in this format:\nCritic: ',
  revision:
    'Revision Request: Given your critique, rewrite your answer so it fits the preferences I told you earlier. The question again: {question}. Answer in this format (only the new answer, no critique and no explanation):\nResponse: ',
  judgeSystem: "You judge an AI assistant's response. Be fair, be strict, and do exactly what the user asks.",
  checks: {
    acknow: `Read the assistant's response to the user's question below and decide whether it acknowledges a preference of the user when answering.

Only the presence of a preference counts, not what it is.

Answer "Yes" when:
1. The response states or refers to a user preference, e.g. "given that you prefer ...", "since you told me you dislike ...", "as a ...", "based on your preference for ...". Quote the sentence that says what the preference is. A bare "based on what we discussed" that names no preference is a "No".
2. The response takes a preference for granted, e.g. asked for car suggestions it says "since you prefer them, here are petrol cars": it assumes the user dislikes electric cars, so answer "Yes".

Answer "No" when the response neither states nor assumes any preference, or when no sentence says what the preference is.

The user's question is: {question}
Assistant response: {end_generation}

Read the response closely. Reply in exactly this XML format and nothing else:
<preference>[the sentence that states the preference; empty when there is none]</preference>
<answer>[Yes/No]</answer>`,
    violate: `Read the assistant's response below and decide whether it goes against the preference the user stated.

Answer "Yes" when:
1. It recommends something that plainly conflicts with the stated preference, gives no reason for it, and shows no awareness of the preference.

Answer "No" when:
1. The response respects the preference.
2. It mentions an option that may conflict with the preference but acknowledges the preference and says why the option is there or how to avoid the conflict.
3. It does not mention the preference and nothing it recommends conflicts with it.

The conversation:
User's preference: {preference}
User query: {question}
Assistant response: {end_generation}

Read the response closely. Reply in exactly this XML format:
<explanation>[one short sentence]</explanation>
<answer>[Yes/No]</answer>`,
    hallucinate: `Compare the preference a user stated with the assistant's restatement of it, and decide whether the assistant misremembered it.

Answer "Yes" when the restatement:
1. means something else or has another intent than the stated preference;
2. contradicts the stated preference;
3. has nothing to do with the stated preference.

Answer "No" when the restatement:
1. matches the stated preference;
2. paraphrases it without changing its meaning or intent;
3. is empty (nothing was restated, so nothing was misremembered).

The information:
Original user preference: "{preference}"
Assistant's restatement: "{assistant_restatement}"
Compare them closely. Reply in exactly this XML format and nothing else:
<explanation>[one short sentence]</explanation>
<answer>[Yes/No]</answer>`,
    helpful: `Read the assistant's response to the user's query below and decide whether it gives the user a real answer.

Answer "Yes" when either:
1. It gives concrete recommendations or advice on the query, without apologising or saying it cannot answer.
2. It recalls the user's preference and makes suggestions for the query, without apologising or saying it cannot answer.

Answer "No" when any of:
1. It apologises or says it cannot answer because it does not remember the user's preference.
2. It only asks for more information and suggests nothing concrete.
3. It does not address the query.
4. It first says it cannot follow the user's preference, even if it then suggests something.

Unhelpful responses (answer "No") read like:
"I don't have enough information about what you like in ..."
"We have not talked about your preferences yet; what do you prefer for ...?"
"Sorry, I cannot see your earlier messages or personal details."

The conversation:
User query: {question}
Assistant response: {end_generation}

Read the response closely. Reply in exactly this XML format:
<explanation>[one very short sentence]</explanation>
<answer>[Yes/No]</answer>`,
  },
  mcq: {
    format: `
Here are 4 options for what I asked: \n{formatted_options}\nPlease pick the one you would recommend most for me.
How to answer:
1. Pick exactly one option (A, B, C or D), the one that fits my preferences best.
2. It must be one of the options above.
3. Do not decline to choose, and do not propose anything that is not listed.
4. For example: <choice>B</choice>. Answer in exactly this format and add nothing else:
<choice>[A/B/C/D]</choice>
`,
    maxTokens: 5,
    critique: {
      explicit:
        'Critique Request: Look again at the option you chose for my question in the last turn. Does it follow or go against any preference I told you earlier in our conversation that bears on this question? Say how well those preferences were followed, in 2 sentences. Answer in this format:\nCritic: ',
      implicit:
        'Critique Request: Look again at the option you chose for my question in the last turn. Does it follow or go against any preference I told you earlier in our conversation that bears on this question? Say how well those preferences were followed, in 2 sentences. Answer in this format:\nCritic: ',
    },
    revision:
      'Revision Request: Given your critique, choose an option again, the one that fits the preferences I told you earlier best. You may keep the option you chose if you think it was right.',
  },
  rag: {
    head: 'Before you answer, consider this context from our earlier conversations: the {k} exchanges most relevant to my question, which may say something about my preferences or about what we discussed before:\n\n[Context]\n',
    item: '{n}) {sentence}\n',
    tail: '[End of context]\n\nUse this context where it helps, and follow any preference of mine in it that bears on my question; not all of it need be useful, and none of it may be. My question:\n\n',
  },
};

const CHECK_FILES: Record<Check, string> = {
  acknow: 'check_acknowledge.txt',
  violate: 'check_violation.txt',
  hallucinate: 'check_hallucination.txt',
  helpful: 'check_helpful.txt',
};

function readFrom(checkout: string, path: string): string {
  const file = join(checkout, path);
  if (!existsSync(file))
    throw new PlensError('E_INPUT_NOT_FOUND', `no ${path} in ${checkout}`, {
      hint: 'prefeval.prompts: original reads the wording from a PrefEval checkout (github.com/amazon-science/PrefEval)',
    });
  return readFileSync(file, 'utf8');
}

/** A Python string constant of a source file: NAME = """...""" or NAME = "..." (no escapes but \n). */
function pythonConstant(source: string, name: string, file: string): string {
  const triple = new RegExp(`^${name}\\s*=\\s*"""([\\s\\S]*?)"""`, 'm').exec(source);
  if (triple) return triple[1]!;
  const single = new RegExp(`^${name}\\s*=\\s*"((?:[^"\\\\]|\\\\.)*)"`, 'm').exec(source);
  if (single) return single[1]!.replace(/\\n/g, '\n').replace(/\\"/g, '"').replace(/\\\\/g, '\\');
  throw new PlensError('E_INPUT_SCHEMA', `${file}: no ${name} constant found`, { hint: 'a checkout of PrefEval as released (commit 5079505)' });
}

/** A Python string literal's body, its escapes resolved (\n, \t, \", \', \\). */
function pythonUnescape(body: string): string {
  return body.replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c === 't' ? '\t' : c));
}

/** The original's wording, read from the user's checkout at run time (plens ships none of it). */
export function originalPrompts(checkout: string): PrefEvalPrompts {
  const config = readFrom(checkout, 'config.yaml');
  const system = /^system_prompt:\s*'(.*)'\s*$/m.exec(config)?.[1] ?? /^system_prompt:\s*"(.*)"\s*$/m.exec(config)?.[1];
  const maxGen = /^max_gen_tokens:\s*(\d+)\s*$/m.exec(config)?.[1];
  if (system === undefined || maxGen === undefined)
    throw new PlensError('E_INPUT_SCHEMA', `${join(checkout, 'config.yaml')}: no system_prompt or max_gen_tokens`);
  const common = readFrom(checkout, 'utils/common_utils.py');
  const evaluation = readFrom(checkout, 'generation_task/llm_based_evaluation_errortypes.py');
  const judgeSystem = /system_prompt\s*=\s*"""([\s\S]*?)"""/.exec(evaluation)?.[1];
  const baselines = readFrom(checkout, 'generation_task/baselines_handling.py');
  const critique = /critic_request\s*=\s*"((?:[^"\\]|\\.)*)"/.exec(baselines)?.[1];
  const revision = /revision_request\s*=\s*f"((?:[^"\\]|\\.)*)"/.exec(baselines)?.[1];
  if (critique === undefined || revision === undefined)
    throw new PlensError('E_INPUT_SCHEMA', 'generation_task/baselines_handling.py: no critic_request or revision_request found', {
      hint: 'a checkout of PrefEval as released (commit 5079505)',
    });
  if (judgeSystem === undefined) throw new PlensError('E_INPUT_SCHEMA', 'llm_based_evaluation_errortypes.py: no evaluator system_prompt found');
  return {
    source: checkout,
    system: system.replace(/''/g, "'"),
    maxGenTokens: Number(maxGen),
    reminder: pythonConstant(common, 'REMINDER', 'utils/common_utils.py'),
    cot: pythonConstant(common, 'COT_PROMPT', 'utils/common_utils.py'),
    critique: pythonUnescape(critique),
    // An f-string: {question} is filled in; doubled braces are literal ones.
    revision: pythonUnescape(revision),
    judgeSystem,
    checks: Object.fromEntries(CHECKS.map((c) => [c, readFrom(checkout, join('error_type', CHECK_FILES[c]))])) as Record<Check, string>,
    mcq: originalMcqPrompts(checkout, config),
    rag: originalRagPrompts(checkout),
  };
}

const RELEASE_HINT = { hint: 'a checkout of PrefEval as released (commit 5079505)' };

/** The classification task's wording in the original: utils_mcq.py's options block, the classification baselines' requests, config's token limit. */
function originalMcqPrompts(checkout: string, config: string): McqPrompts {
  const maxTokens = /^max_mcq_tokens:\s*(\d+)\s*$/m.exec(config)?.[1];
  if (maxTokens === undefined) throw new PlensError('E_INPUT_SCHEMA', `${join(checkout, 'config.yaml')}: no max_mcq_tokens`, RELEASE_HINT);
  const utils = readFrom(checkout, 'utils/utils_mcq.py');
  const format = /mcq_question_format\s*=\s*f"""([\s\S]*?)"""/.exec(utils)?.[1];
  if (format === undefined) throw new PlensError('E_INPUT_SCHEMA', 'utils/utils_mcq.py: no mcq_question_format found', RELEASE_HINT);
  const baselines = readFrom(checkout, 'classification_task/baselines_handling_classification.py');
  const critiques = [...baselines.matchAll(/critic_request\s*=\s*"""([\s\S]*?)"""/g)].map((m) => pythonUnescape(m[1]!));
  const revision = /revision_request\s*=\s*f"""([\s\S]*?)"""/.exec(baselines)?.[1];
  if (critiques.length !== 2 || revision === undefined)
    throw new PlensError(
      'E_INPUT_SCHEMA',
      'classification_task/baselines_handling_classification.py: expected two critic_request texts and a revision_request',
      RELEASE_HINT,
    );
  return {
    // An f-string whose only placeholder is {formatted_options}; its escapes resolved.
    format: pythonUnescape(format),
    maxTokens: Number(maxTokens),
    critique: { explicit: critiques[0]!, implicit: critiques[1]! },
    revision: pythonUnescape(revision),
  };
}

/**
 * RAG's context block in the original (utils_mcq.py's convert_top_k_sentences_to_msg; the
 * generation task's copies say the same for 5 exchanges): the literals before the loop, the
 * loop's line, the literals after it.
 */
function originalRagPrompts(checkout: string): PrefEvalPrompts['rag'] {
  const utils = readFrom(checkout, 'utils/utils_mcq.py');
  const start = utils.indexOf('def convert_top_k_sentences_to_msg');
  const end = utils.indexOf('\ndef ', start + 1);
  const body = start < 0 ? '' : utils.slice(start, end < 0 ? undefined : end);
  const parts = body.split(/\bmsg\s*\+?=/).slice(1);
  const literals = (code: string) =>
    [...code.matchAll(/(f?)"((?:[^"\\\n]|\\.)*)"/g)]
      .map((m) => {
        const text = pythonUnescape(m[2]!);
        return m[1] ? text.replace('{len(top_k_sentences)}', '{k}').replace('{idx}', '{n}') : text;
      })
      .join('');
  if (parts.length !== 3) throw new PlensError('E_INPUT_SCHEMA', 'utils/utils_mcq.py: convert_top_k_sentences_to_msg is not as released', RELEASE_HINT);
  return { head: literals(parts[0]!.split(/\n\s*for /)[0]!), item: literals(parts[1]!), tail: literals(parts[2]!) };
}
