import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot, runCli, tempDir } from '../../helpers/cli.js';

// `templates: original` (chat-templates.ts) covers the generation task;
// test/differential/prefeval/templates.test.ts compares its requests with the original's. The
// classification task with it is refused before a call, at the line that set it.
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

  it('refuses the classification task, at its line', async () => {
    const r = await runCli(['make', 'all', '-p', pipeline(['  templates: original', '  tasks: [generation, classification]']), '--dry-run']);
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(/p\.yaml:7:\d+ \/prefeval\/templates: prefeval\.templates: original covers the generation task, not classification/);
  });

  it('plans every form and baseline of the generation task with no key, and a value outside chat/original is a schema error', async () => {
    const ok = await runCli([
      'make',
      'all',
      '-p',
      pipeline([
        '  templates: original',
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
