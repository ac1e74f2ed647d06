// The values of the Secrets a delivery owns, learned for its taint when a message that may quote
// the API server is about to be written: an admission policy may quote a Secret an earlier run
// applied, which this run neither decrypted nor holds in its revision. Read from the cluster by
// the inventory (they are ours), never stored: the table holds no plaintext.
import type { Delivery } from '../config/index.ts';
import { refOf } from '../manifests/inventory.ts';
import { forEachBounded } from '../pacer.ts';
import { readInventory } from '../store/inventory.ts';
import type { Taint } from '../taint.ts';
import { clusterClient } from './cluster-client.ts';
import type { ReconcileDeps } from './deps.ts';

/** How many Secrets are read at once. */
const CONCURRENCY = 8;

/** Teaches `taint` the values of the Secrets in `delivery`'s inventory, once, when it is asked to. */
export function learnOwnedSecrets(
  taint: Taint,
  delivery: Pick<Delivery, 'name' | 'cluster' | 'impersonate'>,
  deps: Pick<ReconcileDeps, 'db' | 'connect' | 'clusterSessions'>,
): void {
  taint.learnWith(async () => {
    const secrets = (await readInventory(deps.db, delivery.name))
      .map((entry) => refOf(entry))
      .filter((ref) => ref.kind === 'Secret' && ref.group === '');
    if (secrets.length === 0) return;
    const kube = await clusterClient(delivery, deps);
    await forEachBounded(secrets, CONCURRENCY, async (ref) => {
      const live = await kube.get({
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: ref.name, namespace: ref.namespace },
      });
      taint.addSecret(live);
    });
  });
}
