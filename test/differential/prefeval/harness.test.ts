import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  type ImplicitPrefType,
  JUDGE_CHECKS,
  type OriginalPrefEvalRun,
  type PrefEvalTask,
  type PrefForm,
  prefevalOriginalAvailable,
  prefevalOriginalMissing,
  runOriginalPrefEval,
  scriptedGenerationReply,
} from '../../helpers/prefeval-original.js';

/*
 * The PrefEval differential harness itself (test/differential/prefeval/run_original.py): the original
 * generation script, LLM judge and error analysis run unmodified with /usr/bin/python3 and a recording
 * stub Bedrock client, and what they send and compute has the structure read in the original code.
 * Only structure is asserted here (counts, order, settings, where the inputs land); none of the
 * original's prompt text is in this repository, it is read from the checkout at run time.
 *
 * It needs ../shared/prefeval-original and /usr/bin/python3 with bs4 and yaml (CI installs them):
 * without them it is skipped, and says why; in CI a missing piece fails it.
 */
const checkout = prefevalOriginalAvailable();
const missing = prefevalOriginalMissing();
if (!checkout && process.env['CI']) throw new Error(`the PrefEval differential harness test needs the original: ${missing}`);

const REPO_ROOT = join(import.meta.dirname, '..', '..', '..');
const GENERATION_MODEL = 'anthropic.claude-3-haiku-20240307-v1:0';
const JUDGE_MODEL = 'anthropic.claude-3-sonnet-20240229-v1:0';
const WORD_LIMIT = '(Please respond within 300 words.)';

/** The first `n` filler messages: the original concatenates every conversation of filtered_inter_turns.json and cuts. */
function fillerMessages(n: number): Array<{ role: string; content: string }> {
  const turns = JSON.parse(readFileSync(join(checkout!, 'benchmark_dataset', 'filtered_inter_turns.json'), 'utf8')) as Array<{
    conversation: Array<{ role: string; content: string }>;
  }>;
  return turns
    .flatMap((t) => t.conversation)
    .slice(0, n)
    .map(({ role, content }) => ({ role, content }));
}

