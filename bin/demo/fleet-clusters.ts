// The fleet demo's three clusters as a user sees them (kubectl on each) and as the demo checks them.
import { AppsV1Api, KubeConfig } from '@kubernetes/client-node';
import { CLUSTERS, FLEET_NAMESPACE, type ClusterName } from './fleet-app.ts';
import { check, commandLine, shell } from './narrate.ts';

const COLUMNS = [
  'DELIVERY:.metadata.labels.sluice\\.io/delivery',
  'IMAGE:.spec.template.spec.containers[0].image',
  'MEMORY:.spec.template.spec.containers[0].resources.limits.memory',
].join(',');

/** `kubectl --context <cluster> get deployment web` on each cluster. */
export async function showClusters(kubectl: string): Promise<void> {
  for (const cluster of CLUSTERS)
    await kubectlOn(kubectl, cluster, [
      'get',
      'deployment',
      'web',
      '-n',
      FLEET_NAMESPACE,
      '-o',
      `custom-columns=${COLUMNS}`,
    ]);
}

/** `kubectl --context <cluster> …`, shown as typed. */
export function kubectlOn(kubectl: string, cluster: string, args: readonly string[]) {
  const all = ['--context', cluster, ...args];
  return shell(kubectl, all, commandLine('kubectl', all));
}

/** The image web runs in each cluster (undefined where there is no Deployment), read from its API server. */
export async function imagesByCluster(kubeconfig: string): Promise<Record<ClusterName, string | undefined>> {
  const images = {} as Record<ClusterName, string | undefined>;
  for (const cluster of CLUSTERS) {
    const kc = new KubeConfig();
    kc.loadFromFile(kubeconfig);
    kc.setCurrentContext(cluster);
    const deployment = await kc
      .makeApiClient(AppsV1Api)
      .readNamespacedDeployment({ name: 'web', namespace: FLEET_NAMESPACE })
      .catch(() => undefined);
    images[cluster] = deployment?.spec?.template.spec?.containers[0]?.image;
  }
  return images;
}

/** Checks that each cluster runs the image given for it. */
export async function checkImages(
  kubeconfig: string,
  expected: Record<ClusterName, string>,
  what: string,
): Promise<void> {
  const images = await imagesByCluster(kubeconfig);
  const wrong = CLUSTERS.filter((cluster) => images[cluster] !== expected[cluster]);
  check(
    wrong.length === 0,
    what,
    wrong.map((c) => `${c} runs ${images[c] ?? 'nothing'}, not ${expected[c]}`).join('; '),
  );
}
