// Random histories of a rollout on the real components, the promises checked after every step
// against the API server (test/support/rollout-soak.ts): members take a revision in wave order
// after the soak, a halt holds until a resume or rollback, a revision rolled back stays out. Fixed
// seeds, so a failure names a history that can be run again.
import { describe, expect, it } from 'vitest';
import { runRolloutSoak } from '../support/rollout-soak.ts';
import { testbed } from '../support/testbed.ts';

const bed = testbed();
/** Seeds whose histories take revisions in every wave, halt, resume and roll back; with the soak
 * check broken on purpose (soaked always true), four of these caught it as wave-order. */
const SEEDS = [7, 31, 2026, 1234];
const STEPS = 60;

describe('the rollout soak', () => {
  for (const seed of SEEDS)
    it(`seed ${seed}: every promise holds after every step`, async () => {
      const report = await runRolloutSoak(bed, seed, STEPS);
      expect(report.violations, report.steps.join('\n')).toEqual([]);
      expect(report.takes).toBeGreaterThan(0);
    });
});
