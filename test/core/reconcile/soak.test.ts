// A dependency's soak (`dependsOn: [{ name, soak }]`) on the real components with an injected
// clock: the dependent waits, applying nothing, until the dependency has been Ready at its current
// revision for the soak; the held run schedules its own retry for when the soak ends.
import { describe, expect, it } from 'vitest';
import type { ReconcileDeps } from '../../../functions/core/reconcile/deps.ts';
import { getStatus } from '../../../functions/core/store/status.ts';
import { sluice } from '../../support/cli.ts';
import { engineDeps, pushFiles, registerDelivery, run } from '../../support/deliveries.ts';
import { configMapValue, configMapYaml, manualClock } from '../../support/gates.ts';
import { createNamespace, testbed, uniqueName } from '../../support/testbed.ts';
import { CoreV1Api } from '@kubernetes/client-node';

const bed = testbed();
const core = bed.kubeConfig().makeApiClient(CoreV1Api);
const MINUTE = 60_000;

/** `staging` and `prod`, prod depending on staging with a 30-minute soak; retries kept, not scheduled. */
async function setup(start: string) {
  const clock = manualClock(start);
  const retries: { delivery: string; at: string }[] = [];
  const deps: ReconcileDeps = {
    ...engineDeps(),
    clock,
    retryTimer: {
      retryAt: async (delivery, at) => {
        retries.push({ delivery, at: at.toISOString() });
        return at;
      },
    },
  };
  const ns = uniqueName('soak');
  await createNamespace(bed.kubeConfig(), ns);
  const [staging, prod] = [uniqueName('staging'), uniqueName('prod')];
  const [stagingRepo, prodRepo] = [uniqueName('soak/staging'), uniqueName('soak/prod')];
  const pushStaging = (value: string, text = configMapYaml('staging', ns, value)) =>
    pushFiles(bed, stagingRepo, 'main', { 'cm.yaml': text });
  await pushStaging('v1');
  await pushFiles(bed, prodRepo, 'main', { 'cm.yaml': configMapYaml('prod', ns, 'v1') });
  await registerDelivery(deps, bed, { name: staging, repository: stagingRepo });
  await registerDelivery(deps, bed, {
    name: prod,
    repository: prodRepo,
    dependsOn: [{ name: staging, soak: '30m' }],
  });
  return {
    clock,
    deps,
    retries,
    staging,
    prod,
    pushStaging,
    prodApplied: () => configMapValue(core, 'prod', ns),
  };
}

describe('soak', () => {
  it('holds the dependent until the dependency has been Ready at its revision for the soak, then lets it through', async () => {
    const { clock, deps, retries, staging, prod, prodApplied } = await setup('2026-11-27T10:00:00Z');
    expect(await run(staging, deps)).toMatchObject({ outcome: 'Succeeded' });
    expect(await getStatus(deps.db, staging)).toMatchObject({ readySince: '2026-11-27T10:00:00.000Z' });

    clock.advance(10 * MINUTE);
    // A steady run of the dependency keeps when it became Ready.
    expect(await run(staging, deps)).toMatchObject({ outcome: 'Succeeded' });
    expect(await getStatus(deps.db, staging)).toMatchObject({ readySince: '2026-11-27T10:00:00.000Z' });

    const held = await run(prod, deps);
    expect(held).toMatchObject({ outcome: 'Blocked', reason: 'DependencyNotReady' });
    expect(held.message).toMatch(
      new RegExp(
        `^waiting for dependency '${staging}' \\(soaking: Ready at main@sha256:[0-9a-f]{64} since 2026-11-27T10:00:00Z, 20m of its 30m soak remain, until 2026-11-27T10:30:00Z\\)$`,
      ),
    );
    expect(await prodApplied()).toBeUndefined();
    expect(await getStatus(deps.db, prod)).toMatchObject({
      soakingUntil: '2026-11-27T10:30:00.000Z',
      nextRetryAt: '2026-11-27T10:30:00.000Z',
    });
    // The held run is retried when the soak ends (a one-time schedule in AWS).
    expect(retries).toEqual([{ delivery: prod, at: '2026-11-27T10:30:00.000Z' }]);

    clock.set('2026-11-27T10:30:00Z');
    expect(await run(prod, deps)).toMatchObject({ outcome: 'Succeeded' });
    expect(await prodApplied()).toBe('v1');
    const status = await getStatus(deps.db, prod);
    expect(status?.soakingUntil).toBeUndefined();
    expect(status?.blockedSince).toBeUndefined();
  });

  it('starts the soak again when the dependency applies a new revision, or stops being Ready', async () => {
    const { clock, deps, staging, prod, pushStaging } = await setup('2026-11-27T10:00:00Z');
    expect(await run(staging, deps)).toMatchObject({ outcome: 'Succeeded' });
    clock.advance(40 * MINUTE);
    await pushStaging('v2');
    expect(await run(staging, deps)).toMatchObject({ outcome: 'Succeeded' });
    expect(await getStatus(deps.db, staging)).toMatchObject({ readySince: '2026-11-27T10:40:00.000Z' });
    clock.advance(MINUTE);
    const held = await run(prod, deps);
    expect(held).toMatchObject({ outcome: 'Blocked', reason: 'DependencyNotReady' });
    expect(held.message).toContain('29m of its 30m soak remain, until 2026-11-27T11:10:00Z');

    // A failed run of the dependency: not Ready, so no soak; Ready again, its soak starts afresh.
    await pushStaging('broken', 'kind: [unclosed\n');
    expect(await run(staging, deps)).toMatchObject({ outcome: 'Failed' });
    expect((await getStatus(deps.db, staging))?.readySince).toBeUndefined();
    expect((await run(prod, deps)).message).not.toContain('soaking');
    clock.advance(MINUTE);
    await pushStaging('v4');
    expect(await run(staging, deps)).toMatchObject({ outcome: 'Succeeded' });
    expect(await getStatus(deps.db, staging)).toMatchObject({ readySince: '2026-11-27T10:42:00.000Z' });
    expect((await run(prod, deps)).message).toContain('30m of its 30m soak remain');
  });

  it('`sluice status` says how long the soak has left', async () => {
    // The CLI reads the system clock: the soak is set around now.
    const { deps, staging, prod } = await setup(new Date().toISOString());
    expect(await run(staging, deps)).toMatchObject({ outcome: 'Succeeded' });
    expect(await run(prod, deps)).toMatchObject({ outcome: 'Blocked' });
    const shown = await sluice('status', prod);
    expect(shown.code).toBe(0);
    expect(shown.stdout).toMatch(
      new RegExp(
        `${prod}\\s+False\\s+DependencyNotReady\\s.*soaking.*\\(held \\S+; soak ends in \\d+m, at \\S+Z\\)`,
      ),
    );
  });
});