describe.skipIf(!checkout)(`PrefEval: the original scripts run unmodified and recorded${checkout ? '' : ` (skipped: ${missing})`}`, () => {
  let run: OriginalPrefEvalRun;

  beforeAll(async () => {
    run = await runOriginalPrefEval({
      topic: 'travel_restaurant',
      limit: 2,
      inter_turns: 2,
      task: 'remind',
      replies: {
        // Record 0: acknowledged (an entity BeautifulSoup decodes), violated, hallucinated -> a
        // hallucination of preference violation.
        acknow: { '0': '<preference>no gluten &amp; no wheat</preference><answer>Yes</answer>', '1': 'Answer: Yes' },
        violate: { '0': '<explanation>v</explanation><answer>Yes</answer>' },
        hallucinate: { '0': '<explanation>h</explanation><answer>yes, it does</answer>' },
        // Record 1: an untagged acknow reply parses to '' (not acknowledged); the helpful answer holds
        // "no" inside "nothing", which analyze_errors's substring test counts as unhelpful.
        helpful: { '1': '<explanation>u</explanation><answer>Yes, nothing is missing</answer>' },
      },
    });
  });

  it('generation: per record the preference turn, then the question after the inter turns', () => {
    const reqs = run.generation_requests;
    expect(reqs).toHaveLength(4);
    const system = /^system_prompt:\s*'(.*)'\s*$/m.exec(readFileSync(join(checkout!, 'config.yaml'), 'utf8'))![1];
    const filler = fillerMessages(4);
    expect(filler.map((m) => m.role)).toEqual(['user', 'assistant', 'user', 'assistant']);
    run.results.forEach((record, i) => {
      const [pref, question] = [reqs[2 * i]!, reqs[2 * i + 1]!];
      for (const r of [pref, question]) {
        expect(r.modelId).toBe(GENERATION_MODEL);
        expect(Object.keys(r.body).sort()).toEqual(['anthropic_version', 'max_tokens', 'messages', 'system', 'temperature']);
        expect(r.body).toMatchObject({ anthropic_version: 'bedrock-2023-05-31', max_tokens: 300, temperature: 0, system });
      }
      expect(pref.body.messages).toEqual([{ role: 'user', content: record.preference }]);
      const reply = scriptedGenerationReply(record.preference);
      expect(record.response_to_pref).toBe(reply);
      const msgs = question.body.messages;
      expect(msgs).toHaveLength(2 + 4 + 1);
      expect(msgs.slice(0, 2)).toEqual([
        { role: 'user', content: record.preference },
        { role: 'assistant', content: reply },
      ]);
      expect(msgs.slice(2, 6)).toEqual(filler);
      const last = msgs[6]!;
      expect(last.role).toBe('user');
      // remind: the question, the reminder, then the word limit.
      expect(last.content.startsWith(record.question)).toBe(true);
      expect(last.content.endsWith(' ' + WORD_LIMIT)).toBe(true);
      expect(last.content.length).toBeGreaterThan(record.question.length + WORD_LIMIT.length + 1);
      expect(record.response_to_q).toBe(scriptedGenerationReply(last.content));
    });
  });

  it('judge: four checks per record, in order, one user message each', () => {
    const reqs = run.judge_requests;
    expect(run.judge_checks).toEqual([0, 1].flatMap((task) => JUDGE_CHECKS.map((check) => ({ check, task }))));
    expect(reqs).toHaveLength(8);
    const systems = new Set(reqs.map((r) => r.body.system));
    expect(systems.size).toBe(1);
    expect(systems.has(run.generation_requests[0]!.body.system)).toBe(false);
    for (const r of reqs) {
      expect(r.modelId).toBe(JUDGE_MODEL);
      expect(r.body).toMatchObject({ anthropic_version: 'bedrock-2023-05-31', max_tokens: 100, temperature: 0 });
      expect(r.body.messages).toHaveLength(1);
      expect(r.body.messages[0]!.role).toBe('user');
    }
    run.results.forEach((record, i) => {
      const [acknow, violate, hallucinate, helpful] = reqs.slice(4 * i, 4 * i + 4).map((r) => r.body.messages[0]!.content);
      for (const text of [acknow, violate, helpful]) expect(text).toContain(record.response_to_q);
      for (const text of [acknow, violate, helpful]) expect(text).toContain(record.question);
      for (const text of [violate, hallucinate]) expect(text).toContain(record.preference);
      // The acknow and helpful checks do not see the preference, the hallucinate one no response.
      for (const text of [acknow, helpful]) expect(text).not.toContain(record.preference);
      expect(hallucinate).not.toContain(record.response_to_q);
    });
    // The hallucinate check gets the acknow check's restatement, as BeautifulSoup parsed it.
    expect(reqs[2]!.body.messages[0]!.content).toContain('no gluten & no wheat');
    expect(reqs[2]!.body.messages[0]!.content).not.toContain('&amp;');
  });

  it('results: the judge replies as parsed, and analyze_errors counts them', () => {
    expect(run.results.map((r) => r.evaluation_error_analysis)).toEqual([
      {
        acknow: { answer: 'Yes', extract_pref: 'no gluten & no wheat' },
        violate: { explanation: 'v', answer: 'Yes' },
        hallucinate: { explanation: 'h', answer: 'yes, it does' },
        helpful: { explanation: 'x', answer: 'Yes' },
      },
      {
        acknow: { answer: '', extract_pref: '' },
        violate: { explanation: 'x', answer: 'No' },
        hallucinate: { explanation: 'x', answer: 'No' },
        helpful: { explanation: 'u', answer: 'Yes, nothing is missing' },
      },
    ]);
    expect(run.stats).toEqual({
      acknowledgement: 1,
      hallucination: 1,
      violation: 1,
      error_unhelpful: 1,
      error_inconsistent: 0,
      hallucination_of_preference_violation: 1,
      preference_unaware_violation: 0,
      preference_adherence_accuracy: 0,
    });
    expect(run.total).toBe(2);
    expect(run.accuracy).toBe(0);
  });

  it('the original wrote into the scratch directory, not the checkout', () => {
    const dir = 'benchmark_results/explicit/generation_results/remind/travel_restaurant/';
    expect(run.written).toEqual([dir + 'claude3hk_travel_restaurant_2interturn.json', dir + 'error_claude3hk_travel_restaurant_2interturn.json']);
    expect(existsSync(join(checkout!, 'benchmark_results'))).toBe(false);
    expect(existsSync(join(REPO_ROOT, 'benchmark_results'))).toBe(false);
    expect(existsSync(run.scratch)).toBe(false);
  });

  it('zero-shot without inter turns, default judge replies: three messages, the question with the word limit only, all followed', async () => {
    const plain = await runOriginalPrefEval({ topic: 'travel_restaurant', limit: 1, inter_turns: 0, task: 'zero-shot' });
    const [record] = plain.results;
    expect(plain.generation_requests).toHaveLength(2);
    expect(plain.generation_requests[1]!.body.messages).toEqual([
      { role: 'user', content: record!.preference },
      { role: 'assistant', content: scriptedGenerationReply(record!.preference) },
      { role: 'user', content: `${record!.question} ${WORD_LIMIT}` },
    ]);
    expect(plain.judge_requests).toHaveLength(4);
    expect(plain.stats.preference_adherence_accuracy).toBe(1);
    expect(plain.stats.acknowledgement).toBe(1);
    expect(plain.total).toBe(1);
    expect(plain.accuracy).toBe(100);
  });
});

