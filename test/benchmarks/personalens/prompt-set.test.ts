import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { defaultPromptStyle, parsePromptStyle, PromptSet } from '../../../src/benchmarks/personalens/prompt-set.js';

describe('PromptSet', () => {
  it('renders the bundled assistant turn as plain text, with sections only for what is given', () => {
    const prompts = PromptSet.load();
    const text = prompts.render(prompts.assistantTurnTemplate('base+s', 'xml'), {
      situation: '- Location: "home" & <garden>',
      conversation: "User: it's 5 > 3",
      guidelines: true,
      instruction: true,
    });
    expect(text).toContain('<current_situation>\n- Location: "home" & <garden>\n</current_situation>\n');
    expect(text).toContain("<conversation_history>\nUser: it's 5 > 3\n</conversation_history>\n");
    expect(text).not.toContain('<user_demographics>');
    expect(text).not.toContain('&amp;');
    expect(text.startsWith('<context>\n<current_situation>')).toBe(true);
  });

  it('renders an overriding template and versions each stage by its own templates', () => {
    const dir = mkdtempSync(join(tmpdir(), 'plens-prompts-'));
    writeFileSync(join(dir, 'user-turn.md'), '{{#conversation}}So far: {{conversation}}{{/conversation}}{{^conversation}}Nothing yet{{/conversation}}\n');
    const custom = PromptSet.load(dir);
    const bundled = PromptSet.load();
    expect(custom.render('user-turn', { conversation: 'a <b>' })).toBe('So far: a <b>');
    expect(custom.render('user-turn', {})).toBe('Nothing yet');
    // Rendering twice gives the same text (the parsed template is reused, not consumed).
    expect(custom.render('user-turn', { conversation: 'x' })).toBe('So far: x');
    expect(custom.dialogueVersion).not.toBe(bundled.dialogueVersion);
    expect(custom.judgeVersion).toBe(bundled.judgeVersion);
    expect(custom.dialogueVersion).toMatch(/^personalens-v2\+[0-9a-f]{8}$/);
  });

  it('a Python-format template is filled as str.format does: fields replaced, doubled braces literal, nothing trimmed', () => {
    const dir = mkdtempSync(join(tmpdir(), 'plens-prompts-'));
    writeFileSync(join(dir, 'judge-task-completion.pyfmt'), '  {{"a"}}: {conversation}\n{goal}{goal}\n\n');
    const prompts = PromptSet.load(dir);
    expect(prompts.render('judge-task-completion', { conversation: '{x}', goal: 'G' })).toBe('  {"a"}: {x}\nGG\n\n');
    expect(() => prompts.render('judge-task-completion', { conversation: 'c' })).toThrow(/\{goal\} has no value/);
  });

  it('refuses what str.format would read differently, naming the file and line', () => {
    for (const bad of ['a {0}', 'a {}', 'a {x!r}', 'a {x:>3}', 'a {x.y}', 'a } b', 'a {x']) {
      const dir = mkdtempSync(join(tmpdir(), 'plens-prompts-'));
      writeFileSync(join(dir, 'judge-coherence.pyfmt'), `line one\n${bad}\n`);
      expect(() => PromptSet.load(dir), bad).toThrow(
        expect.objectContaining({ code: 'E_INPUT_SCHEMA', location: expect.objectContaining({ file: join(dir, 'judge-coherence.pyfmt'), line: 2 }) }),
      );
    }
  });

  it('picks the most specific template and, in a complete set, never falls back to the bundled prompts', () => {
    const dir = mkdtempSync(join(tmpdir(), 'plens-prompts-'));
    writeFileSync(join(dir, 'assistant-turn.base+d.markdown.pyfmt'), 'D {demographics}|{conversation}');
    writeFileSync(join(dir, 'assistant-turn.pyfmt'), 'any {conversation}');
    const prompts = PromptSet.load(dir);
    expect(prompts.assistantTurnTemplate('base+d', 'markdown')).toBe('assistant-turn.base+d.markdown');
    expect(prompts.assistantTurnTemplate('base+d', 'xml')).toBe('assistant-turn');
    // Not in the folder: the bundled one.
    expect(prompts.judgeTemplate('judge-naturalness', 'user')).toBe('judge-naturalness');
    writeFileSync(join(dir, 'prompt-set.json'), JSON.stringify({ fallback: false }));
    expect(() => PromptSet.load(dir).judgeTemplate('judge-naturalness', 'user')).toThrow(/no prompt template for judge-naturalness.user/);
    mkdirSync(join(dir, 'x'));
    writeFileSync(join(dir, 'assistant-turn.claude.md'), '');
    expect(() => PromptSet.load(dir)).toThrow(/unknown template file assistant-turn.claude.md/);
  });

  it('chooses the prompt style from the model name as the original does', () => {
    expect(defaultPromptStyle('claude-3-sonnet-20240229')).toBe('xml');
    expect(defaultPromptStyle('anthropic.claude-3-5-sonnet')).toBe('xml');
    expect(defaultPromptStyle('meta-llama/Llama-3-70b')).toBe('markdown');
    expect(defaultPromptStyle('mistral-large')).toBe('markdown');
    expect(parsePromptStyle('Claude')).toBe('xml');
    expect(parsePromptStyle('llama')).toBe('markdown');
    expect(() => parsePromptStyle('html')).toThrow(/use one of xml, markdown/);
  });
});
