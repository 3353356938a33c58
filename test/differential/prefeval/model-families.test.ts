import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Database } from '../../../src/db/database.js';
import { startMockLlm, type MockLlmServer } from '../../../src/testkit/mock-server.js';
import { tempDir } from '../../helpers/cli.js';
import { isolatedAwsEnv, startMockBedrock, type MockBedrockServer } from '../../helpers/mock-bedrock.js';
import {
  DIFF_TOPIC,
  prefevalOriginalAvailable,
  prefevalOriginalMissing,
  runOriginalPrefEval,
  scriptedGenerationReply,
  scriptedPromptReply,
  makeRagFixture,
  type OriginalMcqRun,
  type PrefEvalTask,
  runOriginalPrefEvalMcq,
  scratchCheckout,
  makeDiffWarehouse,
  writeDiffPipeline,
} from '../../helpers/prefeval-original.js';

/**
 * `requests: original` against the original scripts, run unmodified (harness: run_original.py),
 * for its Llama and Mistral models on Bedrock: every InvokeModel body the model is sent (the prompt
 * text the original lays out by hand, the token limit under each family's name, the temperature),
 * request by request: the explicit preference turn, the question of every form (explicit,
 * choice-based, persona-driven) at zero-shot, remind and cot, and self-critic's three calls, with 0
 * and 2 filler turns; RAG's question with 2 filler turns, on synthetic retrieval files in the
 * original's layout (make_rag_fixture.py). The judge's requests (Claude) carry the answers read from each family's native
 * reply.
 */
const checkout = prefevalOriginalAvailable();
const TOPIC = DIFF_TOPIC;
const LIMIT = 2;
const TASKS: PrefEvalTask[] = ['zero-shot', 'remind', 'cot', 'selfcritic'];
/** The original's forms: explicit, and its implicit --pref_type values (plens's forms choice and persona). */
const FORMS = [{ form: 'explicit' }, { form: 'choice', pref_type: 'choice' }, { form: 'persona', pref_type: 'persona' }] as const;
/** The model's calls a record takes: the explicit preference turn, the answer, and self-critic's critique and revision. */
const callsPer = (explicit: boolean, task: PrefEvalTask) => (explicit ? 1 : 0) + (task === 'selfcritic' ? 3 : 1);
const TURNS = [0, 2];
/** The baselines the original has a GPT request for (besides RAG). */
const GPT_TASKS: PrefEvalTask[] = ['zero-shot', 'remind', 'cot'];
/** RAG takes 5 exchanges: an explicit preference needs 2 filler turns for them. */
const RAG_TURNS = 2;
/** The original's model names and their Bedrock ids (get_model_info). */
const MODELS = [
  { name: 'llama38b', id: 'meta.llama3-8b-instruct-v1:0' },
  { name: 'mistral7b', id: 'mistral.mistral-7b-instruct-v0:2' },
];

type FormSpec = (typeof FORMS)[number];

/**
 * A scratch checkout with synthetic retrieval files (make_rag_fixture.py) for the topic's first
 * records, and what each side runs on it:
 * - `cells`: each baseline at each turn count, and RAG at RAG_TURNS;
 * - `input(model, form, cell)`: the original harness's input for one cell;
 * - `pipelines(name, models, section)`: plens's two pipelines with `requests: original`, the
 *   baselines at TURNS and RAG at RAG_TURNS (a pipeline of its own: explicit RAG needs 2 filler turns).
 */
function scratch(prefix: string, tasks: readonly PrefEvalTask[]) {
  const dir = tempDir(prefix);
  const ragRetrieval = join(makeRagFixture({ out: join(dir, 'fixture'), topic: TOPIC, limit: LIMIT, checkout: checkout! }).rag_dir, 'rag_retrieval');
  const data = scratchCheckout(checkout!, join(dir, 'checkout'), { ragRetrieval });
  const cells = [...tasks.flatMap((task) => TURNS.map((turns) => ({ task, turns }))), { task: 'rag' as const, turns: RAG_TURNS }];
  const input = (model: string, f: FormSpec, cell: { task: PrefEvalTask; turns: number }) => ({
    checkout: data,
    topic: TOPIC,
    limit: LIMIT,
    model,
    rag_dir: ragRetrieval,
    inter_turns: cell.turns,
    task: cell.task,
    ...('pref_type' in f ? { pref_form: 'implicit' as const, pref_type: f.pref_type } : {}),
  });
  const pipeline = (name: string, models: string[], section: string[]) =>
    writeDiffPipeline(dir, name, [
      `data: ${data}`,
      `topics: [${TOPIC}]`,
      `limit: ${LIMIT}`,
      ...section,
      'prompts: original',
      'requests: original',
      `models: [${models.map((m) => `"${m}"`).join(', ')}]`,
    ]);
  const pipelines = (name: string, models: { grid: string[]; rag: string[] }, section: string[]) => [
    pipeline(name, models.grid, [...section, `baselines: [${tasks.join(', ')}]`, `inter_turns: [${TURNS.join(', ')}]`]),
    pipeline(`${name}-rag`, models.rag, [...section, 'baselines: [rag]', `inter_turns: [${RAG_TURNS}]`, 'retrieval: original']),
  ];
  return { dir, cells, input, pipelines };
}

