// Release waves on the real components (kube-apiserver, registry, DynamoDB Local): one digest
// goes through the fleet wave by wave with soaks; a failure halts it and later waves keep their
// revision; resume, rollback, a push during a rollout, and a run that died mid-wave.
import { CoreV1Api } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { reconcile } from '../../../functions/core/reconcile/reconcile.ts';
import { rolloutSummary } from '../../../functions/core/rollout/state.ts';
import { getGeneration, listRolloutActions } from '../../../functions/core/store/rollouts.ts';
import { getStatus } from '../../../functions/core/store/status.ts';
import { sluice } from '../../support/cli.ts';
import { leaveLease } from '../../support/lease.ts';
import { fleet } from '../../support/rollouts.ts';
import { testbed } from '../../support/testbed.ts';

const bed = testbed();
const core = bed.kubeConfig().makeApiClient(CoreV1Api);
const MINUTE = 60_000;
const ALICE =
  'arn:aws:sts::123456789012:assumed-role/AWSReservedSSO_Approver_0123456789abcdef/alice@example.com';

describe('rollouts', () => {
  it('takes one digest through the waves in order, each after the one before has soaked', async () => {
    const f = await fleet(bed, { waves: [1, 2, 1], soak: '30m' });
    const [[canary], [eu1, eu2], [last]] = f.waves as [[string], [string, string], [string]];

    // A later wave's member waits, applying nothing.
    expect(await reconcile(eu1, f.deps)).toMatchObject({
      outcome: 'Blocked',
      reason: 'RolloutWaiting',
      message: expect.stringMatching(/wave 2 of 3 waits for wave 1 to finish/),
    });
    expect(await f.value(eu1)).toBeUndefined();

    const first = await reconcile(canary, f.deps);
    expect(first).toMatchObject({ outcome: 'Succeeded' });
    const generation = await getGeneration(f.deps.db, f.name);
    expect(first.revision).toBe(generation!.revision);
    expect(await f.value(canary)).toBe('v1');
    // Soaking: nobody of wave 2 is asked yet (their start at the soak's end is scheduled).
    expect(f.asked).toEqual([]);
    expect(rolloutSummary(await f.state())).toMatch(
      /wave 1 of 3 soaking \(1 of 1 Ready, soaking until 2026-04-01T10:30:00/,
    );

    f.clock.advance(29 * MINUTE);
    const early = await reconcile(eu1, f.deps);
    expect(early).toMatchObject({
      reason: 'RolloutWaiting',
      message: expect.stringMatching(/soaking until 2026-04-01T10:30:00/),
    });
    const held = await getStatus(f.deps.db, eu1);
    expect(held).toMatchObject({
      ready: false,
      reason: 'RolloutWaiting',
      nextRetryAt: '2026-04-01T10:30:00.000Z',
    });

    f.clock.advance(MINUTE);
    // The soak is over: wave 2 takes the digest; eu1's success asks for eu2 (never reconciled),
    // and eu2's for wave 3 (no soak on wave 2): the fleet follows without waiting for intervals.
    expect(await reconcile(eu1, f.deps)).toMatchObject({
      outcome: 'Succeeded',
      revision: generation!.revision,
    });
    expect(f.asked).toEqual([[eu2], [last]]);
    expect(f.followed).toMatchObject([
      { delivery: last, outcome: 'Succeeded', revision: generation!.revision },
      { delivery: eu2, outcome: 'Succeeded', revision: generation!.revision },
    ]);
    expect(await f.value(eu2)).toBe('v1');
    expect(await f.value(last)).toBe('v1');
    expect((await f.state()).phase).toBe('Complete');
  });

  it('halts on a failure: later waves keep their revision; resume retries, rollback returns to the previous digest', async () => {
    const f = await fleet(bed, { waves: [1, 1], start: new Date().toISOString() });
    const [[canary], [rest]] = f.waves as [[string], [string]];
    await reconcile(canary, f.deps);
    await reconcile(rest, f.deps);
    const good = await getGeneration(f.deps.db, f.name);
    expect((await f.state()).phase).toBe('Complete');

    // A revision whose Deployment-free manifest does not even build.
    await f.push('v2', 'kind: [unclosed\n');
    expect(await reconcile(canary, f.deps)).toMatchObject({ outcome: 'Failed', reason: 'BuildFailed' });
    const halted = await f.state();
    expect(halted).toMatchObject({
      phase: 'Halted',
      halt: { wave: 1, delivery: canary, recorded: true, by: 'sluice' },
    });
    expect(halted.halt!.todo).toContain(`sluice rollout resume ${f.name}`);
    const status = await sluice('rollout', 'status', f.name);
    expect(status.stdout).toContain(`halted in wave 1 (recorded by sluice at `);
    expect(status.stdout).toContain(`to do: look at delivery '${canary}'`);
    expect(await reconcile(rest, f.deps)).toMatchObject({
      outcome: 'Blocked',
      reason: 'RolloutHalted',
      message: expect.stringContaining(`delivery '${canary}' failed`),
    });
    expect(await f.value(rest)).toBe('v1');
    // The failed canary is held too (its last good revision stays), even on its next run.
    expect(await reconcile(canary, f.deps)).toMatchObject({ reason: 'RolloutHalted' });
    expect(await f.value(canary)).toBe('v1');

    // Resumed (signed, through the rollouts entry): the canary tries the revision again at once,
    // fails again, and the rollout halts again.
    f.clock.advance(MINUTE);
    const generation = (await getGeneration(f.deps.db, f.name))!;
    const resumed = await f.act('resume', 'retry after the fix of the registry');
    expect(resumed).toMatchObject({
      outcome: 'accepted',
      record: { action: 'resume', by: ALICE, verified: true, source: 'invoke' },
      reconciling: [canary],
    });
    expect(f.gateDeps.reconciled).toMatchObject([
      { delivery: canary, outcome: 'Failed', reason: 'BuildFailed' },
    ]);
    expect((await f.state()).phase).toBe('Halted');

    // Rolled back: every member returns to the previous digest at once, and v2 is not rolled out again.
    expect(generation.previous).toEqual({ digest: good!.digest, revision: good!.revision });
    f.clock.advance(MINUTE);
    const rolledBack = await f.act('rollback', 'INC-77: v2 does not build');
    expect(rolledBack).toMatchObject({
      record: { action: 'rollback', generation: generation.generation, by: ALICE, verified: true },
      reconciling: [canary, rest].sort(),
      state: { phase: 'Complete', generation: { kind: 'rollback', revision: good!.revision } },
    });
    expect(await f.value(canary)).toBe('v1');
    expect(await reconcile(canary, f.deps)).toMatchObject({ outcome: 'Succeeded', revision: good!.revision });
    expect(await reconcile(rest, f.deps)).toMatchObject({ outcome: 'Succeeded', revision: good!.revision });
    expect((await f.state()).phase).toBe('Complete');
    expect(await getGeneration(f.deps.db, f.name)).toMatchObject({
      generation: generation.generation + 1,
      kind: 'rollback',
      startedBy: ALICE,
      verified: true,
      reason: 'INC-77: v2 does not build',
      rejected: [generation.digest],
    });
    // The audit trail: sluice's halts, alice's resume and rollback.
    expect((await listRolloutActions(f.deps.db, f.name)).map((a) => [a.action, a.by])).toEqual([
      ['halt', 'sluice'],
      ['resume', ALICE],
      ['halt', 'sluice'],
      ['rollback', ALICE],
    ]);
  });

  it('a member held by its rollout keeps correcting drift at its last applied revision', async () => {
    const f = await fleet(bed, { waves: [1, 1], soak: '30m' });
    const [[canary], [rest]] = f.waves as [[string], [string]];
    await reconcile(canary, f.deps);
    f.clock.advance(30 * MINUTE);
    await reconcile(rest, f.deps);
    const v1 = (await getGeneration(f.deps.db, f.name))!;
    expect((await f.state()).phase).toBe('Complete');

    await f.push('v2');
    expect(await reconcile(canary, f.deps)).toMatchObject({ outcome: 'Succeeded' });
    const v2 = (await getGeneration(f.deps.db, f.name))!;
    // Waiting for wave 1's soak, the next wave's member has its object deleted by hand.
    await core.deleteNamespacedConfigMap({ name: 'app', namespace: rest });
    const held = await reconcile(rest, f.deps);
    expect(held).toMatchObject({ outcome: 'Blocked', reason: 'RolloutWaiting', revision: v2.revision });
    expect(held.message).toMatch(/^re-applied /);
    expect(held.message).toContain(
      `re-applied ${v1.revision} (drift corrected); rollout '${f.name}' of ${v2.revision}: wave 2 of 2 waits`,
    );
    expect(await f.value(rest)).toBe('v1');
    expect(await getStatus(f.deps.db, rest)).toMatchObject({
      reason: 'RolloutWaiting',
      lastAppliedRevision: v1.revision,
      pendingRevision: v2.revision,
      nextRetryAt: expect.any(String),
    });
    // Still a waiting member of v2: it takes v2 when the soak is over.
    f.clock.advance(30 * MINUTE);
    expect(await reconcile(rest, f.deps)).toMatchObject({ outcome: 'Succeeded', revision: v2.revision });
    expect(await f.value(rest)).toBe('v2');
  });

  it('a push during a rollout waits for it (supersede: wait), then starts from the first wave', async () => {
    const f = await fleet(bed, { waves: [1, 1], soak: '10m' });
    const [[canary], [rest]] = f.waves as [[string], [string]];
    await reconcile(canary, f.deps);
    const v1 = (await getGeneration(f.deps.db, f.name))!;
    await f.push('v2');
    // The canary stays on v1 while the rollout of v1 goes on; the next wave still gets v1.
    expect(await reconcile(canary, f.deps)).toMatchObject({ outcome: 'Succeeded', revision: v1.revision });
    f.clock.advance(10 * MINUTE);
    const held = await reconcile(rest, f.deps);
    expect(held).toMatchObject({ outcome: 'Succeeded', revision: v1.revision });
    expect(await f.value(rest)).toBe('v1');
    // v1 finished: the next run starts v2 from wave 1.
    expect(await reconcile(rest, f.deps)).toMatchObject({ reason: 'RolloutWaiting' });
    const v2 = (await getGeneration(f.deps.db, f.name))!;
    expect(v2).toMatchObject({ generation: 2, previous: { digest: v1.digest } });
    expect(await f.value(rest)).toBe('v1');
    expect(await reconcile(canary, f.deps)).toMatchObject({ outcome: 'Succeeded', revision: v2.revision });
    expect(await f.value(canary)).toBe('v2');
  });

  it('goes on correctly after a run died mid-wave and the events that follow were lost', async () => {
    const f = await fleet(bed, { waves: [2, 1] });
    const [[a, b], [last]] = f.waves as [[string, string], [string]];
    f.loseEvents();
    expect(await reconcile(a, f.deps)).toMatchObject({ outcome: 'Succeeded' });
    // b's run took its lease and died before it recorded anything (a Lambda timeout mid-apply).
    await leaveLease(f.deps.db, b, 'dead-run', 1_000);
    // Nothing follows: the next wave must not start on a's success alone.
    expect(await reconcile(last, f.deps)).toMatchObject({ reason: 'RolloutWaiting' });
    expect(await f.value(last)).toBeUndefined();
    // b's next interval run waits out the dead run's lease, takes it over and applies.
    expect(await reconcile(b, f.deps)).toMatchObject({ outcome: 'Succeeded' });
    // The follow-up of b was lost too; the last wave's own interval run finds wave 1 Ready.
    expect(await reconcile(last, f.deps)).toMatchObject({ outcome: 'Succeeded' });
    expect(await f.value(last)).toBe('v1');
    expect((await f.state()).phase).toBe('Complete');
  });

  it("retries only the next wave's first maxParallel members when a soak ends; the others follow them", async () => {
    const f = await fleet(bed, { waves: [1, 3], soak: '30m', maxParallel: 1 });
    const [[canary], [a, b, c]] = f.waves as [[string], [string, string, string]];
    await reconcile(canary, f.deps);
    for (const member of [a, b, c]) await reconcile(member, f.deps);
    const retries = await Promise.all(
      [a, b, c].map(async (m) => (await getStatus(f.deps.db, m))?.nextRetryAt),
    );
    expect(retries.map((at) => at ?? 'none')).toEqual(['2026-04-01T10:30:00.000Z', 'none', 'none']);
    // At the soak's end a's retry takes the digest, and each success asks for the next member.
    f.clock.advance(30 * MINUTE);
    expect(await reconcile(a, f.deps)).toMatchObject({ outcome: 'Succeeded' });
    expect(f.asked).toEqual([[b], [c]]);
    expect((await f.state()).phase).toBe('Complete');
  });

  it("retries the next wave at the soak's end though its members' runs came before the soak began", async () => {
    const scheduled: [string, string][] = [];
    const retryTimer = {
      retryAt: async (delivery: string, at: Date) => (scheduled.push([delivery, at.toISOString()]), at),
    };
    const f = await fleet(bed, { waves: [1, 2], soak: '30m', deps: { retryTimer } });
    const [[canary], [a, b]] = f.waves as [[string], [string, string]];
    // A push reconciles every member at once: the next wave's runs find wave 1 not started, and
    // there is no soak yet to retry them at.
    for (const member of [a, b])
      expect(await reconcile(member, f.deps)).toMatchObject({ reason: 'RolloutWaiting' });
    expect(scheduled).toEqual([]);
    expect(await reconcile(canary, f.deps)).toMatchObject({ outcome: 'Succeeded' });
    // The soak began: the canary's run schedules a and b's retries at its end, without running them.
    const soakEnd = '2026-04-01T10:30:00.000Z';
    expect(f.asked).toEqual([]);
    expect(scheduled).toEqual([
      [a, soakEnd],
      [b, soakEnd],
    ]);
    // The canary's next run (its interval) schedules nothing again.
    expect(await reconcile(canary, f.deps)).toMatchObject({ outcome: 'Succeeded' });
    expect(scheduled).toHaveLength(2);
    expect(f.asked).toEqual([]);
    // The retries fire at the soak's end: wave 2 takes the digest.
    f.clock.advance(30 * MINUTE);
    for (const member of [a, b])
      expect(await reconcile(member, f.deps)).toMatchObject({ outcome: 'Succeeded' });
    expect((await f.state()).phase).toBe('Complete');
  });

  it('admits at most maxParallel members of a wave at once', async () => {
    const f = await fleet(bed, { waves: [3], maxParallel: 1 });
    const [[a, b, c]] = f.waves as [[string, string, string]];
    f.loseEvents();
    expect(await reconcile(b, f.deps)).toMatchObject({
      reason: 'RolloutWaiting',
      message: expect.stringContaining('its turn in wave 1'),
    });
    expect(await reconcile(a, f.deps)).toMatchObject({ outcome: 'Succeeded' });
    expect(f.asked).toEqual([[b]]);
    expect(await reconcile(c, f.deps)).toMatchObject({ reason: 'RolloutWaiting' });
    expect(await reconcile(b, f.deps)).toMatchObject({ outcome: 'Succeeded' });
    expect(await reconcile(c, f.deps)).toMatchObject({ outcome: 'Succeeded' });
  });

  it('wakes each admitted member once, however many runs of its wave follow (no duplicate follow-ups)', async () => {
    // Follow-ups queue (Lambda's asynchronous invocations): they have not run when the next run follows.
    const f = await fleet(bed, { waves: [4], maxParallel: 2 });
    const [[a, b, c, d]] = f.waves as [[string, string, string, string]];
    f.loseEvents();
    for (const member of [c, d])
      expect(await reconcile(member, f.deps)).toMatchObject({ reason: 'RolloutWaiting' });
    expect(await reconcile(a, f.deps)).toMatchObject({ outcome: 'Succeeded' });
    // a is done: b (never run) and c (held before its turn) are admitted and woken.
    expect(f.asked).toEqual([[b, c]]);
    // a's next run (an interval run, a duplicate) finds them still showing their held status: not woken again.
    expect(await reconcile(a, f.deps)).toMatchObject({ outcome: 'Succeeded' });
    expect(f.asked).toEqual([[b, c]]);
    // b is done: d is admitted, and woken alone (c's run is under way).
    expect(await reconcile(b, f.deps)).toMatchObject({ outcome: 'Succeeded' });
    expect(f.asked).toEqual([[b, c], [d]]);
    for (const member of [c, d])
      expect(await reconcile(member, f.deps)).toMatchObject({ outcome: 'Succeeded' });
    expect(f.asked).toEqual([[b, c], [d]]);
    expect((await f.state()).phase).toBe('Complete');
  });
});
