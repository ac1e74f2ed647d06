// The fleet of the rollout phase: deliveries of one artifact (`scale/fleet`), each into its own
// namespace, spread over the clusters, members of one rollout of three waves; and the policy that
// makes one member's cluster refuse the next revision.
import {
  AdmissionregistrationV1Api,
  AppsV1Api,
  CoreV1Api,
  KubeConfig,
  type V1Deployment,
} from '@kubernetes/client-node';
import { stringify } from 'yaml';
import { parseDelivery, parseRollout, type Rollout } from '../../functions/core/config/index.ts';
import { settleRollouts } from '../../functions/core/config/rollout-members.ts';
import { putDelivery } from '../../functions/core/store/deliveries.ts';
import { putRollout } from '../../functions/core/store/rollouts.ts';
import type { TableClient } from '../../functions/core/store/table-client.ts';
import type { Components } from '../../dev/components.ts';
import { pool } from '../apps.ts';
import { pushFiles } from '../delivery.ts';
import type { LocalCluster } from '../../dev/clusters.ts';

/** One fleet of the rollout phase: its rollout, repository and member names' prefix (one per size, so sizes share the clusters). */
export interface FleetNames {
  readonly rollout: string;
  readonly repository: string;
  readonly prefix: string;
}

/** The 1,000-member fleet keeps the names it always had; a fleet of another size is named by it. */
export const fleetNames = (members: number): FleetNames =>
  members === 1000
    ? { rollout: 'fleet', repository: 'scale/fleet', prefix: '' }
    : { rollout: `fleet-${members}`, repository: `scale/fleet-${members}`, prefix: `f${members}-` };
const TAG = 'stable';
const IMAGES = {
  v1: 'ghcr.io/stefanprodan/podinfo:6.7.0',
  v2: 'ghcr.io/stefanprodan/podinfo:6.8.0',
} as const;
export type FleetVersion = keyof typeof IMAGES;
const VERSION_LABEL = 'app.kubernetes.io/version';

/** The waves' members by name: 1 % canaries, 9 % `eu-*`, the rest `us-*` (`'*'`). */
export function fleetWaves(count: number, prefix = fleetNames(count).prefix): string[][] {
  const canaries = Math.max(1, Math.round(count * 0.01));
  const eu = Math.max(1, Math.round(count * 0.09));
  const us = count - canaries - eu;
  if (us < 1) throw new Error(`a fleet of ${count} deliveries is too small for three waves`);
  const named = (kind: string, n: number) =>
    Array.from(
      { length: n },
      (_, i) => `${prefix}${kind}-${String(i + 1).padStart(Math.max(2, String(n).length), '0')}`,
    );
  return [named('canary', canaries), named('eu', eu), named('us', us)];
}

/** The member whose cluster refuses the next revision: half-way through wave 2, past its first `maxParallel`. */
export const faultyMember = (waves: readonly (readonly string[])[]) =>
  waves[1]![Math.floor(waves[1]!.length / 2)]!;

/** Flux's benchmark shape without namespaces (each delivery's `targetNamespace` sets it), at `version`. */
export function fleetFiles(version: FleetVersion): Record<string, string> {
  const labels = { app: 'app' };
  const objects = [
    { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'app' } },
    {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'app', labels: { ...labels, [VERSION_LABEL]: version } },
      spec: {
        replicas: 0,
        selector: { matchLabels: labels },
        template: {
          metadata: { labels },
          spec: { serviceAccountName: 'app', containers: [{ name: 'app', image: IMAGES[version] }] },
        },
      },
    },
    {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'app', labels },
      spec: { selector: labels, ports: [{ port: 80, targetPort: 9898 }] },
    },
    {
      apiVersion: 'networking.k8s.io/v1',
      kind: 'Ingress',
      metadata: { name: 'app' },
      spec: {
        rules: [
          {
            http: {
              paths: [
                {
                  path: '/',
                  pathType: 'Prefix',
                  backend: { service: { name: 'app', port: { number: 80 } } },
                },
              ],
            },
          },
        ],
      },
    },
  ];
  return { 'app.yaml': objects.map((o) => stringify(o)).join('---\n') };
}

export const pushFleet = (components: Components, version: FleetVersion, fleet: FleetNames) =>
  pushFiles(components, fleet.repository, TAG, fleetFiles(version));

/** What EventBridge delivers for the push (a registry that is not ECR matches by repository). */
export const fleetPushEvent = (fleet: FleetNames) => ({
  source: 'aws.ecr' as const,
  'detail-type': 'ECR Image Action' as const,
  account: '123456789012',
  region: 'eu-west-1',
  detail: { 'action-type': 'PUSH', result: 'SUCCESS', 'repository-name': fleet.repository, 'image-tag': TAG },
});

const clusterOf = (clusters: readonly LocalCluster[], index: number) => clusters[index % clusters.length]!;
const api = <T>(cluster: LocalCluster, kind: new (...args: never[]) => T): T => {
  const config = new KubeConfig();
  config.loadFromFile(cluster.kubeconfig);
  return config.makeApiClient(kind as never) as T;
};