/** The bodies of the original's generation requests, as the comparisons read them. */
const bodies = (requests: Array<{ modelId: string; body: unknown }>): Sent[] =>
  requests.map((q) => ({ model: q.modelId, body: q.body as Record<string, unknown> }));

/** A request body, as either side sent it. */
interface Sent {
  model: string;
  body: Record<string, unknown>;
}
const key = (r: Sent) => JSON.stringify([r.model, Object.entries(r.body).sort(([a], [b]) => a.localeCompare(b))]);

describe.skipIf(!checkout && !process.env['CI'])(
  `PrefEval requests: original against the original's Llama and Mistral requests${checkout ? '' : ` (skipped: ${prefevalOriginalMissing()})`}`,
  () => {
    const originalGeneration: Sent[] = [];
    const originalJudge: string[] = [];
    let server: MockBedrockServer;

    beforeAll(async () => {
      if (!checkout) throw new Error(`PrefEval differential test: ${prefevalOriginalMissing()}`);
      const { cells, input, pipelines } = scratch('plens-prefeval-templates-', TASKS);
      for (const model of MODELS)
        for (const f of FORMS)
          for (const cell of cells) {
            const run = await runOriginalPrefEval(input(model.name, f, cell));
            originalGeneration.push(...bodies(run.generation_requests));
            originalJudge.push(...run.judge_requests.map((q) => JSON.stringify(q.body.messages)));
          }

      const creds = { accessKeyId: 'AKIAPLENSTEMPLATES01', secretAccessKey: 'plensTemplatesSecret/abcdefghijklmnopqrstuv' };
      server = await startMockBedrock({
        credentials: creds,
        // The original's stub answers a generation call with a hash of its prompt (a Llama or Mistral
        // call) or of its last message; the judge's replies do not matter here.
        reply: (r) => (r.invoke ? scriptedPromptReply(r.invoke) : '<preference>p</preference><answer>Yes</answer><explanation>x</explanation>'),
      });
      const specs = MODELS.map((m) => `bedrock:${m.id}?base_url=${server.url}`);
      for (const file of pipelines('prefeval-templates', { grid: specs, rag: specs }, [
        `forms: [${FORMS.map((f) => f.form).join(', ')}]`,
        `judge: "bedrock:claude-3-sonnet-v1?base_url=${server.url}"`,
      ]))
        await makeDiffWarehouse(file, isolatedAwsEnv(creds, 'us-east-1'));
    }, 240_000);
    afterAll(async () => server?.close());

    it("sends each model the original's InvokeModel bodies, request by request (the prompt text byte for byte)", () => {
      const sent = server.requests.filter((r) => r.operation === 'invoke').map((r) => ({ model: r.modelId, body: r.invoke! }) as Sent);
      // The cache off, an explicit record's preference turn is sent in every cell, as the original does.
      const perModel =
        LIMIT *
        FORMS.reduce(
          (n, f) => n + TURNS.length * TASKS.reduce((k, t) => k + callsPer(f.form === 'explicit', t), 0) + callsPer(f.form === 'explicit', 'rag'),
          0,
        );
      expect(originalGeneration).toHaveLength(MODELS.length * perModel);
      expect(sent.map(key).sort()).toEqual(originalGeneration.map(key).sort());
      // Every family's own limit field, and nothing went through Converse for these models.
      expect(new Set(sent.map((r) => Object.keys(r.body).sort().join(',')))).toEqual(
        new Set(['max_gen_len,prompt,temperature', 'max_tokens,prompt,temperature']),
      );
      expect(server.requests.filter((r) => r.operation === 'converse' && MODELS.some((m) => m.id === r.modelId))).toEqual([]);
    });

    it("the judge sees the answers read from each family's native reply, as the original's judge does", () => {
      const judged = server.requests
        .filter((r) => r.operation === 'converse')
        .map((r) => JSON.stringify(r.body.messages.map((m) => ({ role: m.role, content: m.content.map((c) => c.text).join('') }))));
      expect(judged.sort()).toEqual([...originalJudge].sort());
    });
  },
);

