import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startMockLlm, type MockLlmServer, type MockRequest } from '../../../src/testkit/mock-server.js';
import { importOriginal } from '../../../src/benchmarks/personalens/import-original.js';
import { PromptSet } from '../../../src/benchmarks/personalens/prompt-set.js';
import { pythonStringConstants } from '../../../src/benchmarks/personalens/python-literals.js';
import { repoRoot, runCli, runCliJson, sampleDir, tempDir } from '../../helpers/cli.js';
import { sampleWorkspace } from '../../helpers/workspace.js';

const FIXTURE = join(repoRoot, 'test', 'fixtures', 'personalens-original');

let server: MockLlmServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe('Python string constants', () => {
  it('reads every literal form as Python would', () => {
    const src = [
      'import os',
      'A = "x\\ty\\n" \'z\'  # implicit concatenation',
      'B = (',
      '    "one {a}\\\\"',
      '    r"\\n{b}"',
      ')',
      'class P:',
      '    C = """tri',
      'ple \\x41\\u00e9"""',
      '    D: str = A + "!"',
      'E = f"{os.sep}"',
      'F = 3',
    ].join('\n');
    const got = pythonStringConstants(src, 'x.py').map((c) => [c.className, c.name, c.value]);
    // Values computed with /usr/bin/python3 for the same source.
    expect(got).toEqual([
      [null, 'A', 'x\ty\nz'],
      [null, 'B', 'one {a}\\\\n{b}'],
      ['P', 'C', 'tri\nple Aé'],
      ['P', 'D', 'x\ty\nz!'],
    ]);
  });
});

describe('Python string constants: instance attributes and bad escapes', () => {
  it("reads self.NAME in a method as Class.NAME, and skips a method's locals", () => {
    const src = [
      'class T:',
      '    def __init__(self):',
      '        self.system_prompt = """one',
      'two"""',
      '        local = "not a constant"',
      '        self.other = local',
      '    def f(self):',
      '        self.task = "t {x}"',
      'def g():',
      '    self.stray = "outside any class"',
      'Y = "module"',
    ].join('\n');
    expect(pythonStringConstants(src, 'x.py').map((c) => [c.className, c.name, c.value, c.line])).toEqual([
      ['T', 'system_prompt', 'one\ntwo', 3],
      ['T', 'task', 't {x}', 8],
      [null, 'Y', 'module', 11],
    ]);
  });

  it('refuses a \\U escape past U+10FFFF as Python does, naming the file and line', () => {
    const src = 'A = 1\nX = "\\U00110000"\n';
    expect(() => pythonStringConstants(src, '/src/p.py')).toThrow(/past U\+10FFFF/);
    let error: unknown;
    try {
      pythonStringConstants(src, '/src/p.py');
    } catch (e) {
      error = e;
    }
    expect(error).toMatchObject({ code: 'E_INPUT_SCHEMA', location: { file: '/src/p.py', line: 2 } });
  });
});

