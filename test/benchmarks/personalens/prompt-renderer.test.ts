import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PromptSet } from '../../../src/benchmarks/personalens/prompt-set.js';

/**
 * Issue 34: a dialogue's turn prompts are rendered once and the conversation put in its place.
 * Whatever the template, that must be the very text a full render gives, for every value.
 */
const VALUES = [
  '',
  'User: hi',
  '  padded on both sides \n',
  '\n',
  'braces {{demographics}} {conversation} and tags <x> & "quotes"',
  'a marker \u0000conversation\u0000 inside',
  'User: one\nAssistant: two\nUser: three TERMINATE',
];

function check(prompts: PromptSet, name: string, view: Record<string, string | boolean | undefined>): void {
  const fill = prompts.renderer(name, view, 'conversation');
  for (const value of VALUES) expect(fill(value), `${name} with ${JSON.stringify(value)}`).toBe(prompts.render(name, { ...view, conversation: value }));
}

describe('rendering a template once per dialogue', () => {
  it('gives the full render for every bundled turn template and setting view', () => {
    const prompts = PromptSet.load();
    const profile = { demographics: 'Age: 30', preferences: 'likes jazz', interactions: 'booked a table', situation: 'at home', intent: 'book a flight' };
    for (const kind of ['SD', 'MD'] as const) check(prompts, prompts.userTemplate('user-turn', kind), profile);
    for (const style of ['xml', 'markdown'] as const)
      for (const setting of ['vanilla', 'base', 'base+d', 'base+s', 'base+d+s+pi'] as const) {
        const name = prompts.assistantTurnTemplate(setting, style);
        check(prompts, name, {
          demographics: 'Age: 30',
          situation: undefined,
          interactions: '',
          guidelines: setting !== 'vanilla',
          instruction: setting !== 'base',
        });
      }
  });

  it('gives the full render where the slot is a section, a dotted name, in a partial, or a repeated Python field', () => {
    const dir = mkdtempSync(join(tmpdir(), 'plens-renderer-'));
    writeFileSync(
      join(dir, 'user-turn.md'),
      'Head {{intent}}\n{{#conversation}}So far: {{conversation}}{{/conversation}}{{^conversation}}Nothing yet{{/conversation}}\n',
    );
    writeFileSync(join(dir, 'user-first-turn.md'), '{{intent}}: {{conversation.length}} chars, {{{conversation}}}\n');
    writeFileSync(join(dir, 'user-system.md'), 'Start {{> _tail}}\n');
    writeFileSync(join(dir, '_tail.md'), '[{{conversation}}] {{intent}}\n');
    writeFileSync(join(dir, 'judge-task-completion.pyfmt'), '  {conversation} | {goal} | {conversation}  \n');
    writeFileSync(join(dir, 'judge-naturalness.md'), '\n  {{&conversation}} / {{conversation}} / {{{conversation}}}  \n');
    const prompts = PromptSet.load(dir);
    check(prompts, 'user-turn', { intent: 'plan' });
    check(prompts, 'user-first-turn', { intent: 'plan' });
    check(prompts, 'user-system', { intent: 'plan' });
    check(prompts, 'judge-task-completion', { goal: 'a goal' });
    check(prompts, 'judge-naturalness', {});
    // A view that holds the marker itself.
    check(prompts, 'user-turn', { intent: 'a \u0000conversation\u0000 b' });
    check(prompts, 'judge-task-completion', { goal: '\u0000conversation\u0000' });
  });
});
