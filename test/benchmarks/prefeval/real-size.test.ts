import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot, runCliJson } from '../../helpers/cli.js';
import { prefevalOriginalAvailable, prefevalOriginalMissing } from '../../helpers/prefeval-original.js';

/**
 * The shipped PrefEval pipelines priced on the release's own data (../shared/prefeval-original),
 * as a user's `--dry-run` prints them: the README leaderboard's grid and the classification task's
 * run_mcq_task.sh grid. Nothing is called.
 */
const checkout = prefevalOriginalAvailable();

interface Plan {
  steps: Array<{ step: string; work: number; estimate?: { calls: number; inputTokens: number } }>;
}

describe.skipIf(!checkout && !process.env['CI'])(
  `the shipped PrefEval pipelines at the release's size${checkout ? '' : ` (skipped: ${prefevalOriginalMissing()})`}`,
  () => {
    const dry = async (name: string) => {
      if (!checkout) throw new Error(`PrefEval pipelines at size: ${prefevalOriginalMissing()}`);
      const r = await runCliJson<Plan>(['make', '-p', join(repoRoot, 'pipelines', name), '--dry-run', '--json'], { env: { PREFEVAL_DATA: checkout } });
      expect(r.code, r.stderr).toBe(0);
      return Object.fromEntries(r.json.steps.map((s) => [s.step, s]));
    };

    it('prefeval-mcq.yaml: 1,000 records in each of 3 forms, one call each, the explicit ones two', async () => {
      const steps = await dry('prefeval-mcq.yaml');
      expect(steps['prefeval-mcq']).toMatchObject({ work: 3000, estimate: { calls: 4000 } });
      expect(steps['prefeval-responses']).toBeUndefined();
    }, 60_000);

    it('prefeval-leaderboard.yaml: 56 preferences x 2 baselines x 2 turn counts x 10 models, four checks each', async () => {
      const steps = await dry('prefeval-leaderboard.yaml');
      expect(steps['prefeval-responses']).toMatchObject({ work: 2240, estimate: { calls: 4480 } });
      expect(steps['prefeval-checks']).toMatchObject({ work: 2240, estimate: { calls: 8960 } });
      expect(steps['prefeval-mcq']).toBeUndefined();
    }, 60_000);
  },
);
