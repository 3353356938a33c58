import { createHash } from 'node:crypto';

/**
 * The scripted replies of the PersonaLens differential test, on plens's side: the same rules as
 * stubs/plens_replies.py (its docstring says them), so the original and plens get the same reply
 * to the same request.
 */
export type Plan = { intent: string; kind: 'limit' | 'terminate' | 'terminate-only' | 'in-word'; at: number };

const sha = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

/** The dialogue a request belongs to: the opening prompt's hash, carried by every later request in the opening reply. */
export function dialogueTag(system: string, prompt: string): string | undefined {
  if (system.includes('TERMINATE') && !prompt.includes('[ASSISTANT]:')) return sha(prompt).slice(0, 10);
  return /\[d-([0-9a-f]{10})\]/.exec(prompt)?.[1];
}

/**
 * The judge's replies, one chosen per request by its prompt's hash: the gather script's readings at
 * their edges (a verdict in another case, in bold, twice or missing; a score in bold, in lower case,
 * out of range, given twice, with two spaces after the colon). Each names every dimension's score.
 */
export const JUDGE_REPLIES = [
  'EXPLANATION: scripted.\nVERDICT: True\nNaturalness Score: 4\nCoherence Score: 3\nPersonalization Score: 2',
  'EXPLANATION: fine.\nverdict: false\nNaturalness Score: 5\nCoherence Score: 5\nPersonalization Score: 4',
  '**VERDICT:** True\n**Naturalness Score:** 2\n**Coherence Score:** 1\n**Personalization Score:** 3',
  'No verdict here.\nNaturalness Score: 7\nCoherence Score: 0\nPersonalization Score: 9',
  'VERDICT: False, then VERDICT: True.\nnaturalness score: 3\nCoherence Score: 2, later Coherence Score: 4\nPersonalization Score:  3',
  'EXPLANATION: ok\nVERDICT: TRUE\nNaturalness Score: 3\nCoherence Score: 4\nPersonalization Score: 1',
];

export function scriptedReply(plans: Plan[], system: string, prompt: string): string {
  if (system === '') return JUDGE_REPLIES[Number.parseInt(sha(prompt).slice(0, 8), 16) % JUDGE_REPLIES.length]!;
  if (system.includes('TERMINATE')) {
    const turn = prompt.split('[ASSISTANT]:').length - 1;
    if (turn === 0) return `  Hi {there}, I need a hand. [d-${sha(prompt).slice(0, 10)}]\n`;
    const plan = plans.find((p) => prompt.includes(p.intent)) ?? { kind: 'terminate', at: 2 };
    if (plan.kind === 'limit' || turn < plan.at) return `Could you tell me more about choice ${turn}? {ok}`;
    if (plan.kind === 'terminate-only') return 'TERMINATE';
    if (plan.kind === 'in-word') return 'All set, TERMINATEd. Bye';
    return '\x1c Thanks, that is all I need.\u3000TERMINATE \ufeff';
  }
  return `\n  Here are options ${sha(`${system}\u0000${prompt}`).slice(0, 8)}: {a} and b. `;
}
