import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PromptSet } from '../../src/personalens/prompt-set.js';

describe('PromptSet', () => {
  it('renders the bundled assistant turn as plain text, with sections only for what is given', () => {
    const prompts = PromptSet.load();
    const text = prompts.render('assistant-turn', { situation: 'Location: "home" & <garden>', conversation: "[USER]: it's 5 > 3" });
    expect(text).toContain("The user's current situation:\nLocation: \"home\" & <garden>\n");
    expect(text).toContain("Conversation so far:\n[USER]: it's 5 > 3\n");
    expect(text).not.toContain('What you know about the user');
    expect(text).not.toContain('&amp;');
    expect(text.startsWith("The user's current situation:")).toBe(true);
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
    expect(custom.dialogueVersion).toMatch(/^.+\+[0-9a-f]{8}$/);
  });
});