describe('plens prompts import-original', () => {
  it('imports the fixture into a prompt set that renders exactly as str.format does', () => {
    const out = join(tempDir('plens-orig-'), 'set');
    const summary = importOriginal({ source: FIXTURE, out });
    expect(summary.templates).toHaveLength(29);
    expect(summary.skipped).toContain('util/evaluation_prompts.py:FIRST_TURN_EXPLICIT_PREFERENCE_PROMPT');
    const prompts = PromptSet.load(out);
    const view = { demographics: 'D{1}', preferences: 'P', interactions: 'I', situation: 'S', intent: 'T', conversation: '[USER]: hi ', goal: 'G' };
    // INITIAL_QUERY_PROMPT.format(...) in Python: {{short}} becomes {short}, \t a tab, no trimming.
    expect(prompts.render(prompts.userTemplate('user-first-turn', 'SD'), view)).toBe(
      'PROFILE\nD{1}\nLIKES\nP\nPAST\nI\nNOW\nS\nTASK\nT\nWrite a {short} first query.\tGo:',
    );
    // The raw string keeps "\n" as two characters and its trailing newline.
    expect(prompts.render(prompts.userTemplate('user-turn', 'MD'), view)).toBe(
      'PROFILE\nD{1}\nLIKES BY DOMAIN\nP\nTASK\nT\nPAST\nI\nNOW\nS\nHISTORY\n[USER]: hi \nReply; add TERMINATE when done. Keep \\n literal.\n',
    );
    // A system prompt is sent as written: its braces are not format fields.
    expect(prompts.render(prompts.assistantSystemTemplate('base+d', 'xml'), {})).toBe(
      'Be a kind assistant who can book things.\nPrinciples: {short answers}? No: braces in a system prompt are sent as written.',
    );
    expect(prompts.render(prompts.assistantTurnTemplate('base+s', 'markdown'), { situation: 'S', conversation: 'User: hi' })).toBe(
      '### Now\nS\n### History\nUser: hi\n### Do\nAnswer.',
    );
    expect(prompts.render(prompts.judgeTemplate('judge-coherence', 'user'), view)).toBe(
      'How coherent is the user?\n[USER]: hi \n<response>\nCoherence Score: [1-5]\n</response>',
    );
    // The chain-of-turn prompt builds on the personalization one (B = A + "..." in the source).
    expect(prompts.render('judge-personalization-chain', view)).toContain('Rate personalization 1-4 {strictly}.\nDEMO:\nD{1}\n');
    // The set is complete on its own: nothing falls back to plens's bundled prompts.
    expect(Object.values(prompts.sources).every((f) => f.startsWith(out))).toBe(true);
  });

  it('names the file and the constant when a prompt is missing or changed, and takes a mapping', () => {
    const broken = join(tempDir('plens-orig-broken-'), 'repo');
    cpSync(FIXTURE, broken, { recursive: true });
    const file = join(broken, 'util', 'evaluation_prompts.py');
    writeFileSync(
      file,
      readFileSync(file, 'utf8').replace('{conversation}\nGOAL:\n{goal}', '{conversation}\nAIM:\n{aim_text}').replace('NATURALNESS_USER_PROMPT', 'NAT_U'),
    );
    const out = join(tempDir('plens-orig-out-'), 'set');
    expect(() => importOriginal({ source: broken, out })).toThrow(/no constant found for the judge-task-completion prompt in util\/evaluation_prompts.py/);
    const mapFile = join(broken, 'map.json');
    writeFileSync(mapFile, JSON.stringify({ templates: { 'judge-task-completion': 'TASK_COMPLETION_PROMPT' } }));
    expect(() => importOriginal({ source: broken, out, mapping: mapFile })).toThrow(
      /TASK_COMPLETION_PROMPT \(judge-task-completion\) has placeholder \{aim_text\}, which plens does not know/,
    );
    writeFileSync(mapFile, JSON.stringify({ templates: { 'judge-task-completion': 'TASK_COMPLETION_PROMPT' }, placeholders: { aim_text: 'goal' } }));
    expect(() => importOriginal({ source: broken, out, mapping: mapFile })).toThrow(/no constant found for the judge-naturalness.user prompt/);
    writeFileSync(
      mapFile,
      JSON.stringify({
        templates: { 'judge-task-completion': 'TASK_COMPLETION_PROMPT', 'judge-naturalness.user': 'NAT_U' },
        placeholders: { aim_text: 'goal' },
      }),
    );
    expect(importOriginal({ source: broken, out, mapping: mapFile }).templates).toHaveLength(29);
  });

  it('runs dialogues and the judge with the imported set, sending what the original would', async () => {
    const out = join(tempDir('plens-orig-cli-'), 'set');
    const dry = await runCliJson<{ templates: unknown[]; dry_run: boolean }>(['prompts', 'import-original', FIXTURE, '--out', out, '--dry-run']);
    expect(dry.json.templates).toHaveLength(29);
    expect(dry.json.dry_run).toBe(true);
    expect(existsSync(out)).toBe(false);
    const imported = await runCli(['prompts', 'import-original', FIXTURE, '--out', out]);
    expect(imported.code, imported.stderr).toBe(0);
    server = await startMockLlm({ keepRequests: true });
    const ws = await sampleWorkspace(['--users', '0', '--kind', 'md', '--random', '1']);
    const base = `base_url=${server.url}/v1`;
    const d = await runCliJson(
      ['dialogues', '-w', ws, '--assistant', `openai:claude-mock?${base}`, '--user', `openai:user-mock?${base}`, '--setting', 'base+all', '--prompts', out],
      {},
    );
    expect(d.code, d.stderr).toBe(0);
    const profile = JSON.parse(readFileSync(join(sampleDir, 'profile', 'user0', 'profile.json'), 'utf8'));
    const tasks = JSON.parse(readFileSync(join(sampleDir, 'profile', 'user0', 'tasks_md.json'), 'utf8'));
    const requests: MockRequest[] = server.requests;
    const opening = requests[0]!;
    const task = Object.values(
      tasks as Record<string, { 'User Intent': string; 'Relevant Domains': string[]; situations: Record<string, string>; 'Task Goal': string }>,
    ).find((t) => opening.messages[0]!.content.includes(`TASK\n${t['User Intent']}\n`))!;
    expect(task).toBeDefined();
    // The original's rendering, written out here from the raw profile: "- key: value" lines; MD
    // builds a chunk per domain that starts and ends with a newline ("\nDomain:\n" + lines + "\n",
    // "\n<Domain>\n" + summary + "\n</Domain>\n") and concatenates the chunks as they are.
    const demo = Object.entries(profile.demographics as Record<string, string>)
      .filter(([k]) => k !== 'user_id')
      .map(([k, v]) => `- ${k}: ${v}`)
      .join('\n');
    const prefs = task['Relevant Domains']
      .map(
        (dom) =>
          `\n${dom}:\n` +
          Object.entries(profile.affinities[dom] as Record<string, string | string[]>)
            .map(([k, v]) => `- ${k}: ${Array.isArray(v) ? v.join(', ') : v}`)
            .join('\n') +
          '\n',
      )
      .join('');
    const past = task['Relevant Domains'].map((dom) => `\n<${dom}>\n${profile.interactions[dom]}\n</${dom}>\n`).join('');
    const situation = Object.entries(task.situations)
      .map(([k, v]) => `- ${k}: ${v}`)
      .join('\n');
    const system = readUserSystem();
    expect(opening.system).toBe(system);
    expect(opening.temperature).toBe(0.5);
    expect(opening.maxTokens).toBe(800);
    expect(opening.messages).toEqual([
      {
        role: 'user',
        content: `PROFILE\n${demo}\nLIKES\n${prefs}\nPAST\n${past}\nNOW\n${situation}\nTASK\n${task['User Intent']}\nWrite a {short} first query.\tGo:`,
      },
    ]);
    const first = requests[1]!;
    expect(first.system).toBe('Be a kind assistant who can book things.\nPrinciples: {short answers}? No: braces in a system prompt are sent as written.');
    expect(first.temperature).toBe(0);
    expect(first.maxTokens).toBe(800);
    const openingText = requests.length && (await dialogueMessages(ws))[0]!.content;
    expect(first.messages[0]!.content).toBe(
      `<demo>\n${demo}\n</demo>\n<past>\n${past}\n</past>\n<now>\n${situation}\n</now>\n<history>\nUser: ${openingText}\n</history>\n<do>Answer.</do>`,
    );

    const before = requests.length;
    const j = await runCliJson(['judge', '-w', ws, '--judge', `openai:judge-mock?${base}`, '--dimensions', 'task_completion', '--prompts', out], {});
    expect(j.code, j.stderr).toBe(0);
    const judged = server.requests.slice(before);
    expect(judged).toHaveLength(1);
    const messages = await dialogueMessages(ws);
    const conversation = messages.map((m) => `[${m.role === 'user' ? 'USER' : 'ASSISTANT'}]: ${m.content}`).join('\n');
    expect(judged[0]!.system).toBe('');
    expect(judged[0]!.temperature).toBe(0);
    expect(judged[0]!.maxTokens).toBe(4000);
    expect(judged[0]!.messages).toEqual([
      {
        role: 'user',
        content: `Did the chat meet the goal? Format:\nVERDICT: False\nEXPLANATION: ...\nCHAT:\n${conversation}\nGOAL:\n${task['Task Goal']}\nVERDICT:`,
      },
    ]);
  });
});

