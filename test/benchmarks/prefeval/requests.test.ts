import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot, runCli, tempDir } from '../../helpers/cli.js';

// `requests: original` (chat-templates.ts) covers every request of both tasks;
// test/differential/prefeval/model-families.test.ts compares them with the original's (it needs the
// checkout). Here: the option in a pipeline, without one.
describe('prefeval.requests', () => {
  const data = join(repoRoot, 'data', 'prefeval-sample');
  const pipeline = (lines: string[], model = 'bedrock:meta.llama3-8b-instruct-v1:0') => {
    const file = join(tempDir('plens-requests-'), 'p.yaml');
    const head = ['name: t', 'benchmark: prefeval', 'prefeval:', `  data: ${data}`, `  models: ["${model}"]`, '  judge: sim:default'];
    writeFileSync(file, [...head, ...lines, ''].join('\n'));
    return file;
  };

  it('plans every form and baseline of both tasks with no key, and a value outside chat/original is a schema error', async () => {
    const ok = await runCli([
      'make',
      'all',
      '-p',
      pipeline([
        '  requests: original',
        '  tasks: [generation, classification]',
        '  forms: [explicit, choice, persona]',
        '  baselines: [zero-shot, remind, cot, selfcritic]',
        '  limit: 1',
        '  topics: [travel_restaurant]',
        '  inter_turns: [0, 2]',
      ]),
      '--dry-run',
    ]);
    expect(ok.code, ok.stderr).toBe(0);
    const bad = await runCli(['make', 'all', '-p', pipeline(['  requests: llama']), '--dry-run']);
    expect(bad.code).toBe(3);
    expect(bad.stderr).toMatch(/\/prefeval\/requests/);
  });

  it('refuses, in the plan, what the original has no GPT or Gemini request for, and plans what it has', async () => {
    const gpt = 'openai:gpt-4o-mini';
    const common = ['  requests: original', '  limit: 1', '  topics: [travel_restaurant]', '  inter_turns: [2]'];
    const selfcritic = await runCli(['make', 'all', '-p', pipeline([...common, '  baselines: [zero-shot, selfcritic]'], gpt), '--dry-run']);
    expect(selfcritic.code).toBe(2);
    expect(selfcritic.stderr).toMatch(/the original has no GPT request for baseline selfcritic/);
    const implicit = await runCli(['make', 'all', '-p', pipeline([...common, '  forms: [explicit, choice]'], gpt), '--dry-run']);
    expect(implicit.stderr).toMatch(/no GPT request for form choice/);
    const mcq = await runCli(['make', 'all', '-p', pipeline([...common, '  tasks: [classification]'], gpt), '--dry-run']);
    expect(mcq.stderr).toMatch(/no GPT request for the classification task/);
    const ok = await runCli(['make', 'all', '-p', pipeline([...common, '  baselines: [zero-shot, remind, cot]'], gpt), '--dry-run']);
    expect(ok.code, ok.stderr).toBe(0);
    // A Gemini model (its name says so) on the openai provider: no RAG request in the original either.
    const gemini = 'openai:gemini-1.5-pro?base_url=http://127.0.0.1:9/v1beta/openai';
    const rag = await runCli(['make', 'all', '-p', pipeline([...common, '  baselines: [zero-shot, rag]', '  retrieval: original'], gemini), '--dry-run']);
    expect(rag.code).toBe(2);
    expect(rag.stderr).toMatch(/the original has no Gemini request for baseline rag/);
    const gptRag = await runCli(['make', 'all', '-p', pipeline([...common, '  baselines: [rag]', '  retrieval: original'], gpt), '--dry-run']);
    expect(gptRag.code, gptRag.stderr).toBe(0);
    // With the chat requests (the default) the same model runs every baseline.
    const chat = await runCli([
      'make',
      'all',
      '-p',
      pipeline(['  limit: 1', '  topics: [travel_restaurant]', '  inter_turns: [2]', '  baselines: [selfcritic]'], gpt),
      '--dry-run',
    ]);
    expect(chat.code, chat.stderr).toBe(0);
  });
});
