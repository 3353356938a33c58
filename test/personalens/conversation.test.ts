import { describe, expect, it } from 'vitest';
import { renderConversation, stripTerminate } from '../../src/personalens/conversation.js';

describe('stripTerminate', () => {
  it.each([
    ['Perfect, thanks! TERMINATE', 'Perfect, thanks!'],
    ['Perfect, thanks!\nTERMINATE', 'Perfect, thanks!'],
    ['Perfect, thanks! TERMINATE.', 'Perfect, thanks!'],
    ['TERMINATE', ''],
    ['Great. TERMINATE Thanks', 'Great. Thanks'],
    ['Thanks! **TERMINATE**', 'Thanks!'],
    ['**TERMINATE**', ''],
    ['Done. `TERMINATE`.', 'Done.'],
    ['Bye [TERMINATE]', 'Bye'],
    ['"TERMINATE"', ''],
  ])('%j -> %j', (input, text) => {
    expect(stripTerminate(input)).toEqual({ text, terminated: true });
  });

  it('leaves other text alone, including words that only contain the marker', () => {
    expect(stripTerminate('Can you book it?')).toEqual({ text: 'Can you book it?', terminated: false });
    expect(stripTerminate('The contract was TERMINATED last year.')).toEqual({ text: 'The contract was TERMINATED last year.', terminated: false });
  });
});

describe('renderConversation', () => {
  it('labels turns the way the agents and the judge read them', () => {
    expect(renderConversation([{ role: 'user', content: 'Hi' }, { role: 'assistant', content: 'Hello!' }])).toBe('[USER]: Hi\n[ASSISTANT]: Hello!');
  });
});
