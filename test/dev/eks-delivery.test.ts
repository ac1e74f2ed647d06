// A delivery on `{ eks: { name, region } }`, reconciled with the engine's own dependencies
// (reconcileDepsFromEnvironment: the SDK's EKS client, the caller's credentials from the
// environment, as in the deployed function) against the local components' EKS stand-ins.
import { readFileSync } from 'node:fs';
import { CoreV1Api } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { LOCAL_EKS_CLUSTER } from '../../dev/components.ts';
import { writeStandInEksCluster } from '../../dev/eks-clusters.ts';
import { getStatus } from '../../functions/core/store/status.ts';
import { engineDeps, pushFiles, registerDelivery, run } from '../support/deliveries.ts';
import { createNamespace, testbed, uniqueName } from '../support/testbed.ts';

const bed = testbed();
const configMap = (ns: string) =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\n  namespace: ${ns}\ndata:\n  v: "one"\n`;

/** Who made the requests that wrote in `ns`, from the API server's audit log. */
const writersIn = (ns: string): string[] => [
  ...new Set(
    readFileSync(bed.kube.auditLog, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map(
        (line) =>
          JSON.parse(line) as {
            verb: string;
            objectRef?: { namespace?: string };
            user: { username: string };
          },
      )
      .filter((e) => e.objectRef?.namespace === ns && ['create', 'patch', 'update'].includes(e.verb))
      .map((e) => e.user.username),
  ),
];

describe('a delivery on { eks: { name, region } } with the local components', () => {
  it('is applied through DescribeCluster and an EKS token, as the local key pair its access entry maps', async () => {
    const ns = uniqueName('eks-delivery');
    const name = uniqueName('eks-delivery');
    const repository = `eks/${ns}`;
    await createNamespace(bed.kubeConfig(), ns);
    await pushFiles(bed, repository, 'main', { 'cm.yaml': configMap(ns) });
    const deps = engineDeps();
    await registerDelivery(deps, bed, {
      name,
      repository,
      cluster: { eks: { name: LOCAL_EKS_CLUSTER, region: bed.region } },
    });

    expect((await run(name, deps)).outcome).toBe('Succeeded');
    const applied = await bed
      .kubeConfig()
      .makeApiClient(CoreV1Api)
      .readNamespacedConfigMap({ name: 'app', namespace: ns });
    expect(applied.data).toEqual({ v: 'one' });
    expect(writersIn(ns)).toEqual(['arn:aws:iam::000000000000:user/local']);
  });

  it('fails, changing nothing, on a cluster where the caller has no access entry', async () => {
    const ns = uniqueName('eks-denied');
    const name = uniqueName('eks-denied');
    const repository = `eks/${ns}`;
    const cluster = uniqueName('eks-no-entry');
    writeStandInEksCluster(bed.eks.clustersDir, cluster, {
      endpoint: bed.kube.server,
      caData: bed.kube.caData,
      region: bed.region,
    });
    await createNamespace(bed.kubeConfig(), ns);
    await pushFiles(bed, repository, 'main', { 'cm.yaml': configMap(ns) });
    const deps = engineDeps();
    await registerDelivery(deps, bed, {
      name,
      repository,
      cluster: { eks: { name: cluster, region: bed.region } },
    });

    expect((await run(name, deps)).outcome).not.toBe('Succeeded');
    expect(JSON.stringify(await getStatus(deps.db, name))).toMatch(/Unauthorized|401/);
    expect(writersIn(ns)).toEqual([]);
  });
});