/**
 * The classification task the same way (run_original_mcq.py): the preference turn, the question with
 * its options (Mistral's string ends with the answer begun, `<choice>`), self-critic's critique and
 * revised choice, RAG's question; then the letter read from each answer
 * (Llama's reply carries its own `<choice>`, Mistral's and Claude's have it put before them).
 */
describe.skipIf(!checkout && !process.env['CI'])(
  `PrefEval requests: original against the original's Llama and Mistral classification requests${checkout ? '' : ` (skipped: ${prefevalOriginalMissing()})`}`,
  () => {
    const original: Array<{ model: string; form: string; task: string; turns: number; run: OriginalMcqRun }> = [];
    let server: MockBedrockServer;
    let warehouse: string;

    beforeAll(async () => {
      if (!checkout) throw new Error(`PrefEval differential test: ${prefevalOriginalMissing()}`);
      const { dir, cells, input, pipelines } = scratch('plens-prefeval-templates-mcq-', TASKS);
      for (const model of MODELS)
        for (const f of FORMS)
          for (const cell of cells)
            original.push({ model: model.id, form: f.form, task: cell.task, turns: cell.turns, run: await runOriginalPrefEvalMcq(input(model.name, f, cell)) });
      const creds = { accessKeyId: 'AKIAPLENSTEMPLATES02', secretAccessKey: 'plensTemplatesSecret/abcdefghijklmnopqrstuv' };
      server = await startMockBedrock({ credentials: creds, reply: (r) => scriptedPromptReply(r.invoke!) });
      warehouse = join(dir, 'w.duckdb');
      const specs = MODELS.map((m) => `bedrock:${m.id}?base_url=${server.url}`);
      for (const file of pipelines('prefeval-templates-mcq', { grid: specs, rag: specs }, [
        'tasks: [classification]',
        `forms: [${FORMS.map((f) => f.form).join(', ')}]`,
      ]))
        await makeDiffWarehouse(file, isolatedAwsEnv(creds, 'us-east-1'));
    }, 240_000);
    afterAll(async () => server?.close());

    it("sends each model the original's InvokeModel bodies, request by request", () => {
      const want = original.flatMap((o) => bodies(o.run.requests));
      const sent = server.requests.map((r) => ({ model: r.modelId, body: r.invoke! }) as Sent);
      expect(server.requests.every((r) => r.operation === 'invoke')).toBe(true);
      expect(sent.length).toBeGreaterThan(0);
      expect(sent.map(key).sort()).toEqual(want.map(key).sort());
    });

    it('keeps each answer as the original keeps it and reads the same letter from it', async () => {
      const db = await Database.open(warehouse, { readOnly: true });
      try {
        for (const o of original) {
          const rows = await db.all<Record<string, unknown>>(
            `SELECT task_index, response_to_q, choice, correct, first_choice, self_critic FROM prefeval_mcq
               WHERE form = $1 AND baseline = $2 AND inter_turns = $3 AND model LIKE '%' || $4 || '%' ORDER BY task_index`,
            undefined,
            [o.form, o.task, o.turns, o.model],
          );
          const where = `${o.model} ${o.form} ${o.task} ${o.turns}`;
          expect(rows, where).toHaveLength(o.run.results.length);
          o.run.results.forEach((rec, i) =>
            expect(rows[i], where).toMatchObject({
              response_to_q: rec.response_to_q,
              choice: rec.choice,
              correct: rec.correct_idx,
              ...(o.task === 'selfcritic' ? { first_choice: rec.first_choice, self_critic: rec.self_critic } : {}),
            }),
          );
        }
      } finally {
        await db.close();
      }
    });
  },
);

/**
 * A GPT model the same way: the original calls OpenAI's chat completions with only the model and the
 * messages (no temperature, no token limit), with no system message but in RAG's question. A Gemini
 * model (google-genai; plens reaches it on the openai provider through Google's OpenAI-compatible
 * endpoint): the system prompt as its system_instruction, the conversation, no sampling settings.
 * The original's run stops with an error for self-critic, the implicit forms and (Gemini) RAG, and
 * never ends for the classification task, so those are not compared (plens refuses them:
 * test/benchmarks/prefeval/requests.test.ts).
 */