function readUserSystem(): string {
  // The fixture's SYSTEM_PROMPT, as Python reads the triple-quoted literal.
  return 'You play a user with several domains. Keep replies short.\nSay TERMINATE when everything is done and you are happy. This line pads the prompt so that it is clearly a prompt and longer than two hundred characters.';
}

async function dialogueMessages(ws: string): Promise<Array<{ role: string; content: string }>> {
  const { Database } = await import('../../../src/db/database.js');
  const db = await Database.open(':memory:');
  try {
    const rows = await db.all<{ messages: Array<{ role: string; content: string }> }>(
      `SELECT messages FROM read_parquet('${ws}/dialogues/*/dialogues.parquet')`,
    );
    return rows[0]!.messages;
  } finally {
    db.close();
  }
}

/*
 * The real checkout (../shared/personalens-original, amazon-science/PersonaLens e755f90): the import
 * finds every prompt, and each template renders exactly what /usr/bin/python3 gets from the
 * original's own constant with str.format (system prompts: the constant as it is). Python reads
 * the constants by importing the original modules (the dialogue scripts with the differential
 * test's stub boto3); nothing of the original is stored here.
 */
const REAL = resolve(repoRoot, '..', 'shared', 'personalens-original');
const STUBS = join(repoRoot, 'test', 'differential', 'personalens', 'stubs');