/**
 * Registers the fleet: a namespace per member on its cluster, the deliveries (pruning, their
 * cluster's limit), and the rollout settled against them, as the construct writes it (before the
 * members run).
 */
export async function registerFleet(
  db: TableClient,
  components: Components,
  clusters: readonly LocalCluster[],
  members: readonly string[],
  options: {
    readonly soak: string;
    readonly maxParallel: number;
    readonly clusterConcurrency: number;
    readonly fleet: FleetNames;
  },
): Promise<Rollout> {
  const { fleet } = options;
  const url = `oci://${components.registry.host}/${fleet.repository}`;
  const cores = clusters.map((cluster) => api(cluster, CoreV1Api));
  await pool(
    members.map(
      (name, i) => () => cores[i % clusters.length]!.createNamespace({ body: { metadata: { name } } }),
    ),
    8,
  );
  const deliveries = members.map((name, i) =>
    parseDelivery({
      name,
      source: { url, tag: TAG, provider: 'aws' },
      cluster: { kubeconfig: clusterOf(clusters, i).kubeconfig },
      targetNamespace: name,
      prune: true,
      clusterConcurrency: options.clusterConcurrency,
    }),
  );
  const [rollout] = settleRollouts(
    [
      parseRollout({
        name: fleet.rollout,
        source: { url, tag: TAG, provider: 'aws' },
        waves: [
          { deliveries: [`${fleet.prefix}canary-*`], soak: options.soak },
          { deliveries: [`${fleet.prefix}eu-*`], soak: options.soak },
          { deliveries: ['*'] },
        ],
        maxParallel: options.maxParallel,
        supersede: 'wait',
      }),
    ],
    deliveries,
  );
  await putRollout(db, rollout!, new Date());
  await pool(
    deliveries.map((delivery) => () => putDelivery(db, delivery, new Date())),
    8,
  );
  return rollout!;
}

/** Each member's Deployment version on its API server (undefined: not there). */
export async function liveVersions(
  clusters: readonly LocalCluster[],
  members: readonly string[],
): Promise<Map<string, string | undefined>> {
  const apps = clusters.map((cluster) => api(cluster, AppsV1Api));
  const versions = await pool(
    members.map((name, i) => async () => {
      const deployment: V1Deployment | undefined = await apps[i % clusters.length]!.readNamespacedDeployment({
        name: 'app',
        namespace: name,
      }).catch((error: unknown) => {
        if ((error as { code?: number }).code === 404) return undefined;
        throw new Error(`reading deployment app in ${name}: ${String(error)}`);
      });
      return [name, deployment?.metadata?.labels?.[VERSION_LABEL]] as const;
    }),
    16,
  );
  return new Map(versions);
}

export const POLICY_MESSAGE = 'this namespace is frozen at podinfo 6.7.0 (CVE review pending)';

/**
 * The failure: `member`'s cluster gets an admission policy (ValidatingAdmissionPolicy, no webhook)
 * that refuses any image but v1's in its namespace; resolves once the API server enforces it.
 */
export async function freezeImage(
  clusters: readonly LocalCluster[],
  members: readonly string[],
  member: string,
) {
  const cluster = clusterOf(clusters, members.indexOf(member));
  const admission = api(cluster, AdmissionregistrationV1Api);
  const policy = `image-freeze-${member}`;
  await admission.createValidatingAdmissionPolicy({
    body: {
      metadata: { name: policy },
      spec: {
        failurePolicy: 'Fail',
        matchConstraints: {
          resourceRules: [
            {
              apiGroups: ['apps'],
              apiVersions: ['v1'],
              operations: ['CREATE', 'UPDATE'],
              resources: ['deployments'],
            },
          ],
        },
        validations: [
          {
            expression: `object.spec.template.spec.containers.all(c, c.image == '${IMAGES.v1}')`,
            message: POLICY_MESSAGE,
          },
        ],
      },
    },
  });
  await admission.createValidatingAdmissionPolicyBinding({
    body: {
      metadata: { name: policy },
      spec: {
        policyName: policy,
        validationActions: ['Deny'],
        matchResources: { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': member } } },
      },
    },
  });
  // The API server loads policies from an informer: wait until a dry run of v2 is refused.
  const apps = api(cluster, AppsV1Api);
  const probe = {
    metadata: { name: 'policy-probe' },
    spec: {
      selector: { matchLabels: { app: 'probe' } },
      template: {
        metadata: { labels: { app: 'probe' } },
        spec: { containers: [{ name: 'app', image: IMAGES.v2 }] },
      },
    },
  };
  for (let attempt = 0; ; attempt++) {
    const refused = await apps
      .createNamespacedDeployment({ namespace: member, body: probe, dryRun: 'All' })
      .then(() => false)
      .catch((error: unknown) => String(error).includes('frozen'));
    if (refused) return { cluster: cluster.name, policy };
    if (attempt > 100) throw new Error(`policy ${policy} on ${cluster.name} is not enforced after 20 s`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}