/** A topic record of the implicit data sets, as benchmark_dataset/implicit_preference/<dir>/<topic>.json has it. */
type ImplicitRecord = { preference: string; question: string; conversation: Record<string, unknown> } & Record<string, unknown>;

const IMPLICIT_DIRS: Record<ImplicitPrefType, string> = { choice: 'choice-based', persona: 'persona-driven' };
/** The keys of a choice-based conversation, in the data's order. */
const CHOICE_KEYS = ['query', 'assistant_options', 'user_selection', 'assistant_acknowledgment'];

function implicitRecords(prefType: ImplicitPrefType, topic: string): ImplicitRecord[] {
  return JSON.parse(
    readFileSync(join(checkout!, 'benchmark_dataset', 'implicit_preference', IMPLICIT_DIRS[prefType], `${topic}.json`), 'utf8'),
  ) as ImplicitRecord[];
}

/**
 * The record's conversation as the original's extract_implicit_messages turns it into Claude messages
 * (utils/implicit_utils.py), spelled out key by key:
 * - choice-based (extract_conversation_to_messages): the conversation object's keys in the file's
 *   order, query -> user, assistant_options -> assistant, user_selection -> user,
 *   assistant_acknowledgment -> assistant (its rule: "query" and "user_selection" are user turns, every
 *   other key an assistant turn). Four messages; the record's implicit_query, options and aligned_op
 *   are not sent (query holds the same text as implicit_query).
 * - persona-driven (extract_conversation_to_msg_persona): the turns "0", "1", ... in the file's order,
 *   and in each its keys in order: user -> user, assistant -> assistant (its rule: "user" is a user
 *   turn, any other key an assistant one). Two messages a turn; it asserts that the count is twice the
 *   last turn key plus one. The persona is not sent.
 * The key orders this spells out are asserted against the data before the mapping is used (Python keeps
 * the file's key order; JSON.parse would put integer-like keys in ascending order, but every
 * persona-driven file has its turns in that order already).
 */
function implicitConversationMessages(prefType: ImplicitPrefType, record: ImplicitRecord): Array<{ role: string; content: string }> {
  const conversation = record.conversation;
  if (prefType === 'choice') {
    expect(Object.keys(conversation)).toEqual(CHOICE_KEYS);
    const c = conversation as Record<string, string>;
    return [
      { role: 'user', content: c['query']! },
      { role: 'assistant', content: c['assistant_options']! },
      { role: 'user', content: c['user_selection']! },
      { role: 'assistant', content: c['assistant_acknowledgment']! },
    ];
  }
  const turns = conversation as Record<string, { user: string; assistant: string }>;
  expect(Object.keys(turns)).toEqual(Object.keys(turns).map((_, i) => String(i)));
  return Object.values(turns).flatMap((turn) => {
    expect(Object.keys(turn)).toEqual(['user', 'assistant']);
    return [
      { role: 'user', content: turn.user },
      { role: 'assistant', content: turn.assistant },
    ];
  });
}

const IMPLICIT_CASES: Array<[ImplicitPrefType, PrefEvalTask]> = [
  ['choice', 'zero-shot'],
  ['choice', 'remind'],
  ['persona', 'zero-shot'],
  ['persona', 'remind'],
];

