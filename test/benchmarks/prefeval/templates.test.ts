import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot, runCli, tempDir } from '../../helpers/cli.js';

// `templates: original` (chat-templates.ts) covers every request of both tasks;
// test/differential/prefeval/templates.test.ts compares them with the original's (it needs the
// checkout). Here: the option in a pipeline, without one.
describe('prefeval.templates', () => {
  const data = join(repoRoot, 'data', 'prefeval-sample');
  const pipeline = (lines: string[]) => {
    const file = join(tempDir('plens-templates-'), 'p.yaml');
    const head = [
      'name: t',
      'benchmark: prefeval',
      'prefeval:',
      `  data: ${data}`,
      '  models: ["bedrock:meta.llama3-8b-instruct-v1:0"]',
      '  judge: sim:default',
    ];
    writeFileSync(file, [...head, ...lines, ''].join('\n'));
    return file;
  };

  it('plans every form and baseline of both tasks with no key, and a value outside chat/original is a schema error', async () => {
    const ok = await runCli([
      'make',
      'all',
      '-p',
      pipeline([
        '  templates: original',
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
    const bad = await runCli(['make', 'all', '-p', pipeline(['  templates: llama']), '--dry-run']);
    expect(bad.code).toBe(3);
    expect(bad.stderr).toMatch(/\/prefeval\/templates/);
  });
});
