import type { Delivery } from '../config/index.ts';
import { KubeClient } from '../kube/client.ts';
import { impersonating } from '../kube/impersonation.ts';
import type { ReconcileDeps } from './deps.ts';

/**
 * A client for `delivery`'s cluster, as the delivery acts on it (impersonating whom it names).
 * `beforeWrite` runs before every write (a run's lease check); a read-only client takes none.
 */
export async function clusterClient(
  delivery: Pick<Delivery, 'cluster' | 'impersonate'>,
  deps: Pick<ReconcileDeps, 'connect' | 'clusterSessions'>,
  beforeWrite?: () => Promise<void>,
): Promise<KubeClient> {
  const kubeConfig = impersonating(await deps.connect(delivery.cluster), delivery.impersonate);
  return new KubeClient(kubeConfig, beforeWrite, deps.clusterSessions?.sessionFor(kubeConfig));
}
