import type { ClusterTarget } from './types.ts';

/**
 * What identifies a delivery's cluster for the concurrency limit: `eks/<region>/<name>` (with the
 * account of the role assumed for it, when one is: another account's cluster of the same name is
 * another cluster), or `kubeconfig/<path>#<context>`.
 */
export function clusterKey(cluster: ClusterTarget): string {
  if ('eks' in cluster) {
    const account = cluster.eks.roleArn?.split(':')[4];
    return `eks/${cluster.eks.region}/${cluster.eks.name}${account ? `@${account}` : ''}`;
  }
  return `kubeconfig/${cluster.kubeconfig}#${cluster.context ?? ''}`;
}
