// `npm run demo`, exactly as a user runs it: its own local components, every step checked by the demo itself.
import { describe, expect, it } from 'vitest';
import { runDemo } from './support/demo.ts';

describe('npm run demo', () => {
  it('tells the whole story and exits 0', { timeout: 600_000 }, async () => {
    const stdout = await runDemo();
    for (const line of [
      '✓ nothing applied while the gate is closed',
      "publishes a 'Release Waiting' event (delivery demo, 1.0.0@sha256:",
      'https://console.aws.amazon.com/cloudwatch/home?region=<region>#dashboards/dashboard/<stack>-Sluice-<region>',
      '✓ four objects applied: Deployment, Service, HPA, PDB',
      '✓ 1.1.0 held although the gate is open: the approval names 1.0.0',
      '✓ nothing pruned before the approval',
      '✓ approved: PodDisruptionBudget web pruned',
      '✓ Deployment, Service and HPA not written (same resourceVersion)',
      '(computed from the cron: no invocation needed)',
      "✓ 'change-freeze' closed",
      '✓ the new revision is held, with the reason and when the gate opens',
      '✓ the deleted Service was re-created from 1.1.0 (drift corrected)',
      '✓ 1.2.0 applied (nginx:1.28)',
      '✓ the waiting delivery reconciled at once',
      "✓ 'checkout-healthy' closed while checkout-5xx is in ALARM",
      '✓ the hotfix 1.2.1 is held by the alarm gate (and awaits its SRE approval)',
      '✓ the hotfix applied (nginx:1.28.1) through the closed gates',
      "✓ 'sluice gates' shows the override, who made it and when it ends; the gate itself stays closed",
      '✓ the audit row: OVERRIDE, by alice, with the reason',
      "✓ the alarm clears: 'checkout-healthy' is open again",
      '✓ all objects of the delivery deleted',
    ]) {
      expect(stdout).toContain(line);
    }
    expect(stdout).toMatch(/demo complete in \d+s: every step did what it said\./);
  });
});
