// A reconcile killed after a random number of API writes (kube and DynamoDB both gone, as when a
// Lambda dies), or hit by random 5xx, hang-ups, timeouts and lost answers: at the kill point every
// object labelled for the delivery is in its inventory, and the next run converges with no
// orphans and no wrongful deletions. Ten fixed seeds here; `npm run soak` runs many random ones.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startKubeFaultProxy, type KubeFaultProxy } from '../support/kube-fault-proxy.ts';
import { runKillScenario, scenarioDeps } from '../support/kill-scenario.ts';
import { testbed } from '../support/testbed.ts';

const bed = testbed();
let proxy: KubeFaultProxy;

beforeAll(async () => {
  proxy = await startKubeFaultProxy(bed);
});
afterAll(() => proxy.close());

const SEEDS = [11, 23, 37, 41, 53, 67, 71, 89, 97, 101];

describe('a reconcile killed mid-way', () => {
  it.each(SEEDS)(
    'seed %i: no orphans at the kill point, the next run converges, nothing wrongly deleted',
    async (seed) => {
      const report = await runKillScenario(
        { bed, proxy, kubeConfig: bed.kubeConfig(), deps: scenarioDeps(bed) },
        seed,
      );
      expect(report, JSON.stringify(report, null, 2)).toMatchObject({
        orphansAtKill: [],
        orphans: [],
        wrongfulDeletions: [],
        converged: true,
      });
    },
  );
});
