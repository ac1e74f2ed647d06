// dependsOn on the real components: a delivery waits, applying nothing, until the deliveries it
// depends on are Ready; when one succeeds, the deliveries waiting on it reconcile at once.
import { CoreV1Api } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import type { ReconcileDeps } from '../../../functions/core/reconcile/deps.ts';
import { reconcile, type ReconcileResult } from '../../../functions/core/reconcile/reconcile.ts';
import { getStatus } from '../../../functions/core/store/status.ts';
import { engineDeps, pushFiles, registerDelivery } from '../../support/deliveries.ts';
import { createNamespace, testbed, uniqueName } from '../../support/testbed.ts';

const bed = testbed();
const core = bed.kubeConfig().makeApiClient(CoreV1Api);

const configMap = (name: string, ns: string) =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\n  namespace: ${ns}\ndata:\n  k: v\n`;

async function exists(name: string, namespace: string): Promise<boolean> {
  try {
    await core.readNamespacedConfigMap({ name, namespace });
    return true;
  } catch {
    return false;
  }
}

/** Engine dependencies whose catch-up reconciles in this process, keeping what it was asked to run. */
function followingDeps(): ReconcileDeps & { followed: ReconcileResult[]; asked: string[][] } {
  const followed: ReconcileResult[] = [];
  const asked: string[][] = [];
  const deps: ReconcileDeps & { followed: ReconcileResult[]; asked: string[][] } = {
    ...engineDeps(),
    reconcileNow: async (names) => {
      asked.push([...names]);
      for (const name of names) followed.push(await reconcile(name, deps));
    },
    followed,
    asked,
  };
  return deps;
}

describe('dependsOn', () => {
  it('waits for its dependency, applying nothing, and follows it as soon as it succeeds', async () => {
    const ns = uniqueName('deps');
    await createNamespace(bed.kubeConfig(), ns);
    const deps = followingDeps();
    const [infraRepo, appRepo] = [uniqueName('deps/infra'), uniqueName('deps/app')];
    const [infra, app, bystander] = [uniqueName('infra'), uniqueName('app'), uniqueName('other')];
    await pushFiles(bed, infraRepo, 'main', { 'cm.yaml': 'kind: [unclosed\n' });
    await pushFiles(bed, appRepo, 'main', { 'cm.yaml': configMap('app', ns) });
    await registerDelivery(deps, bed, { name: infra, repository: infraRepo });
    await registerDelivery(deps, bed, { name: app, repository: appRepo, dependsOn: [infra] });
    // Depends on infra too, but was never held: it is not reconciled by the catch-up.
    await registerDelivery(deps, bed, {
      name: bystander,
      repository: appRepo,
      dependsOn: [infra],
      suspend: true,
    });

    const first = await reconcile(app, deps);
    expect(first).toMatchObject({
      outcome: 'Blocked',
      reason: 'DependencyNotReady',
      message: `waiting for dependency '${infra}' (not reconciled yet)`,
    });
    expect(await exists('app', ns)).toBe(false);

    expect(await reconcile(infra, deps)).toMatchObject({ outcome: 'Failed', reason: 'BuildFailed' });
    const second = await reconcile(app, deps);
    expect(second.message).toMatch(new RegExp(`^waiting for dependency '${infra}' \\(BuildFailed: `));
    const held = await getStatus(deps.db, app);
    expect(held).toMatchObject({
      ready: false,
      reason: 'DependencyNotReady',
      blockedSince: expect.any(String),
    });
    expect(await exists('app', ns)).toBe(false);

    await pushFiles(bed, infraRepo, 'main', { 'cm.yaml': configMap('infra', ns) });
    expect(await reconcile(infra, deps)).toMatchObject({ outcome: 'Succeeded' });
    expect(deps.asked).toEqual([[app]]);
    expect(deps.followed).toMatchObject([{ delivery: app, outcome: 'Succeeded', changes: { created: 1 } }]);
    expect(await exists('app', ns)).toBe(true);
    const ready = await getStatus(deps.db, app);
    expect(ready).toMatchObject({ ready: true, reason: 'ReconciliationSucceeded' });
    expect(ready?.blockedSince).toBeUndefined();

    // Nobody is waiting any more: the next success of infra reconciles nothing else.
    expect(await reconcile(infra, deps)).toMatchObject({ outcome: 'Succeeded' });
    expect(deps.asked).toEqual([[app]]);
  });

  it('names a dependency that is not registered', async () => {
    const deps = followingDeps();
    const name = uniqueName('orphan');
    await registerDelivery(deps, bed, {
      name,
      repository: uniqueName('deps/none'),
      dependsOn: ['gone-away'],
    });
    expect(await reconcile(name, deps)).toMatchObject({
      outcome: 'Blocked',
      reason: 'DependencyNotReady',
      message: "waiting for dependency 'gone-away' (not registered)",
    });
  });
});
