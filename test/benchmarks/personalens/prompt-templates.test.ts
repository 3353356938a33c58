import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Workspace } from '../../../src/core/workspace.js';
import { assistantTurnView, renderConversation, userAgentView } from '../../../src/benchmarks/personalens/conversation.js';
import { PROMPT_STYLES, PromptSet } from '../../../src/benchmarks/personalens/prompt-set.js';
import { ScenarioContextSource, type ScenarioContext, type ScenarioRow } from '../../../src/benchmarks/personalens/scenario-context.js';
import { SETTING_NAMES } from '../../../src/benchmarks/personalens/settings.js';
import { sampleWorkspace } from '../../helpers/workspace.js';

/** Each needle occurs, in this order. */
function expectInOrder(text: string, needles: string[]): void {
  let at = 0;
  for (const n of needles) {
    const i = text.indexOf(n, at);
    expect(i, `"${n}" after position ${at} in:\n${text}`).toBeGreaterThanOrEqual(0);
    at = i + n.length;
  }
}

const prompts = PromptSet.load();
const scenarios: Partial<Record<'SD' | 'MD', { scenario: ScenarioRow; context: ScenarioContext }>> = {};
let source: ScenarioContextSource;
const HISTORY = [
  { role: 'user', content: 'Could you set an alarm?' },
  { role: 'assistant', content: 'Sure, for when?' },
  { role: 'user', content: '' },
];

beforeAll(async () => {
  const ws = await sampleWorkspace(['--users', '0']);
  source = await ScenarioContextSource.open(new Workspace(ws));
  for await (const s of source.scenariosWithContext()) if (!scenarios[s.scenario.kind]) scenarios[s.scenario.kind] = s;
});
afterAll(() => source?.close());

describe('scenario context, rendered as the original renders it', () => {
  it('SD: "- key: value" lines with the profile keys; the judge copy adds user_id', () => {
    const { context } = scenarios.SD!;
    expect(context.demographics.split('\n')[0]).toBe('- age: 25-34 years old');
    expect(context.demographics).not.toContain('user_id');
    expect(context.demographicsWithId.split('\n').slice(0, 2)).toEqual(['- user_id: user0', '- age: 25-34 years old']);
    expect(context.situation.split('\n').map((l) => l.split(':')[0])).toEqual([
      '- Location',
      '- Device',
      '- Time of Day',
      '- Day of the Week',
      '- Environment',
    ]);
    for (const line of context.preferences.split('\n')) expect(line).toMatch(/^- [^:]+: /);
    expect(context.interactions).not.toMatch(/^</);
  });

  it('MD: preferences per domain after a blank line and "<Domain>:", summaries in <Domain> tags', () => {
    const { scenario, context } = scenarios.MD!;
    const domains = scenario.relevant_domains;
    expect(context.preferences.startsWith(`\n${domains[0]}:\n- `)).toBe(true);
    for (const d of domains.slice(1)) expect(context.preferences).toContain(`\n\n${d}:\n- `);
    expectInOrder(
      context.interactions,
      domains.flatMap((d) => [`<${d}>\n`, `\n</${d}>`]),
    );
  });
});

describe.each(['SD', 'MD'] as const)('user agent prompts, %s', (kind) => {
  it('system prompt: role, guidelines (subtle preferences, English, TERMINATE), closing reminder', () => {
    const { context } = scenarios[kind]!;
    const text = prompts.render(prompts.userTemplate('user-system', kind), userAgentView(context, ''));
    expectInOrder(text, [
      'realistic user',
      'virtual assistant',
      'Guidelines:',
      'natural',
      'demographics',
      'preferences',
      'past-interaction',
      'current-context',
      'same persona',
      'one to three sentences',
      'indirectly, in the way you talk',
      'English',
      '"TERMINATE"',
      'you are the user who needs help',
    ]);
    expect(text).not.toContain(context.demographics);
  });

  it('opening prompt: profile, past, context, task, instructions, three examples, cue', () => {
    const { context } = scenarios[kind]!;
    const text = prompts.render(prompts.userTemplate('user-first-turn', kind), userAgentView(context, ''));
    expectInOrder(text, [
      '## User Profile',
      context.demographics,
      context.preferences.trim(),
      '## Past Interaction History',
      context.interactions,
      '## Current Context',
      context.situation,
      '## Task Description',
      context.intent,
      '## Instructions',
      'current context',
      'natural',
      'one or two sentences',
      'Do not mention specific preferences',
      'Never include "TERMINATE"',
      'English',
      'this weekend?',
      'lectures',
      'this week?',
      'Opening message:',
    ]);
  });

  it('turn prompt: profile in every turn, task, past, context, [USER]/[ASSISTANT] history, TERMINATE example, English, cue', () => {
    const { context } = scenarios[kind]!;
    const text = prompts.render(prompts.userTemplate('user-turn', kind), userAgentView(context, renderConversation(HISTORY)));
    expectInOrder(text, [
      '## User Profile',
      context.demographics,
      context.preferences.trim(),
      '## Task Description',
      context.intent,
      '## Past Interaction History',
      context.interactions,
      '## Current Context',
      context.situation,
      '## Conversation So Far',
      '[USER]: Could you set an alarm?\n[ASSISTANT]: Sure, for when?\n[USER]: \n',
      '## Instructions',
      'consistent with the user profile',
      'past interactions and the current context',
      'already been said',
      'natural',
      'one to three sentences',
      'fully completed AND the user is satisfied',
      'TERMINATE',
      'anniversary',
      'anything else',
      'TERMINATE"',
      'lovely anniversary',
      'not finished yet',
      'English',
      "User's next message:",
    ]);
  });
});

