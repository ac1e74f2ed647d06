// `npm run test:unit`: the test files that need no local component (test/support/test-tiers.ts),
// with no global setup, so nothing is started. `npm test` runs these and the rest.
import { defineConfig } from 'vitest/config';
import base from './vitest.config.ts';
import { testTiers } from './test/support/test-tiers.ts';

export default defineConfig({
  ...base,
  test: { ...base.test, include: testTiers(import.meta.dirname).unit, globalSetup: [] },
});
