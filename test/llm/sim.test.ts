import { describe, expect, it } from 'vitest';
import { SimProvider } from '../../src/llm/sim.js';
import type { SimulationFacts } from '../../src/llm/sim.js';
import type { ChatRequest } from '../../src/llm/types.js';

/**
 * The offline simulator: deterministic (a hash of ids, never Math.random), and its behaviour depends on
 * the setting and the task the way the demo needs to show a comparison.
 */
const sim = new SimProvider();
const signal = new AbortController().signal;
const NONE = { demographics: false, interactions: false, situation: false };
const PLUS_I = { demographics: false, interactions: true, situation: false };
const ALL = { demographics: true, interactions: true, situation: true };

function facts(i: number, extra: Partial<SimulationFacts> = {}): SimulationFacts {
  return {
    scenarioId: `user${i % 7}-SD-Task-${i}`,
    kind: 'SD',
    intent: 'Book a table for two at an Italian place.',
    preferences: ['Cuisine: Italian, Mexican', 'Price: Moderate'],
    ...extra,
  };
}

async function reply(purpose: string, f: SimulationFacts, prompt: string, replicate = 0): Promise<string> {
  const request: ChatRequest = {
    system: 's',
    messages: [{ role: 'user', content: prompt }],
    params: { temperature: 0, maxTokens: 100 },
    purpose,
    promptVersion: 'v',
    replicate,
    simulation: f,
  };
  return (await sim.complete(request, signal)).text;
}

/** The assistant's reply after `turns` assistant turns (the prompt holds that many [ASSISTANT]: lines). */
function promptAfter(turns: number, lastUser = 'Sounds good, what are the options?'): string {
  return `${Array.from({ length: turns }, () => '[USER]: hi\n[ASSISTANT]: ok\n').join('')}[USER]: ${lastUser}`;
}

/** Exchanges the simulated user wants: the first count of assistant turns after which it says TERMINATE. */
async function wantedExchanges(f: SimulationFacts): Promise<number> {
  for (let k = 1; k <= 5; k++) if ((await reply('user', f, '[USER]: hi\n[ASSISTANT]: ok\n'.repeat(k))).includes('TERMINATE')) return k;
  throw new Error('the simulated user never ends');
}

/** The assistant's last reply of a dialogue: the one after wanted - 1 assistant turns. */
async function lastAssistantReply(f: SimulationFacts, replicate = 0): Promise<string> {
  return reply('assistant', f, promptAfter((await wantedExchanges(f)) - 1), replicate);
}

describe('sim:default, the offline simulator', () => {
  it('gives the same reply to the same request, and other replies to other replicates', async () => {
    const f = facts(3, { assistantContext: PLUS_I });
    const a = await reply('assistant', f, promptAfter(1));
    expect(await reply('assistant', f, promptAfter(1))).toBe(a);
    const replicas = new Set(await Promise.all([0, 1, 2, 3, 4, 5].map((r) => reply('assistant', f, promptAfter(1), r))));
    expect(replicas.size).toBeGreaterThan(1);
  });

  it('uses the profile unprompted only with past interactions (+I, +all), more with everything', async () => {
    const uses = async (ctx: typeof NONE) => {
      let n = 0;
      for (let i = 0; i < 200; i++)
        if ((await reply('assistant', facts(i, { assistantContext: ctx }), promptAfter(1))).includes('Based on your past requests')) n++;
      return n / 200;
    };
    const none = await uses(NONE);
    const plusI = await uses(PLUS_I);
    const all = await uses(ALL);
    expect(none).toBe(0);
    // The rules: 55% of turns with +I, 75% with demographics and situation too.
    expect(plusI).toBeGreaterThan(0.45);
    expect(plusI).toBeLessThan(0.65);
    expect(all).toBeGreaterThan(plusI);
    expect(all).toBeLessThan(0.85);
  });

  it('completes fewer multi-domain tasks than single-domain ones', async () => {
    const rate = async (kind: 'SD' | 'MD') => {
      let done = 0;
      for (let i = 0; i < 200; i++) if ((await lastAssistantReply(facts(i, { kind, assistantContext: NONE }))).includes('It is booked and confirmed.')) done++;
      return done / 200;
    };
    const sd = await rate('SD');
    const md = await rate('MD');
    // The rules: 85% SD, 55% MD in the base setting.
    expect(sd).toBeGreaterThan(0.75);
    expect(sd).toBeLessThan(0.95);
    expect(md).toBeGreaterThan(0.4);
    expect(md).toBeLessThan(0.7);
  });

  it('the user ends the dialogue satisfied only when the assistant confirmed it done', async () => {
    const f = facts(1);
    expect([2, 3, 4]).toContain(await wantedExchanges(f));
    // After enough exchanges the user closes; what it says depends on the assistant's last reply.
    const closing = (last: string) =>
      reply('user', f, `[USER]: hi\n[ASSISTANT]: ok\n[USER]: a\n[ASSISTANT]: ok\n[USER]: b\n[ASSISTANT]: ok\n[USER]: c\n[ASSISTANT]: ${last}`);
    expect(await closing('It is booked and confirmed. Anything else?')).toBe('Great, that covers everything I needed, thanks. TERMINATE');
    expect(await closing('I could not complete this for you, sorry: the booking did not go through.')).toBe("Never mind, I'll sort it out myself. TERMINATE");
  });

  it('the judge: TC from the conversation, P from the preferences applied (give or take one), Nat/Coh 1-5', async () => {
    const judge = (dimension: string, conversation: string, assistantText = '', terminated = true) =>
      reply(`judge:${dimension}`, { ...facts(2), judge: { dimension, target: 'assistant', terminated, assistantText, conversation } }, 'judge this');
    expect(await judge('task_completion', '[ASSISTANT]: It is booked and confirmed.')).toMatch(/^VERDICT: True\n/);
    expect(await judge('task_completion', '[ASSISTANT]: It is booked and confirmed.', '', false)).toMatch(/^VERDICT: False\n/);
    expect(await judge('task_completion', '[ASSISTANT]: I could not complete this for you, sorry')).toMatch(/^VERDICT: False\n/);

    const scores: number[] = [];
    for (let i = 0; i < 100; i++) {
      const text = await judge('personalization', `conversation ${i}`, 'I went with Italian and a Moderate price.');
      scores.push(Number(/Personalization Score: (\d)/.exec(text)![1]));
    }
    // Two values applied: 3, moved by one in about two judgments of five.
    expect(new Set(scores)).toEqual(new Set([2, 3, 4]));
    expect(scores.filter((s) => s === 3).length).toBeGreaterThan(45);
    const none = await judge('personalization', 'conversation 0', 'Here are some options.');
    expect(Number(/Personalization Score: (\d)/.exec(none)![1])).toBeLessThanOrEqual(2);

    const nat: number[] = [];
    for (let i = 0; i < 100; i++) nat.push(Number(/Naturalness Score: (\d)/.exec(await judge('naturalness', `c${i}`))![1]));
    expect(new Set(nat)).toEqual(new Set([3, 4, 5]));
    const failed = Number(/Coherence Score: (\d)/.exec(await judge('coherence', 'c1 I could not complete this for you, sorry'))![1]);
    expect(failed).toBeGreaterThanOrEqual(2);
    expect(failed).toBeLessThanOrEqual(4);
    // Every judgment says it is simulated.
    expect(await judge('task_completion', 'x')).toContain('(simulated judge)');
  });
});