describe('assistant prompts', () => {
  it('vanilla system prompt is one paragraph; base adds acting directly and five groups of principles, without a top priority', () => {
    const vanilla = prompts.render(prompts.assistantSystemTemplate('vanilla', 'xml'), {});
    expect(vanilla.split('\n')).toHaveLength(1);
    expectInOrder(vanilla, ['natural, engaging and personalized', 'concise', 'friendly']);
    for (const setting of SETTING_NAMES.filter((s) => s !== 'vanilla')) {
      const base = prompts.render(prompts.assistantSystemTemplate(setting, 'markdown'), {});
      expect(base.startsWith(vanilla)).toBe(true);
      expectInOrder(base, [
        'set alarms, make bookings',
        'do not bring up any limitations',
        'Core principles:',
        'Mirror',
        'Conversation:',
        'Refer back',
        'Personalization:',
        'expertise',
        'emotional cues',
        'Interaction:',
        'Sum up',
        'Problem solving:',
        'confirm what the user means',
        'Be open about limitations',
        'pace and the direction',
      ]);
      expect(base).not.toMatch(/top priority/i);
    }
  });

  describe.each(PROMPT_STYLES)('turn prompt, %s style', (style) => {
    const label =
      style === 'xml'
        ? {
            demographics: '<user_demographics>',
            interactions: '<past_interaction_summary>',
            situation: '<current_situation>',
            history: '<conversation_history>',
            guidelines: '<response_guidelines>',
            instruction: '<instruction>',
          }
        : {
            demographics: '#### User Demographics',
            interactions: '#### Past Interaction Summary',
            situation: '#### Current Situation',
            history: '#### Conversation History',
            guidelines: '### Response Guidelines',
            instruction: '### Instruction',
          };
    it.each(['SD', 'MD'] as const)('%s: context blocks per setting, User:/Assistant: history, guidelines, instruction', (kind) => {
      const { context } = scenarios[kind]!;
      for (const setting of SETTING_NAMES) {
        const text = prompts.render(prompts.assistantTurnTemplate(setting, style), assistantTurnView(setting, context, HISTORY));
        const blocks = { demographics: ['base+d', 'base+all'], interactions: ['base+i', 'base+all'], situation: ['base+s', 'base+all'] } as const;
        const present = (Object.keys(blocks) as Array<keyof typeof blocks>).filter((b) => (blocks[b] as readonly string[]).includes(setting));
        expectInOrder(text, [
          ...present.flatMap((b) => [label[b], context[b]]),
          label.history,
          'User: Could you set an alarm?\nAssistant: Sure, for when?\nUser: \n',
        ]);
        for (const b of Object.keys(blocks) as Array<keyof typeof blocks>) if (!present.includes(b)) expect(text, setting).not.toContain(label[b]);
        expect(text).not.toContain(context.preferences.trim().split('\n').at(-1)!);
        if (setting === 'vanilla') {
          expect(text).not.toContain(label.guidelines);
          expectInOrder(text, [label.instruction, 'Using the context above, write your next reply', 'no preamble']);
        } else {
          expectInOrder(text, [
            label.guidelines,
            'current query or task',
            'natural tone',
            'concise, actionable',
            'lengthy detail unless',
            'towards getting the task done',
            "user's pace",
            label.instruction,
          ]);
          // The original's Base turn prompt has an empty instruction section.
          if (setting === 'base') expect(text).not.toContain('write your next reply');
          else expectInOrder(text, [label.instruction, 'context and the response guidelines', 'no preamble']);
        }
      }
    });
  });
});

