// More local API servers, each standing for a cluster of its own: the scale bench's fleet and the
// demo's (`npm run demo -- --fleet`).
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { kubeconfigYaml, type Components } from './components.ts';
import { startKubeApiServer } from './kube-apiserver.ts';
import { allStarted, stopDaemon } from './processes.ts';
import { kubeBinaries } from './provision.ts';

/** One local API server standing for a cluster. */
export interface LocalCluster {
  readonly name: string;
  readonly server: string;
  /** base64 of the CA PEM, as in kubeconfig. */
  readonly caData: string;
  /** Bearer token of a member of system:masters. */
  readonly token: string;
  /** A kubeconfig reaching this cluster alone. */
  readonly kubeconfig: string;
  readonly auditLog: string;
  readonly pid: number;
}

/**
 * A cluster per name: the first is the components' own API server; each other is a kube-apiserver
 * on the same etcd under a prefix of its own (a separate cluster: its own objects, CA, tokens,
 * audit log), with its state in `dir/<name>`, started side by side. Service IP ranges of 4,096
 * addresses, for a Service per delivery. If one fails to start, those that did are stopped.
 */
export async function startClusters(
  components: Components,
  names: readonly string[],
  dir: string,
): Promise<LocalCluster[]> {
  const [own, ...more] = names;
  if (own === undefined) throw new Error('startClusters: name at least one cluster');
  const first: LocalCluster = {
    name: own,
    server: components.kube.server,
    caData: components.kube.caData,
    token: components.kube.token,
    kubeconfig: components.kube.kubeconfig,
    auditLog: components.kube.auditLog,
    pid: components.pids.kubeApiserver!,
  };
  const binary = kubeBinaries().kubeApiserver;
  const started: LocalCluster[] = [];
  const start = async (name: string, index: number): Promise<LocalCluster> => {
    const clusterDir = join(dir, name);
    mkdirSync(clusterDir, { recursive: true });
    const api = await startKubeApiServer(binary, components.etcd.url, clusterDir, {
      etcdPrefix: `/${name}`,
      serviceIpRange: `10.${index + 2}.0.0/20`,
      // EKS tokens reach it too, for the names writeStandInEksCluster gives it.
      eksAuthenticator: components.eks.endpoint,
    });
    const kube = { ...api, caData: readFileSync(api.caFile).toString('base64') };
    const kubeconfig = join(clusterDir, 'kubeconfig');
    writeFileSync(kubeconfig, kubeconfigYaml(kube), { mode: 0o600 });
    const cluster = { name, ...kube, kubeconfig, auditLog: api.auditLog, pid: api.pid };
    started.push(cluster);
    return cluster;
  };
  try {
    return [first, ...(await allStarted(more.map(start)))];
  } catch (error) {
    await stopClusters(started, components);
    throw error;
  }
}

/** Stops the API servers startClusters started (not the components' own), by process id. */
export async function stopClusters(clusters: readonly LocalCluster[], components: Components): Promise<void> {
  for (const cluster of clusters)
    if (cluster.pid !== components.pids.kubeApiserver) await stopDaemon(cluster.pid);
}
