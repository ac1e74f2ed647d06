import type { Components } from '../../dev/components.ts';
import type { ReconcileDeps } from '../../functions/core/reconcile/deps.ts';
import { pushFiles, registerDelivery } from './deliveries.ts';
import { kubeconfigCopy, uniqueName } from './testbed.ts';

/**
 * Registers a pruning delivery (`deletionPolicy: Delete`) on a cluster of its own (a kubeconfig
 * copy: a removal plans every other delivery on the same cluster, see shared-objects.ts), with
 * `push` to publish its next revision as one YAML file of `objects`.
 */
export async function deliveryOnOwnCluster(
  deps: ReconcileDeps,
  bed: Components,
  prefix: string,
  spec: Record<string, unknown> = {},
) {
  const name = uniqueName(prefix);
  const repository = uniqueName(`own/${prefix}`);
  const cluster = { kubeconfig: kubeconfigCopy() };
  await registerDelivery(deps, bed, {
    name,
    repository,
    prune: true,
    deletionPolicy: 'Delete',
    cluster,
    ...spec,
  });
  const push = (...objects: object[]) =>
    pushFiles(bed, repository, 'main', {
      'all.yaml': objects.map((o) => JSON.stringify(o)).join('\n---\n'),
    });
  return { name, push };
}