describe.each(['SD', 'MD'] as const)('judge prompts, %s', (kind) => {
  const conversation = renderConversation(HISTORY);
  it('task completion: role, definitions, format example, absent means False, conversation, goal, VERDICT: cue', () => {
    const { context } = scenarios[kind]!;
    const text = prompts.render(prompts.judgeTemplate('judge-task-completion'), { conversation, goal: context.goal });
    expectInOrder(text, [
      'achieves the goals',
      'GOAL:',
      'CONVERSATION:',
      'USER:',
      'ASSISTANT:',
      'boolean verdict',
      'VERDICT: False\nEXPLANATION: ',
      'does not appear in the conversation',
      'False',
      `CONVERSATION:\n${conversation}`,
      `GOAL:\n${context.goal}`,
    ]);
    expect(text.endsWith('\nVERDICT:')).toBe(true);
  });

  it.each(['judge-personalization', 'judge-personalization-chain'] as const)(
    '%s: task, definitions, criteria, four levels with examples, context, format, guidelines',
    (template) => {
      const { context } = scenarios[kind]!;
      const text = prompts.render(prompts.judgeTemplate(template), {
        demographics: context.demographicsWithId,
        preferences: context.preferences,
        intent: context.intent,
        interactions: context.interactions,
        situation: context.situation,
        conversation,
      });
      expectInOrder(text, [
        'learns from',
        'remembers',
        'proactively',
        'Definitions:',
        'Score:',
        'Demographic profile',
        'Preferences:',
        'Explicit preferences',
        'implicit preferences',
        'User control',
        'Past-interaction summary',
        'Task description',
        'Current situation',
        'Conversation:',
        'Criteria:',
        'Learning from past interactions',
        'Proactive use of preferences',
        'Awareness of the current situation',
        'Keeping the user in control',
        '1 - POOR',
        'like usual',
        'Score: 1',
        'Justification:',
        '2 - BASIC',
        '7 am, like always',
        'Score: 2',
        'Justification:',
        '3 - STRONG',
        'backup alarm',
        'Score: 3',
        'Justification:',
        '4 - EXCEPTIONAL',
        'Rain is forecast',
        'presentation at 9 am',
        'new songs',
        'Score: 4',
        'Justification:',
        `User demographics:\n${context.demographicsWithId}`,
        `User preferences:\n${context.preferences}`,
        `Task description:\n${context.intent}`,
        `Past-interaction summary:\n${context.interactions}`,
        `Current situation:\n${context.situation}`,
        `Conversation:\n${conversation}`,
        '<response>',
        ...(template === 'judge-personalization'
          ? ['Personalization Score: [1-4]', 'Key Observations:', 'Justification:', 'Improvement Suggestions:']
          : ['Turn 1 Personalization Score: [1-4]', 'Turn 2 Personalization Score: [1-4]']),
        '</response>',
        'Additional guidelines:',
        'all of the context',
        'explicit and implicit',
        "user's control",
        'learns and recognises patterns',
        'fits the context',
        '<response></response>',
      ]);
    },
  );

  it.each(['naturalness', 'coherence'] as const)('%s: per speaker, conversation, five anchors, rating and justification in <response>', (dimension) => {
    for (const speaker of ['user', 'assistant'] as const) {
      const text = prompts.render(prompts.judgeTemplate(`judge-${dimension}`, speaker), { conversation, speaker, user: speaker === 'user' });
      const label = dimension === 'naturalness' ? 'Naturalness' : 'Coherence';
      expectInOrder(text, [
        speaker === 'user' ? "user's requests" : "assistant's responses",
        `Conversation:\n${conversation}`,
        'whole numbers',
        ...(dimension === 'naturalness'
          ? ['1 - Highly unnatural', '2 - Significantly unnatural', '3 - Somewhat natural', '4 - Mostly natural', '5 - Fully natural']
          : ['1 - Highly incoherent', '2 - Significantly incoherent', '3 - Somewhat coherent', '4 - Mostly coherent', '5 - Fully coherent']),
        'detailed justification',
        '<response>',
        `${label} Score: [1-5]`,
        'Justification:',
        '</response>',
        'Answer now',
      ]);
    }
  });
});
