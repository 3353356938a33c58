import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCliInProcess, tempDir } from '../../helpers/cli.js';
import { isolatedAwsEnv, startMockBedrock, type MockBedrockServer } from '../../helpers/mock-bedrock.js';
import {
  prefevalOriginalAvailable,
  prefevalOriginalMissing,
  runOriginalPrefEval,
  scriptedGenerationReply,
  type PrefEvalTask,
  writeDiffPipeline,
} from '../../helpers/prefeval-original.js';

/**
 * `templates: original` against the original scripts, run unmodified (harness: run_original.py),
 * for its Llama and Mistral models on Bedrock: every InvokeModel body the model is sent (the prompt
 * text the original lays out by hand, the token limit under each family's name, the temperature),
 * request by request, for the explicit form's preference turn and question at zero-shot, remind
 * and cot, with 0 and 2 filler turns. The judge's requests (Claude) carry the answers read from each
 * family's native reply.
 */
const checkout = prefevalOriginalAvailable();
const TOPIC = 'travel_restaurant';
const LIMIT = 2;
const TASKS: PrefEvalTask[] = ['zero-shot', 'remind', 'cot'];
const TURNS = [0, 2];
/** The original's model names and their Bedrock ids (get_model_info). */
const MODELS = [
  { name: 'llama38b', id: 'meta.llama3-8b-instruct-v1:0' },
  { name: 'mistral7b', id: 'mistral.mistral-7b-instruct-v0:2' },
];

/** An InvokeModel body, as either side sent it. */
interface Sent {
  model: string;
  body: Record<string, unknown>;
}
const key = (r: Sent) => JSON.stringify([r.model, Object.entries(r.body).sort(([a], [b]) => a.localeCompare(b))]);

describe.skipIf(!checkout && !process.env['CI'])(
  `PrefEval templates: original against the original's Llama and Mistral requests${checkout ? '' : ` (skipped: ${prefevalOriginalMissing()})`}`,
  () => {
    const originalGeneration: Sent[] = [];
    const originalJudge: string[] = [];
    let server: MockBedrockServer;

    beforeAll(async () => {
      if (!checkout) throw new Error(`PrefEval differential test: ${prefevalOriginalMissing()}`);
      for (const model of MODELS)
        for (const task of TASKS)
          for (const turns of TURNS) {
            const run = await runOriginalPrefEval({ topic: TOPIC, inter_turns: turns, task, limit: LIMIT, model: model.name });
            originalGeneration.push(...run.generation_requests.map((q) => ({ model: q.modelId, body: q.body as unknown as Record<string, unknown> })));
            originalJudge.push(...run.judge_requests.map((q) => JSON.stringify(q.body.messages)));
          }

      const creds = { accessKeyId: 'AKIAPLENSTEMPLATES01', secretAccessKey: 'plensTemplatesSecret/abcdefghijklmnopqrstuv' };
      server = await startMockBedrock({
        credentials: creds,
        // The original's stub answers a generation call with a hash of its prompt (a Llama or Mistral
        // call) or of its last message; the judge's replies do not matter here.
        reply: (r) => (r.invoke ? scriptedGenerationReply(r.invoke.prompt) : '<preference>p</preference><answer>Yes</answer><explanation>x</explanation>'),
      });
      const file = writeDiffPipeline(tempDir('plens-prefeval-templates-'), 'prefeval-templates', [
        `data: ${checkout}`,
        `topics: [${TOPIC}]`,
        `limit: ${LIMIT}`,
        `baselines: [${TASKS.join(', ')}]`,
        `inter_turns: [${TURNS.join(', ')}]`,
        'prompts: original',
        'templates: original',
        `models: [${MODELS.map((m) => `"bedrock:${m.id}?base_url=${server.url}"`).join(', ')}]`,
        `judge: "bedrock:claude-3-sonnet-v1?base_url=${server.url}"`,
      ]);
      const r = await runCliInProcess(['make', 'warehouse', '-p', file, '--no-progress'], { env: isolatedAwsEnv(creds, 'us-east-1') });
      if (r.code !== 0) throw new Error(`plens make exited ${r.code}:\n${r.stderr.slice(-3000)}${r.stdout.slice(-2000)}`);
    }, 240_000);
    afterAll(async () => server?.close());

    it("sends each model the original's InvokeModel bodies, request by request (the prompt text byte for byte)", () => {
      const sent = server.requests.filter((r) => r.operation === 'invoke').map((r) => ({ model: r.modelId, body: r.invoke! }) as Sent);
      // Explicit: the preference turn and the question, a record each; the cache off, the preference turn is sent in every cell, as the original does.
      expect(originalGeneration).toHaveLength(MODELS.length * TASKS.length * TURNS.length * LIMIT * 2);
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
