// Release waves on the real components (kube-apiserver, registry, DynamoDB Local): one digest
// goes through the fleet wave by wave with soaks; a failure halts it and later waves keep their
// revision; resume, rollback, a push during a rollout, and a run that died mid-wave.
import { CoreV1Api } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { parseRollout } from '../../../functions/core/config/index.ts';
import type { ReconcileDeps } from '../../../functions/core/reconcile/deps.ts';
import { reconcile, type ReconcileResult } from '../../../functions/core/reconcile/reconcile.ts';
import { readRolloutState } from '../../../functions/core/reconcile/rollout-target.ts';
import { rolloutSummary } from '../../../functions/core/rollout/state.ts';
import {
  getGeneration,
  getRollout,
  putRollout,
  recordRolloutAction,
  startGeneration,
} from '../../../functions/core/store/rollouts.ts';
import { getStatus } from '../../../functions/core/store/status.ts';
import { engineDeps, pushFiles, registerDelivery } from '../../support/deliveries.ts';
import { configMapValue, configMapYaml, manualClock } from '../../support/gates.ts';
import { sluice } from '../../support/cli.ts';
import { leaveLease } from '../../support/lease.ts';
import { createNamespace, testbed, uniqueName } from '../../support/testbed.ts';

const bed = testbed();
const core = bed.kubeConfig().makeApiClient(CoreV1Api);
const MINUTE = 60_000;

/**
 * A fleet of deliveries of one repository, each into its own namespace, in a rollout of
 * `waves` (sizes); follow-up reconciles run in this process unless `lost` (then nothing follows).
 */
async function fleet(options: {
  waves: number[];
  soak?: string;
  supersede?: 'wait' | 'restart';
  maxParallel?: number;
}) {
  const clock = manualClock('2026-04-01T10:00:00Z');
  const asked: string[][] = [];
  const followed: ReconcileResult[] = [];
  let lost = false;
  const deps: ReconcileDeps = {
    ...engineDeps(),
    clock,
    retryTimer: { retryAt: async (_delivery, at) => at },
    reconcileNow: async (names) => {
      asked.push([...names]);
      if (lost) return;
      for (const name of names) followed.push(await reconcile(name, deps));
    },
  };
  const repository = uniqueName('rollout/app');
  const waves = options.waves.map((size, w) =>
    Array.from({ length: size }, (_, i) => uniqueName(`w${w + 1}m${i + 1}`)),
  );
  const push = (value: string, text = configMapYaml('app', 'default', value)) =>
    pushFiles(bed, repository, 'main', { 'cm.yaml': text });
  await push('v1');
  for (const name of waves.flat()) {
    await createNamespace(bed.kubeConfig(), name);
    await registerDelivery(deps, bed, { name, repository, targetNamespace: name });
  }
  const name = uniqueName('rollout');
  const rollout = parseRollout({
    name,
    source: { url: `oci://${bed.registry.host}/${repository}`, tag: 'main', provider: 'aws' },
    waves: waves.map((deliveries, w) => ({
      deliveries,
      ...(w === 0 && options.soak && { soak: options.soak }),
    })),
    ...(options.supersede && { supersede: options.supersede }),
    ...(options.maxParallel && { maxParallel: options.maxParallel }),
  });
  await putRollout(deps.db, rollout, clock.now());
  const value = (member: string) => configMapValue(core, 'app', member);
  const state = async () => readRolloutState((await getRollout(deps.db, name))!, deps, clock.now());
  return {
    deps,
    clock,
    asked,
    followed,
    waves,
    name,
    push,
    value,
    state,
    loseEvents: () => {
      lost = true;
    },
  };
}

describe('rollouts', () => {
  it('takes one digest through the waves in order, each after the one before has soaked', async () => {
    const f = await fleet({ waves: [1, 2, 1], soak: '30m' });
    const [[canary], [eu1, eu2], [last]] = f.waves as [[string], [string, string], [string]];

    // A later wave's member waits, applying nothing.
    expect(await reconcile(eu1, f.deps)).toMatchObject({
      outcome: 'Blocked',
      reason: 'RolloutWaiting',
      message: expect.stringMatching(/wave 2 of 3 waits for wave 1 has not finished/),
    });
    expect(await f.value(eu1)).toBeUndefined();

    const first = await reconcile(canary, f.deps);
    expect(first).toMatchObject({ outcome: 'Succeeded' });
    const generation = await getGeneration(f.deps.db, f.name);
    expect(first.revision).toBe(generation!.revision);
    expect(await f.value(canary)).toBe('v1');
    // Soaking: nobody of wave 2 is asked yet.
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
    const f = await fleet({ waves: [1, 1] });
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

    // Resumed: the canary tries the revision again, fails again, and the rollout halts again.
    f.clock.advance(MINUTE);
    const generation = (await getGeneration(f.deps.db, f.name))!;
    await recordRolloutAction(f.deps.db, f.name, {
      action: 'resume',
      generation: generation.generation,
      at: f.clock.now().toISOString(),
      by: 'arn:aws:iam::123456789012:user/alice',
      verified: true,
      reason: 'retry',
    });
    f.clock.advance(MINUTE);
    expect(await reconcile(canary, f.deps)).toMatchObject({ outcome: 'Failed', reason: 'BuildFailed' });
    expect((await f.state()).phase).toBe('Halted');

    // Rolled back: every member returns to the previous digest, and v2 is not rolled out again.
    expect(generation.previous).toEqual({ digest: good!.digest, revision: good!.revision });
    await startGeneration(
      f.deps.db,
      f.name,
      {
        ...generation.previous!,
        generation: generation.generation + 1,
        kind: 'rollback',
        startedAt: f.clock.now().toISOString(),
        startedBy: 'arn:aws:iam::123456789012:user/alice',
        rejected: [generation.digest],
      },
      generation,
    );
    expect(await reconcile(canary, f.deps)).toMatchObject({ outcome: 'Succeeded', revision: good!.revision });
    expect(await reconcile(rest, f.deps)).toMatchObject({ outcome: 'Succeeded', revision: good!.revision });
    expect((await f.state()).phase).toBe('Complete');
    expect((await getGeneration(f.deps.db, f.name))!.generation).toBe(generation.generation + 1);
  });

  it('a push during a rollout waits for it (supersede: wait), then starts from the first wave', async () => {
    const f = await fleet({ waves: [1, 1], soak: '10m' });
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
    const f = await fleet({ waves: [2, 1] });
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

  it('admits at most maxParallel members of a wave at once', async () => {
    const f = await fleet({ waves: [3], maxParallel: 1 });
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
});
