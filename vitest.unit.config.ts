// `npm run test:unit`: the test files that need no local component (test/support/test-tiers.ts),
// with no global setup, so nothing is started. `npm test` runs these and the rest.
import { defineConfig } from 'vitest/config';
import base from './vitest.config.ts';
import { testTiers } from './test/support/test-tiers.ts';

export default defineConfig({
  ...base,
  test: {
    ...base.test,
    include: testTiers(import.meta.dirname).unit,
    globalSetup: [],
    // Each worker runs its files one after another in one process, so aws-cdk-lib, its template
    // checks and the other large modules load once per worker, not once per file (most of the
    // tier's time was spent importing). A file that changes process state restores it when done
    // (e.g. withoutCloudFormationChecks in test/lib/synth.ts); none mocks modules.
    isolate: false,
  },
});
