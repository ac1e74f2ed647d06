import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { kubeconfigYaml, type Components } from '../../dev/components.ts';
import { startKubeApiServer } from '../../dev/kube-apiserver.ts';
import { stopDaemon } from '../../dev/processes.ts';
import { kubeBinaries } from '../../dev/provision.ts';

/** One local API server standing for a cluster. */
export interface SimCluster {
  readonly name: string;
  readonly kubeconfig: string;
  readonly auditLog: string;
  readonly pid: number;
}

/**
 * `count` clusters: the bed's own API server, and `count - 1` more kube-apiservers on the same
 * etcd under prefixes of their own (each a separate cluster: its own objects, CA, tokens, audit
 * log). Service IP ranges of 4,096 addresses, for a Service per delivery.
 */
export async function startClusters(
  components: Components,
  count: number,
  dir: string,
): Promise<SimCluster[]> {
  const clusters: SimCluster[] = [];
  const own = {
    name: 'cluster-1',
    kubeconfig: components.kube.kubeconfig,
    auditLog: components.kube.auditLog,
  };
  clusters.push({ ...own, pid: components.pids.kubeApiserver! });
  const binary = kubeBinaries().kubeApiserver;
  for (let i = 2; i <= count; i++) {
    const clusterDir = join(dir, `cluster-${i}`);
    mkdirSync(clusterDir, { recursive: true });
    const api = await startKubeApiServer(binary, components.etcd.url, clusterDir, {
      etcdPrefix: `/cluster-${i}`,
      serviceIpRange: `10.${i}.0.0/20`,
    });
    const kubeconfig = join(clusterDir, 'kubeconfig');
    writeFileSync(
      kubeconfig,
      kubeconfigYaml({ ...api, caData: readFileSync(api.caFile).toString('base64') }),
      { mode: 0o600 },
    );
    clusters.push({ name: `cluster-${i}`, kubeconfig, auditLog: api.auditLog, pid: api.pid });
  }
  return clusters;
}

/** Stops the API servers startClusters started (not the bed's own), by process id. */
export async function stopClusters(clusters: readonly SimCluster[], components: Components): Promise<void> {
  for (const cluster of clusters)
    if (cluster.pid !== components.pids.kubeApiserver) await stopDaemon(cluster.pid);
}