describe.skipIf(!checkout).each(IMPLICIT_CASES)('PrefEval: the original on implicit preferences (--pref_type %s), %s, recorded', (prefType, task) => {
  const TOPIC = 'travel_restaurant';
  const LIMIT = 2;
  const TURNS = 2;
  let run: OriginalPrefEvalRun;
  let records: ImplicitRecord[];

  beforeAll(async () => {
    records = implicitRecords(prefType, TOPIC).slice(0, LIMIT);
    run = await runOriginalPrefEval({
      topic: TOPIC,
      limit: LIMIT,
      inter_turns: TURNS,
      task,
      pref_form: 'implicit',
      pref_type: prefType,
      replies: {
        // Record 0: an untagged acknow reply (not acknowledged) and a violation -> a preference-unaware
        // violation. Record 1: the default replies, followed.
        acknow: { '0': 'Answer: No' },
        violate: { '0': '<explanation>v</explanation><answer>Yes</answer>' },
      },
    });
  });

  it('generation: one request per record, its conversation, the filler, then the question', () => {
    const reqs = run.generation_requests;
    expect(reqs).toHaveLength(LIMIT);
    const system = /^system_prompt:\s*'(.*)'\s*$/m.exec(readFileSync(join(checkout!, 'config.yaml'), 'utf8'))![1];
    const filler = fillerMessages(2 * TURNS);
    const suffixes = new Set<string>();
    records.forEach((record, i) => {
      const r = reqs[i]!;
      expect(r.modelId).toBe(GENERATION_MODEL);
      expect(Object.keys(r.body).sort()).toEqual(['anthropic_version', 'max_tokens', 'messages', 'system', 'temperature']);
      expect(r.body).toMatchObject({ anthropic_version: 'bedrock-2023-05-31', max_tokens: 300, temperature: 0, system });
      const conversation = implicitConversationMessages(prefType, record);
      expect(conversation.length).toBe(prefType === 'choice' ? 4 : 2 * Object.keys(record.conversation).length);
      const msgs = r.body.messages;
      expect(msgs).toHaveLength(conversation.length + 2 * TURNS + 1);
      expect(msgs.slice(0, conversation.length)).toEqual(conversation);
      expect(msgs.slice(conversation.length, -1)).toEqual(filler);
      const last = msgs.at(-1)!;
      expect(last.role).toBe('user');
      if (task === 'zero-shot') {
        expect(last.content).toBe(`${record.question} ${WORD_LIMIT}`);
      } else {
        // remind: the question, the reminder, then the word limit.
        expect(last.content.startsWith(record.question)).toBe(true);
        expect(last.content.endsWith(' ' + WORD_LIMIT)).toBe(true);
        expect(last.content.length).toBeGreaterThan(record.question.length + WORD_LIMIT.length + 1);
        suffixes.add(last.content.slice(record.question.length));
      }
      expect(run.results[i]!.response_to_q).toBe(scriptedGenerationReply(last.content));
    });
    // The reminder does not depend on the record.
    if (task === 'remind') expect(suffixes.size).toBe(1);
  });

  it('results: the data set record, every key in its order, with the reply and the judgement added (no response_to_pref)', () => {
    expect(run.results).toHaveLength(LIMIT);
    run.results.forEach((result, i) => {
      const record = records[i]!;
      expect(Object.keys(result)).toEqual([...Object.keys(record), 'response_to_q', 'evaluation_error_analysis']);
      const { response_to_q: _reply, evaluation_error_analysis: _judged, ...rest } = result;
      expect(rest).toEqual(record);
      expect(result.response_to_pref).toBeUndefined();
    });
  });

  it("judge: four checks per record, on the record's preference field, never its conversation", () => {
    const reqs = run.judge_requests;
    expect(reqs).toHaveLength(4 * LIMIT);
    expect(run.judge_checks).toEqual([0, 1].flatMap((t) => JUDGE_CHECKS.map((check) => ({ check, task: t }))));
    for (const r of reqs) {
      expect(r.modelId).toBe(JUDGE_MODEL);
      expect(r.body).toMatchObject({ anthropic_version: 'bedrock-2023-05-31', max_tokens: 100, temperature: 0 });
      expect(r.body.messages).toHaveLength(1);
      expect(r.body.messages[0]!.role).toBe('user');
    }
    records.forEach((record, i) => {
      const result = run.results[i]!;
      const [acknow, violate, hallucinate, helpful] = reqs.slice(4 * i, 4 * i + 4).map((r) => r.body.messages[0]!.content);
      for (const text of [acknow, violate, helpful]) expect(text).toContain(record.question);
      for (const text of [acknow, violate, helpful]) expect(text).toContain(result.response_to_q);
      for (const text of [violate, hallucinate]) expect(text).toContain(record.preference);
      for (const text of [acknow, helpful]) expect(text).not.toContain(record.preference);
      expect(hallucinate).not.toContain(result.response_to_q);
      const opening = implicitConversationMessages(prefType, record)[0]!.content;
      for (const text of [acknow, violate, hallucinate, helpful]) expect(text).not.toContain(opening);
    });
  });

  it('analyze_errors: the scripted judgements counted, the implicit setup printed', () => {
    expect(run.results.map((r) => r.evaluation_error_analysis)).toEqual([
      {
        acknow: { answer: '', extract_pref: '' },
        violate: { explanation: 'v', answer: 'Yes' },
        hallucinate: { explanation: 'x', answer: 'No' },
        helpful: { explanation: 'x', answer: 'Yes' },
      },
      {
        acknow: { answer: 'Yes', extract_pref: 'p' },
        violate: { explanation: 'x', answer: 'No' },
        hallucinate: { explanation: 'x', answer: 'No' },
        helpful: { explanation: 'x', answer: 'Yes' },
      },
    ]);
    expect(run.stats).toEqual({
      acknowledgement: 1,
      hallucination: 0,
      violation: 1,
      error_unhelpful: 0,
      error_inconsistent: 0,
      hallucination_of_preference_violation: 0,
      preference_unaware_violation: 1,
      preference_adherence_accuracy: 1,
    });
    expect(run.total).toBe(2);
    expect(run.accuracy).toBe(50);
    expect(run.report).toContain(`Preference Type: ${prefType}`);
    expect(run.report).toContain('Preference Form: implicit');
  });

  it('the original wrote under benchmark_results/implicit/<pref_type> in the scratch directory only', () => {
    const dir = `benchmark_results/implicit/${prefType}/generation_results/${task}/${TOPIC}/`;
    expect(run.written).toEqual([dir + `claude3hk_${TOPIC}_2interturn.json`, dir + `error_claude3hk_${TOPIC}_2interturn.json`]);
    expect(existsSync(join(checkout!, 'benchmark_results'))).toBe(false);
    expect(existsSync(join(REPO_ROOT, 'benchmark_results'))).toBe(false);
    expect(existsSync(run.scratch)).toBe(false);
  });
});

