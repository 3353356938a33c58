import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../../helpers/cli.js';
import {
  ASSISTANTS,
  buildInputs,
  canonical,
  firstDifference,
  GATHER_RUNS,
  importOriginalOutput,
  groupByDialogue,
  ORIGINAL,
  PYTHON,
  RELEASE,
  runOriginal,
  runPlens,
  SETTINGS,
  storedDialogues,
  type Inputs,
  type OriginalRun,
  type PlensRun,
  type SentRequest,
} from './harness.js';
import { JUDGE_REPLIES } from './replies.js';

/*
 * PersonaLens request by request against the original code (issue 28): the original dialogue and
 * judge scripts run unmodified with /usr/bin/python3 and a recording stub boto3; plens runs with
 * the original's prompts imported from the same checkout (`plens prompts import-original`), on
 * the same users and tasks of the released data and the same scripted replies. Every request must
 * be identical: model, system prompt, message text, temperature, max tokens, and the count and
 * order of the requests of each dialogue.
 *
 * Covered: SD and MD tasks; the five settings the original can run; a Claude assistant (XML
 * prompts) and a Llama one (markdown prompts, replies left-stripped), and a Mistral one (its
 * completion prompt through InvokeModel, compared as sent); a dialogue that reaches the
 * round limit, a reply that is only TERMINATE, the marker inside a word, the marker after text
 * with whitespace Python strips and JavaScript does not (and the other way round); all six judge
 * templates on every dialogue; and the gather script (util.gather_evaluation, unmodified) over the
 * judge's files against the warehouse's original_scoring, the judge's replies chosen to reach its
 * reading's edges; and the original's output folder imported with plens import-legacy against the
 * dialogues and judgments plens made.
 *
 * It needs ../shared (the original code and the released data) and /usr/bin/python3; CI has both.
 * Without ../shared (a clone outside the workplace) it is skipped, and says so; in CI a missing
 * piece fails it.
 */
const available = existsSync(ORIGINAL) && existsSync(RELEASE);
if (!available && process.env['CI']) throw new Error(`the differential test needs ${ORIGINAL} and ${RELEASE}`);
if (available && !existsSync(PYTHON))
  throw new Error(`the differential test runs the original with ${PYTHON}, which this machine lacks (apt-get install python3)`);

let inputs: Inputs;
const dialoguesPerCell = () => Object.values(inputs.tasks).reduce((n, t) => n + t.length, 0);
let original: OriginalRun;
let plens: PlensRun;
/** The warehouse of the original's output folder imported with plens import-legacy. */
let legacyDb: string;