describe.skipIf(!existsSync(REAL))('plens prompts import-original on the real original code', () => {
  it('imports all 29 templates, says what the original lacks, and renders each as Python does', () => {
    const out = join(tempDir('plens-orig-real-'), 'set');
    const summary = importOriginal({ source: REAL, out });
    expect(summary.templates).toHaveLength(29);
    expect(summary.templates.find((t) => t.template === 'user-system.sd')).toMatchObject({
      constant: 'UserPromptTemplate.system_prompt',
      file: 'src/generate_dialogue.py',
    });
    expect(summary.templates.find((t) => t.template === 'user-turn.md')).toMatchObject({
      constant: 'UserPromptTemplate.task_prompt',
      file: 'src/generate_dialogue_md.py',
    });
    // Llama and Mistral have no Vanilla prompts: the Claude ones stand in, and the import says so.
    expect(summary.lacking.map((l) => l.template)).toEqual(['assistant-system-vanilla.markdown', 'assistant-turn.vanilla.markdown']);
    expect(summary.templates.find((t) => t.template === 'assistant-turn.vanilla.markdown')).toMatchObject({
      constant: 'CLAUDE_TASK_PROMPT_VANILLA',
      substitute_for: 'assistant-turn.vanilla.xml',
    });
    expect(summary.notes).toEqual(['MISTRAL_* (6 constants) are identical to LLAMA_*: the markdown style serves both families exactly']);
    const manifest = JSON.parse(readFileSync(join(out, 'prompt-set.json'), 'utf8')) as { lacking: unknown[]; fallback: boolean };
    expect(manifest.fallback).toBe(false);
    expect(manifest.lacking).toHaveLength(2);

    // Values with braces, backslashes, blank lines and non-ASCII, as a str.format argument would carry them.
    const values: Record<string, string> = {
      demographics: '- age: 25-34 {x}',
      preferences: '\nBooks:\n- Genre: a, b\n',
      interactions: '\n<Books>\nRead \\n "things"\n</Books>\n',
      situation: '- Location: Zürich',
      intent: 'Find {a} book',
      goal: 'A book is found.',
      conversation: '[USER]: hi\n[ASSISTANT]: hello}',
    };
    const script = [
      'import json, sys',
      'sys.path[:0] = [sys.argv[1], sys.argv[2]]',
      'import util.assistant_prompts as a, util.evaluation_prompts as e',
      'import src.generate_dialogue as g, src.generate_dialogue_md as gm',
      'modules = {"util/assistant_prompts.py": a, "util/evaluation_prompts.py": e, "src/generate_dialogue.py": g, "src/generate_dialogue_md.py": gm}',
      'jobs = json.load(sys.stdin)',
      'out = {}',
      'for j in jobs:',
      '    m = modules[j["file"]]',
      '    cls, _, name = j["constant"].rpartition(".")',
      '    text = getattr(getattr(m, cls)(), name) if cls else getattr(m, name)',
      '    out[j["template"]] = text.format(**j["kwargs"]) if j["formatted"] else text',
      'print(json.dumps(out))',
    ].join('\n');
    const prompts = PromptSet.load(out);
    const jobs = summary.templates.map((t) => ({
      template: t.template,
      file: t.file,
      constant: t.constant,
      formatted: Object.keys(t.fields).length > 0,
      kwargs: Object.fromEntries(Object.entries(t.fields).map(([original, canonical]) => [original, values[canonical]])),
    }));
    const python = spawnSync('/usr/bin/python3', ['-c', script, REAL, STUBS], {
      input: JSON.stringify(jobs),
      encoding: 'utf8',
      env: { PATH: '/usr/bin:/bin', PYTHONDONTWRITEBYTECODE: '1', DATA_DIR: tempDir('plens-orig-cache-') },
    });
    expect(python.status, python.stderr).toBe(0);
    const expected = JSON.parse(python.stdout) as Record<string, string>;
    expect(Object.keys(expected)).toHaveLength(29);
    for (const t of summary.templates) {
      const got = prompts.render(t.template, values);
      if (got !== expected[t.template]) expect.fail(`${t.template} (${t.constant}) renders differently from Python's str.format`);
    }
  });

  it("the README's command works as written (relative path, --out) and refuses to overwrite without --force", async () => {
    const dir = tempDir('plens-orig-readme-');
    const r = await runCli(['prompts', 'import-original', REAL, '--out', 'original-prompts'], { cwd: dir });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(
      'the original has no assistant-turn.vanilla.markdown prompt: plens uses assistant-turn.vanilla.xml (CLAUDE_TASK_PROMPT_VANILLA) in its place',
    );
    expect(existsSync(join(dir, 'original-prompts', 'user-turn.md.pyfmt'))).toBe(true);
    const again = await runCli(['prompts', 'import-original', REAL, '--out', 'original-prompts'], { cwd: dir });
    expect(again.code).not.toBe(0);
    expect(again.stderr).toContain('--force');
  });
});
