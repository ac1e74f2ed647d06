// `npm run demo -- --fleet`, as a user runs it: three local API servers, three waves, a halt and a
// rollback, every step checked by the demo itself.
import { describe, expect, it } from 'vitest';
import { runDemo } from './support/demo.ts';

describe('npm run demo -- --fleet', () => {
  it(
    'takes a revision through three clusters in waves, halts on eu-west and rolls back',
    { timeout: 600_000 },
    async () => {
      const stdout = await runDemo('--fleet');
      for (const line of [
        "✓ eu-west's policy in force: a Deployment asking for more than 512Mi is refused",
        '✓ every cluster runs 1.0.0 (nginx:1.27)',
        '✓ canary took 1.1.0 and soaks',
        // On a loaded machine the CLI may start after the 8 s soak: the demo then says so on this line.
        "✓ 'sluice rollout status' shows wave 1 soaking",
        '✓ canary runs nginx:1.28; eu-west and us-east keep nginx:1.27',
        "✓ wave 2 held by gate 'eu-approval' once the soak ended",
        '✓ approved: eu-west takes it at once, and us-east (the last wave) follows it',
        '✓ every cluster runs 1.1.0 (nginx:1.28)',
        "✓ halted in wave 2: eu-west's API server refused the Deployment (512Mi ceiling)",
        "ValidatingAdmissionPolicy 'memory-ceiling' with binding 'memory-ceiling' denied request",
        "✓ 'sluice rollout status' names the delivery, why, and what to do",
        '✓ us-east (wave 3) is held: it keeps 1.1.0',
        '✓ canary runs nginx:1.29; eu-west and us-east keep nginx:1.28',
        '✓ the rollback recorded, with who and why',
        "✓ 1.2.0 is marked rejected: the source's newest tag will not start it again",
        '✓ every cluster runs 1.1.0 (nginx:1.28) again',
      ])
        expect(stdout).toContain(line);
      expect(stdout).toMatch(/fleet demo complete in \d+s: every step did what it said\./);
    },
  );
});