describe.skipIf(!available)('PersonaLens: plens sends what the original code sends', () => {
  beforeAll(async () => {
    const dir = tempDir('plens-diff-');
    // Two users of the paper's sample; three SD and two MD tasks each (PLENS_DIFF_USERS, PLENS_DIFF_SD
    // and PLENS_DIFF_MD, comma lists of user indices and task positions, widen it for a longer run).
    const list = (name: string, fallback: number[]) => process.env[name]?.split(',').map(Number) ?? fallback;
    inputs = buildInputs(join(dir, 'original'), list('PLENS_DIFF_USERS', [7, 53]), list('PLENS_DIFF_SD', [0, 11, 23]), list('PLENS_DIFF_MD', [0, 5]));
    original = await runOriginal(inputs);
    plens = await runPlens(inputs, join(dir, 'plens'));
    legacyDb = await importOriginalOutput(inputs, join(dir, 'legacy'));
  }, 600_000);
  afterAll(async () => {
    await plens?.server.close();
  });

  it('the inputs reach every ending the loop has', () => {
    expect(inputs.plans.map((p) => p.kind)).toEqual(['limit', 'terminate-only', 'terminate', 'in-word', 'terminate']);
  });

  for (const assistant of ASSISTANTS) {
    for (const setting of Object.keys(SETTINGS)) {
      it(`dialogues, ${assistant}, ${setting}: every request of every dialogue identical, in order`, () => {
        const ours = groupByDialogue(plens.dialogues.get(`${assistant}/${setting}`)!);
        const theirs = groupByDialogue(original.dialogues.get(`${assistant}/${setting}`)!);
        // Each user runs its selected SD and MD tasks.
        expect(theirs.size).toBe(dialoguesPerCell());
        expect(theirs.has('untagged')).toBe(false);
        expect([...ours.keys()].sort()).toEqual([...theirs.keys()].sort());
        for (const [tag, sent] of theirs) {
          const got = ours.get(tag)!;
          expect(got.length, `dialogue ${tag}: number of requests`).toBe(sent.length);
          sent.forEach((r, i) => {
            const a = canonical(r);
            const b = canonical(got[i]!);
            if (a !== b) expect.fail(`dialogue ${tag}, request ${i + 1} of ${sent.length} differs ${firstDifference(a, b)}`);
          });
        }
      });
    }
  }

  it('dialogues: the round limit is reached (41 requests for SD), and both endings with the marker occur', () => {
    const lengths = [...original.dialogues.values()].flatMap((reqs) => [...groupByDialogue(reqs).values()].map((d) => d.length));
    expect(lengths).toContain(41);
    expect(Math.min(...lengths)).toBe(4);
    // The reply that was only the marker is an empty user message in the history the assistant then sees.
    const all = [...plens.dialogues.values()].flat();
    expect(all.some((r) => /\nUser: \n/.test(r.messages[0]!.content) || r.messages[0]!.content.endsWith('\nUser: '))).toBe(true);
  });

  it("import-legacy of the original's own output folder: every dialogue and judgment plens made itself", async () => {
    const ours = await storedDialogues(plens.db);
    const theirs = await storedDialogues(legacyDb);
    expect(theirs.size).toBe(ASSISTANTS.length * Object.keys(SETTINGS).length * dialoguesPerCell());
    expect([...theirs.keys()].sort()).toEqual([...ours.keys()].sort());
    const wrong: string[] = [];
    for (const [key, t] of theirs) {
      const o = ours.get(key)!;
      const a = JSON.stringify(t.messages);
      const b = JSON.stringify(o.messages);
      if (a !== b) wrong.push(`${key}: messages differ ${firstDifference(a, b)}`);
      if (t.status !== o.status || t.endReason !== o.endReason)
        wrong.push(`${key}: ended ${t.status}/${t.endReason} imported, ${o.status}/${o.endReason} made`);
      const ja = JSON.stringify(Object.entries(t.judgments).sort());
      const jb = JSON.stringify(Object.entries(o.judgments).sort());
      if (ja !== jb) wrong.push(`${key}: judgments ${ja} imported, ${jb} made`);
    }
    expect(wrong.slice(0, 10)).toEqual([]);
  });

  it("the judge's scripted replies are the same list on both sides", () => {
    const r = spawnSync(PYTHON, ['-c', 'import json, plens_replies; print(json.dumps(plens_replies.JUDGE_REPLIES))'], {
      env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin', PYTHONPATH: join(import.meta.dirname, 'stubs'), PYTHONDONTWRITEBYTECODE: '1' },
      encoding: 'utf8',
    });
    expect(r.status, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual(JUDGE_REPLIES);
  });

  it("original_scoring, table3 and table4: every cell's figures are what gather_evaluation.py prints of the same replies", () => {
    // Two assistants x five settings x SD and MD x six dimensions and speakers.
    expect(original.gather.size).toBe(ASSISTANTS.length * Object.keys(SETTINGS).length * 2 * Object.keys(GATHER_RUNS).length);
    const wrong: string[] = [];
    for (const [key, g] of original.gather) {
      const p = plens.scoring.get(key);
      if (!p) {
        wrong.push(`${key}: no row in original_scoring`);
        continue;
      }
      const tc = key.endsWith('/task_completion');
      // The script prints two decimals (a rate in percent); a figure it has no score for is 0.
      const ours = p.mean === null ? 0 : tc ? p.mean * 100 : p.mean;
      const close = (x: number | null | undefined) => x !== null && x !== undefined && Math.abs(g.average - x) <= 0.005 + 1e-9;
      // Task completion: the script's rate is also the one Table 4 (and Table 3, base setting) reports.
      const tables = !tc || (close(p.table4) && (key.split('/')[1] !== 'base' || close(p.table3)));
      const same = g.files === p.replies && close(ours) && tables && (tc || (g.min === (p.min ?? 0) && g.max === (p.max ?? 0)));
      if (!same) wrong.push(`${key}: the script read ${JSON.stringify(g)}, plens ${JSON.stringify(p)}`);
    }
    expect(wrong).toEqual([]);
    // The replies reach the reading's edges: scores it cannot read, and a completion rate strictly between 0 and 1.
    const rows = [...plens.scoring.entries()];
    expect(rows.some(([k, p]) => !k.endsWith('/task_completion') && p.read < p.replies)).toBe(true);
    expect(rows.some(([k, p]) => k.endsWith('/task_completion') && p.mean !== null && p.mean > 0 && p.mean < 1)).toBe(true);
    expect(rows.some(([, p]) => (p.max ?? 0) > 5)).toBe(true);
  });

  for (const dimension of ['task_completion', 'personalization', 'naturalness.user', 'naturalness.assistant', 'coherence.user', 'coherence.assistant']) {
    it(`judge, ${dimension}: the same requests for every dialogue`, () => {
      const theirs = original.judge.get(dimension)!;
      const ours = plens.judge.get(dimension) ?? [];
      // Every dialogue of every cell: two assistants x five settings x ten dialogues.
      expect(theirs.length).toBe(ASSISTANTS.length * Object.keys(SETTINGS).length * dialoguesPerCell());
      expect(ours.length).toBe(theirs.length);
      const key = (r: SentRequest) => canonical(r);
      const want = theirs.map(key).sort();
      const got = ours.map(key).sort();
      for (let i = 0; i < want.length; i++) {
        if (want[i] !== got[i]) {
          const missing = want.find((w) => !got.includes(w));
          const extra = got.find((g) => !want.includes(g));
          expect.fail(`${dimension}: request ${i + 1} of ${want.length} differs; first missing one ${firstDifference(missing ?? '', extra ?? '')}`);
        }
      }
    });
  }
});
