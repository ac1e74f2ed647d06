// `sluice rollout halt|resume|rollback` as an operator runs it: with --function, signed with their
// AWS credentials and sent to the gate function's rollouts entry URL (the stand-in checks SigV4,
// the STS stand-in the proof), the verified principal recorded; without it, written here as a
// claim (unverified), as `sluice gate open` does locally. On DynamoDB Local and the kube-apiserver.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_IDENTITIES } from '../../dev/sigv4-identity.ts';
import type { GateDeps } from '../../functions/core/gates/requests.ts';
import { reconcile } from '../../functions/core/reconcile/reconcile.ts';
import { listRolloutActions } from '../../functions/core/store/rollouts.ts';
import { startAwsRecorder } from '../support/aws-recorder.ts';
import { sluice, sluiceAs } from '../support/cli.ts';
import { REGION, startFunctionUrls, type FunctionUrls, type TestPrincipal } from '../support/function-url.ts';
import { fleet } from '../support/rollouts.ts';
import { registerGate } from '../support/gates.ts';
import { testbed, uniqueName } from '../support/testbed.ts';

const bed = testbed();
const { alice } = TEST_IDENTITIES;

let urls: FunctionUrls;
let recorder: Awaited<ReturnType<typeof startAwsRecorder>>;
/** The gate function's dependencies behind the URLs: the fleet's of the test running. */
let behind: GateDeps | undefined;
beforeAll(async () => {
  urls = await startFunctionUrls([alice], () => behind!);
  recorder = await startAwsRecorder({ functionUrl: (alias) => urls.url(alias) });
});
afterAll(async () => {
  await urls.stop();
  await recorder.stop();
});

const as = (who: TestPrincipal, ...args: string[]) =>
  sluiceAs({ who, lambdaEndpoint: recorder.url, region: REGION }, ...args);

describe('sluice rollout halt|resume|rollback', () => {
  it('halts signed through the rollouts entry (verified), resumes locally (a claim); status says who and why', async () => {
    const f = await fleet(bed, { waves: [1, 1], start: new Date().toISOString() });
    behind = f.gateDeps;
    const [[canary], [rest]] = f.waves as [[string], [string]];
    f.loseEvents();
    expect(await reconcile(canary, f.deps)).toMatchObject({ outcome: 'Succeeded' });

    const halted = await as(
      alice,
      'rollout',
      'halt',
      f.name,
      '--reason',
      'INC-9: errors',
      '--function',
      'sluice-gate',
    );
    expect(halted.stderr).toBe('');
    // People read the principal as name, role and account; the JSON keeps the ARN.
    const aliceReads = 'alice@example.com (role AWSReservedSSO_Approver_0123456789abcdef, 123456789012)';
    expect(alice.arn).toBe(
      'arn:aws:sts::123456789012:assumed-role/AWSReservedSSO_Approver_0123456789abcdef/alice@example.com',
    );
    expect(halted.stdout).toContain(`rollout '${f.name}': halted by ${aliceReads} (INC-9: errors); now `);
    expect(recorder.requests.some((r) => r.path.includes('/url?Qualifier=rollouts'))).toBe(true);
    expect(await reconcile(rest, f.deps)).toMatchObject({ reason: 'RolloutHalted' });
    expect(await f.value(rest)).toBeUndefined();
    const status = await sluice('rollout', 'status', f.name);
    expect(status.stdout).toContain(`halted in wave 2 (recorded by ${aliceReads} at `);
    expect(status.stdout).toContain(` halt by ${aliceReads}: INC-9: errors`);
    expect(status.stdout).not.toContain(alice.arn);
    expect((await sluice('rollout', 'status', f.name, '--exit-code')).code).toBe(1);

    // Locally, without --function: a claim by --by, marked unverified; the next wave goes on here.
    const resumed = await sluice('rollout', 'resume', f.name, '--reason', 'INC-9 fixed', '--by', 'bob');
    expect(resumed.code).toBe(0);
    expect(resumed.stderr).toContain(`${rest}: Succeeded`);
    expect(resumed.stdout).toContain(`rollout '${f.name}': resumed by bob (unverified) (INC-9 fixed)`);
    expect(await f.value(rest)).toBe('v1');
    expect(await listRolloutActions(f.deps.db, f.name)).toMatchObject([
      { action: 'halt', by: alice.arn, verified: true, source: 'url', wave: 2, sequence: 1 },
      { action: 'resume', by: 'bob', verified: false, source: 'cli', sequence: 2 },
    ]);
    const after = await sluice('rollout', 'status', f.name);
    expect(after.stdout).toContain(' resume by bob (unverified): INC-9 fixed');
  });

  it("locally, opening a wave's gate reconciles its members here and the next wave follows them, as deployed", async () => {
    const gate = uniqueName('eu-approval');
    const f = await fleet(bed, {
      waves: [1, 1, 1],
      waveGate: { wave: 1, gate },
      start: new Date().toISOString(),
    });
    await registerGate(f.deps, { name: gate, default: 'closed' });
    const [[canary], [eu], [last]] = f.waves as [[string], [string], [string]];
    expect(await reconcile(canary, f.deps)).toMatchObject({ outcome: 'Succeeded' });
    expect(await reconcile(eu, f.deps)).toMatchObject({
      reason: 'RolloutWaiting',
      message: expect.stringContaining(`wave 2 of 3 waits for gate '${gate}' to open`),
    });

    const opened = await sluice('gate', 'open', gate, '--reason', 'CHG-7', '--by', 'bob');
    expect(opened.code).toBe(0);
    expect(opened.stderr).toContain(`${eu}: Succeeded`);
    // eu's success asks for the last wave, whose run follows here, not at its next interval.
    expect(opened.stderr).toContain(`${last}: Succeeded`);
    expect(await f.value(last)).toBe('v1');
    expect((await f.state()).phase).toBe('Complete');
  });

  it('refuses a blank reason before anything is sent, and says why an action cannot be done', async () => {
    const f = await fleet(bed, { waves: [1], start: new Date().toISOString() });
    behind = f.gateDeps;
    const sent = urls.invocations;
    const noReason = await as(alice, 'rollout', 'halt', f.name, '--function', 'sluice-gate');
    expect(noReason.code).toBe(1);
    expect(noReason.stderr).toContain('"reason" is required and may not be blank');
    expect(urls.invocations).toBe(sent);
    const withBy = await as(
      alice,
      'rollout',
      'halt',
      f.name,
      '--reason',
      'x',
      '--by',
      'eve',
      '--function',
      'f',
    );
    expect(withBy.stderr).toContain('--by cannot be used with --function');
    const nothing = await as(
      alice,
      'rollout',
      'resume',
      f.name,
      '--reason',
      'x',
      '--function',
      'sluice-gate',
    );
    expect(nothing.code).toBe(1);
    expect(nothing.stderr).toContain(`rollout '${f.name}': resume refused by `);
    expect(nothing.stderr).toContain('(HTTP 400): ');
    expect(nothing.stderr).toContain('there is nothing to resume');
    expect(await listRolloutActions(f.deps.db, f.name)).toEqual([]);
  });
});