describe.skipIf(!checkout && !process.env['CI'])(
  `PrefEval requests: original against the original's GPT and Gemini requests${checkout ? '' : ` (skipped: ${prefevalOriginalMissing()})`}`,
  () => {
    const original: Sent[] = [];
    const originalGemini: Sent[] = [];
    const originalJudge: string[] = [];
    const sent: Sent[] = [];
    let bedrock: MockBedrockServer;
    let openai: MockLlmServer;
    /** The original's model ids for its gpt4o-mini and gemini2.5-flash (get_model_info), plens's model names here. */
    const GPT = 'gpt-4o-mini';
    const GEMINI = 'gemini-2.5-flash-preview-04-17';

    beforeAll(async () => {
      if (!checkout) throw new Error(`PrefEval differential test: ${prefevalOriginalMissing()}`);
      const { cells, input, pipelines } = scratch('plens-prefeval-gpt-', GPT_TASKS);
      const explicit = FORMS[0];
      for (const cell of cells) {
        const run = await runOriginalPrefEval(input('gpt4o-mini', explicit, cell));
        original.push(...bodies(run.generation_requests));
        originalJudge.push(...run.judge_requests.map((q) => JSON.stringify(q.body.messages)));
      }
      // Gemini: zero-shot, remind and cot only (the original has no Gemini RAG request).
      for (const cell of cells.filter((c) => c.task !== 'rag')) {
        const run = await runOriginalPrefEval(input('gemini2.5-flash', explicit, cell));
        originalGemini.push(...bodies(run.generation_requests));
        originalJudge.push(...run.judge_requests.map((q) => JSON.stringify(q.body.messages)));
      }
      const creds = { accessKeyId: 'AKIAPLENSTEMPLATES03', secretAccessKey: 'plensTemplatesSecret/abcdefghijklmnopqrstuv' };
      bedrock = await startMockBedrock({ credentials: creds, reply: () => '<preference>p</preference><answer>Yes</answer><explanation>x</explanation>' });
      openai = await startMockLlm({
        reply: (r) => scriptedGenerationReply(r.messages.at(-1)?.content ?? ''),
        observeBody: (raw) => {
          const body = JSON.parse(raw.toString('utf8')) as Record<string, unknown>;
          sent.push({ model: String(body['model']), body });
        },
      });
      const spec = (model: string) => `openai:${model}?base_url=${openai.url}/v1`;
      for (const file of pipelines('prefeval-gpt', { grid: [spec(GPT), spec(GEMINI)], rag: [spec(GPT)] }, [
        `judge: "bedrock:claude-3-sonnet-v1?base_url=${bedrock.url}"`,
      ]))
        await makeDiffWarehouse(file, { ...isolatedAwsEnv(creds, 'us-east-1'), OPENAI_API_KEY: 'sk-plens-gpt-test' });
    }, 240_000);
    afterAll(async () => {
      await bedrock?.close();
      await openai?.close();
    });

    it("sends GPT the original's chat completion bodies, request by request: the model and the messages, nothing else", () => {
      // Explicit: the preference turn and the question, a record each.
      expect(original).toHaveLength(LIMIT * 2 * (GPT_TASKS.length * TURNS.length + 1));
      expect(
        sent
          .filter((r) => r.model === GPT)
          .map(key)
          .sort(),
      ).toEqual(original.map(key).sort());
      // The system message only in RAG's question.
      expect(sent.filter((r) => r.model === GPT && (r.body['messages'] as Array<{ role: string }>)[0]!.role === 'system')).toHaveLength(LIMIT);
    });

    it('sends Gemini what the original sends it: the system prompt, the conversation, no sampling settings', () => {
      expect(originalGemini).toHaveLength(LIMIT * 2 * GPT_TASKS.length * TURNS.length);
      // The original's google-genai call, as the chat completion it corresponds to.
      const asGenai = (body: Record<string, unknown>): Sent => {
        const messages = body['messages'] as Array<{ role: string; content: string }>;
        const { messages: _, model, ...rest } = body;
        return {
          model: String(model),
          body: {
            model,
            contents: messages
              .filter((m) => m.role !== 'system')
              .map((m) => ({ role: m.role === 'assistant' ? 'model' : m.role, parts: [{ text: m.content }] })),
            config: { system_instruction: messages.find((m) => m.role === 'system')?.content ?? null },
            ...rest,
          },
        };
      };
      expect(
        sent
          .filter((r) => r.model === GEMINI)
          .map((r) => key(asGenai(r.body)))
          .sort(),
      ).toEqual(originalGemini.map(key).sort());
    });

    it("the judge sees the GPT and Gemini answers as the original's judge does", () => {
      const judged = bedrock.requests.map((r) =>
        JSON.stringify(r.body.messages.map((m) => ({ role: m.role, content: m.content.map((c) => c.text).join('') }))),
      );
      expect(judged.sort()).toEqual([...originalJudge].sort());
    });
  },
);
