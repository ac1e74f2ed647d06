// The per-cluster concurrency limit in a reconcile, on the real components: a run that finds its
// cluster's slots all taken changes nothing, says which cluster and limit in its status, and is
// retried; a run with nothing to write takes no slot; runs that wait for a slot all get there and
// leave the slots free.
import { CoreV1Api } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { clusterKey } from '../../../functions/core/config/index.ts';
import { busyClusterRetryAt } from '../../../functions/core/reconcile/cluster-limit.ts';
import { reconcile } from '../../../functions/core/reconcile/reconcile.ts';
import type { RetryTimer } from '../../../functions/core/reconcile/retry.ts';
import { acquireClusterSlot, clusterSlotsKey } from '../../../functions/core/store/cluster-slots.ts';
import { getStatus } from '../../../functions/core/store/status.ts';
import { systemClock } from '../../../functions/core/clock.ts';
import { queryPartition } from '../../../functions/core/store/table-client.ts';
import { engineDeps, pushFiles, registerDelivery } from '../../support/deliveries.ts';
import { createNamespace, kubeconfigCopy, testbed, uniqueName } from '../../support/testbed.ts';

const bed = testbed();
const configMap = (ns: string, name: string) =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\n  namespace: ${ns}\ndata:\n  k: v\n`;

describe('cluster concurrency', () => {
  it('a run on a cluster whose slots are all taken is held: nothing applied, ClusterBusy naming the cluster and limit, a retry scheduled', async () => {
    const kubeconfig = kubeconfigCopy();
    const cluster = clusterKey({ kubeconfig });
    const [ns, repository, name] = [uniqueName('busy'), uniqueName('busy/app'), uniqueName('busy')];
    await createNamespace(bed.kubeConfig(), ns);
    await pushFiles(bed, repository, 'main', { 'cm.yaml': configMap(ns, 'held') });
    const retries: string[] = [];
    const retryTimer: RetryTimer = {
      retryAt: async (delivery, at) => {
        retries.push(delivery);
        return new Date(Math.ceil(at.getTime() / 60_000) * 60_000);
      },
    };
    const deps = { ...engineDeps(), retryTimer, clusterSlotWaitMs: 300 };
    await registerDelivery(deps, bed, { name, repository, cluster: { kubeconfig }, clusterConcurrency: 1 });
    const other = await acquireClusterSlot(deps.db, cluster, 1, 'another-run', systemClock);

    const held = await reconcile(name, deps);

    expect(held).toMatchObject({ outcome: 'Blocked', reason: 'ClusterBusy' });
    const status = await getStatus(deps.db, name);
    expect(status).toMatchObject({ ready: false, reason: 'ClusterBusy', nextRetryAt: held.nextRetryAt });
    expect(status?.message).toContain(
      `cluster ${cluster} already has 1 reconciles applying (clusterConcurrency 1)`,
    );
    expect(retries).toEqual([name]);
    const core = bed.kubeConfig().makeApiClient(CoreV1Api);
    await expect(core.readNamespacedConfigMap({ name: 'held', namespace: ns })).rejects.toThrow();

    await other!.release();
    expect(await reconcile(name, deps)).toMatchObject({ outcome: 'Succeeded' });
    expect((await getStatus(deps.db, name))?.nextRetryAt).toBeUndefined();
    expect(await queryPartition(deps.db, clusterSlotsKey(cluster))).toEqual([]);

    // A run with nothing to write needs no turn: the full cluster does not hold it.
    const again = await acquireClusterSlot(deps.db, cluster, 1, 'another-run', systemClock);
    expect(await reconcile(name, deps)).toMatchObject({ outcome: 'Succeeded', changes: { unchanged: 1 } });
    await again!.release();
  });

  it('held runs come back spread over two minutes, 30 s at the earliest, each at its own fixed offset', () => {
    const now = new Date('2026-03-30T00:00:00Z');
    const offsets = Array.from(
      { length: 200 },
      (_, i) => busyClusterRetryAt(`app-${i}`, now).getTime() - now.getTime(),
    );
    expect(Math.min(...offsets)).toBeGreaterThanOrEqual(30_000);
    expect(Math.max(...offsets)).toBeLessThan(150_000);
    // Spread: every 30-second stretch of the two minutes gets some of them.
    for (let from = 30_000; from < 150_000; from += 30_000)
      expect(offsets.filter((o) => o >= from && o < from + 30_000).length).toBeGreaterThan(20);
    expect(busyClusterRetryAt('app-7', now)).toEqual(busyClusterRetryAt('app-7', now));
  });

  it('six deliveries on a cluster of concurrency 2 all apply, waiting their turn; the slots are empty afterwards', async () => {
    const kubeconfig = kubeconfigCopy();
    const ns = uniqueName('turns');
    await createNamespace(bed.kubeConfig(), ns);
    const deps = { ...engineDeps(), clusterSlotWaitMs: 60_000 };
    const names = Array.from({ length: 6 }, () => uniqueName('turn'));
    for (const name of names) {
      const repository = uniqueName('turns/app');
      await pushFiles(bed, repository, 'main', { 'cm.yaml': configMap(ns, name) });
      await registerDelivery(deps, bed, { name, repository, cluster: { kubeconfig }, clusterConcurrency: 2 });
    }
    const results = await Promise.all(
      names.map((name) => reconcile(name, { ...deps, runId: `run-${name}` })),
    );
    expect(results.map((r) => r.outcome)).toEqual(names.map(() => 'Succeeded'));
    expect(await queryPartition(deps.db, clusterSlotsKey(clusterKey({ kubeconfig })))).toEqual([]);
  });
});
