import { describe, expect, it } from 'vitest';
import { renderAssistantHistory, renderConversation, storedReply, stripTerminate } from '../../../src/benchmarks/personalens/conversation.js';

describe('stripTerminate, as the original does it', () => {
  it.each([
    ['Perfect, thanks! TERMINATE', 'Perfect, thanks!'],
    ['Perfect, thanks!\nTERMINATE', 'Perfect, thanks!'],
    // The marker alone is removed: what was around it stays as it was, only the ends are stripped.
    ['Perfect, thanks! TERMINATE.', 'Perfect, thanks! .'],
    ['Great. TERMINATE Thanks', 'Great.  Thanks'],
    ['Thanks! **TERMINATE**', 'Thanks! ****'],
    ['TERMINATE', ''],
    ['  TERMINATE \n', ''],
    ['TERMINATE TERMINATE', ''],
    // Python's `'TERMINATE' in reply` also matches inside a longer word.
    ['The contract was TERMINATED last year.', 'The contract was D last year.'],
  ])('%j -> %j', (input, text) => {
    expect(stripTerminate(input)).toEqual({ text, terminated: true });
  });

  it('leaves a reply without the marker exactly as it is, lower case included', () => {
    expect(stripTerminate('  Can you book it? ')).toEqual({ text: '  Can you book it? ', terminated: false });
    expect(stripTerminate('please terminate the plan')).toEqual({ text: 'please terminate the plan', terminated: false });
  });
});

describe('history rendering', () => {
  it('labels turns the way the user agent and the judge read them, an empty turn with its trailing space', () => {
    expect(
      renderConversation([
        { role: 'user', content: 'Hi' },
        { role: 'assistant', content: 'Hello!' },
        { role: 'user', content: '' },
      ]),
    ).toBe('[USER]: Hi\n[ASSISTANT]: Hello!\n[USER]: ');
  });

  it('labels turns the way the assistant reads them', () => {
    expect(
      renderAssistantHistory([
        { role: 'user', content: 'Hi' },
        { role: 'assistant', content: 'Hello!' },
        { role: 'user', content: '' },
      ]),
    ).toBe('User: Hi\nAssistant: Hello!\nUser: ');
  });
});

describe('storedReply', () => {
  it('keeps a Claude (xml style) reply as returned and strips only leading whitespace otherwise', () => {
    expect(storedReply('  Sure! \n', 'xml')).toBe('  Sure! \n');
    expect(storedReply('  Sure! \n', 'markdown')).toBe('Sure! \n');
  });
});