/** A topic record of the explicit data set, as benchmark_dataset/explicit_preference/<topic>.json has it. */
type ExplicitRecord = { preference: string; question: string } & Record<string, unknown>;

function explicitRecords(topic: string): ExplicitRecord[] {
  return JSON.parse(readFileSync(join(checkout!, 'benchmark_dataset', 'explicit_preference', `${topic}.json`), 'utf8')) as ExplicitRecord[];
}

/*
 * --task selfcritic (generation_task/baselines_handling.py, handle_selfcritic_task and
 * handle_selfcritic_task_implicit; each of the three scripts accepts it): per record, after the
 * explicit form's preference turn, three calls on one growing conversation: the question as zero-shot
 * asks it, then a critique request, then a revision request. The critique and revision turns repeat the
 * question without the word limit. Only short labels of the two requests are asserted here; their text
 * is read from the recorded requests.
 */
const SELFCRITIC_FORMS: PrefForm[] = ['explicit', 'implicit'];

describe.skipIf(!checkout).each(SELFCRITIC_FORMS)(
  'PrefEval: the original selfcritic baseline, %s preferences (implicit: choice-based), recorded',
  (prefForm) => {
    const TOPIC = 'travel_restaurant';
    const LIMIT = 2;
    const TURNS = 2;
    const explicit = prefForm === 'explicit';
    /** Generation calls per record: [preference turn,] zero-shot question, critique, revision. */
    const CALLS = explicit ? 4 : 3;
    let run: OriginalPrefEvalRun;
    let records: Array<ExplicitRecord | ImplicitRecord>;

    beforeAll(async () => {
      records = (explicit ? explicitRecords(TOPIC) : implicitRecords('choice', TOPIC)).slice(0, LIMIT);
      run = await runOriginalPrefEval({
        topic: TOPIC,
        limit: LIMIT,
        inter_turns: TURNS,
        task: 'selfcritic',
        pref_form: prefForm,
        ...(explicit ? {} : { pref_type: 'choice' as const }),
        // Record 1: acknowledged (the default), violated, no hallucination -> an inconsistent response.
        replies: { violate: { '1': '<explanation>v</explanation><answer>Yes</answer>' } },
      });
    });

    it('generation: per record [the preference turn,] the zero-shot question, the critique request, the revision request', () => {
      const reqs = run.generation_requests;
      expect(reqs).toHaveLength(CALLS * LIMIT);
      const system = /^system_prompt:\s*'(.*)'\s*$/m.exec(readFileSync(join(checkout!, 'config.yaml'), 'utf8'))![1];
      const filler = fillerMessages(2 * TURNS);
      const critiqueRequests = new Set<string>();
      const revisionFrames = new Set<string>();
      records.forEach((record, i) => {
        const calls = reqs.slice(CALLS * i, CALLS * (i + 1));
        for (const r of calls) {
          expect(r.modelId).toBe(GENERATION_MODEL);
          expect(Object.keys(r.body).sort()).toEqual(['anthropic_version', 'max_tokens', 'messages', 'system', 'temperature']);
          expect(r.body).toMatchObject({ anthropic_version: 'bedrock-2023-05-31', temperature: 0, system });
        }
        // The revision call alone gets 500 (a literal in handle_selfcritic_task*), the others max_gen_tokens.
        expect(calls.map((r) => r.body.max_tokens)).toEqual(explicit ? [300, 300, 300, 500] : [300, 300, 500]);

        let head: Array<{ role: string; content: string }>;
        if (explicit) {
          expect(calls[0]!.body.messages).toEqual([{ role: 'user', content: record.preference }]);
          head = [
            { role: 'user', content: record.preference },
            { role: 'assistant', content: scriptedGenerationReply(record.preference) },
          ];
        } else {
          head = implicitConversationMessages('choice', record as ImplicitRecord);
          expect(head).toHaveLength(4);
        }
        const [zeroShot, critic, revision] = calls.slice(-3).map((r) => r.body.messages);

        // The zero-shot call, as --task zero-shot makes it: the question with the word limit only.
        const asked = `${record.question} ${WORD_LIMIT}`;
        expect(zeroShot).toEqual([...head, ...filler, { role: 'user', content: asked }]);
        const answer = scriptedGenerationReply(asked);

        // The critique call: the same conversation, but the raw question (no word limit), the zero-shot
        // answer as the assistant turn, then the critique request as a new user turn.
        expect(critic).toEqual([
          ...head,
          ...filler,
          { role: 'user', content: record.question },
          { role: 'assistant', content: answer },
          { role: 'user', content: critic!.at(-1)!.content },
        ]);
        const critiqueRequest = critic!.at(-1)!.content;
        expect(critiqueRequest.startsWith('Critique Request:')).toBe(true);
        expect(critiqueRequest.endsWith('\nCritic: ')).toBe(true);
        expect(critiqueRequest).not.toContain(record.question);
        critiqueRequests.add(critiqueRequest);
        const critique = scriptedGenerationReply(critiqueRequest);

        // The revision call: the critique call's messages (nothing else accumulated), its reply, then the
        // revision request with the raw question interpolated once, followed by a full stop.
        expect(revision).toEqual([...critic!, { role: 'assistant', content: critique }, { role: 'user', content: revision!.at(-1)!.content }]);
        expect(revision).toHaveLength(head.length + filler.length + 5);
        const revisionRequest = revision!.at(-1)!.content;
        expect(revisionRequest.startsWith('Revision Request:')).toBe(true);
        expect(revisionRequest.endsWith('\nResponse: ')).toBe(true);
        expect(revisionRequest.split(record.question)).toHaveLength(2);
        expect(revisionRequest).toContain(`${record.question}. `);
        expect(revisionRequest).not.toContain(WORD_LIMIT);
        revisionFrames.add(revisionRequest.replace(record.question, '<question>'));

        const result = run.results[i]!;
        expect(result.zero_shot_response_to_q).toBe(answer);
        expect(result.self_critic).toBe(critique);
        // response_to_q is the revision call's reply, stored as it comes (no "Response:" stripped).
        expect(result.response_to_q).toBe(scriptedGenerationReply(revisionRequest));
        expect(result.response_to_pref).toBe(explicit ? scriptedGenerationReply(record.preference) : undefined);
      });
      // The critique request does not depend on the record, the revision request only through the
      // question; so a stub keyed on the last message gives every record the same critique.
      expect(critiqueRequests.size).toBe(1);
      expect(revisionFrames.size).toBe(1);
      expect(new Set(run.results.map((r) => r.self_critic)).size).toBe(1);
      expect(new Set(run.results.map((r) => r.response_to_q)).size).toBe(LIMIT);
    });

    it('results: the data set record, every key in its order, then the three answers and the judgement', () => {
      expect(run.results).toHaveLength(LIMIT);
      run.results.forEach((result, i) => {
        const record = records[i]!;
        expect(Object.keys(result)).toEqual([
          ...Object.keys(record),
          ...(explicit ? ['response_to_pref'] : []),
          'zero_shot_response_to_q',
          'response_to_q',
          'self_critic',
          'evaluation_error_analysis',
        ]);
        const { response_to_pref: _p, zero_shot_response_to_q: _z, response_to_q: _q, self_critic: _c, evaluation_error_analysis: _e, ...rest } = result;
        expect(rest).toEqual(record);
      });
    });

    it('judge: four checks per record on the revised answer, never the zero-shot answer or the critique', () => {
      const reqs = run.judge_requests;
      expect(reqs).toHaveLength(4 * LIMIT);
      expect(run.judge_checks).toEqual([0, 1].flatMap((task) => JUDGE_CHECKS.map((check) => ({ check, task }))));
      for (const r of reqs) {
        expect(r.modelId).toBe(JUDGE_MODEL);
        expect(r.body).toMatchObject({ anthropic_version: 'bedrock-2023-05-31', max_tokens: 100, temperature: 0 });
        expect(r.body.messages).toHaveLength(1);
        expect(r.body.messages[0]!.role).toBe('user');
      }
      records.forEach((record, i) => {
        const result = run.results[i]!;
        const texts = reqs.slice(4 * i, 4 * i + 4).map((r) => r.body.messages[0]!.content);
        const [acknow, violate, hallucinate, helpful] = texts;
        for (const text of [acknow!, violate!, helpful!]) {
          expect(text).toContain(result.response_to_q);
          expect(text).toContain(record.question);
        }
        for (const text of [violate!, hallucinate!]) expect(text).toContain(record.preference);
        expect(hallucinate).not.toContain(result.response_to_q);
        for (const text of texts) {
          expect(text).not.toContain(result.zero_shot_response_to_q!);
          expect(text).not.toContain(result.self_critic!);
        }
      });
    });

    it('analyze_errors counts the scripted judgements; the files are under generation_results/selfcritic', () => {
      expect(run.results.map((r) => r.evaluation_error_analysis.violate.answer)).toEqual(['No', 'Yes']);
      expect(run.stats).toEqual({
        acknowledgement: 2,
        hallucination: 0,
        violation: 1,
        error_unhelpful: 0,
        error_inconsistent: 1,
        hallucination_of_preference_violation: 0,
        preference_unaware_violation: 0,
        preference_adherence_accuracy: 1,
      });
      expect(run.total).toBe(2);
      expect(run.accuracy).toBe(50);
      expect(run.report).toContain('Task: selfcritic');
      expect(run.report).toContain(`Preference Form: ${prefForm}`);
      const dir = explicit
        ? `benchmark_results/explicit/generation_results/selfcritic/${TOPIC}/`
        : `benchmark_results/implicit/choice/generation_results/selfcritic/${TOPIC}/`;
      expect(run.written).toEqual([dir + `claude3hk_${TOPIC}_2interturn.json`, dir + `error_claude3hk_${TOPIC}_2interturn.json`]);
      expect(existsSync(join(checkout!, 'benchmark_results'))).toBe(false);
      expect(existsSync(run.scratch)).toBe(false);
    });
  },
);
