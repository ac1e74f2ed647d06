// The seed scenario (Flux prune walkthrough with ECR) on the real components: apply, prune,
// no-op, delete, orphan.
import {
  AppsV1Api,
  CoreV1Api,
  PolicyV1Api,
  AutoscalingV2Api,
  type KubeConfig,
} from '@kubernetes/client-node';
import { beforeAll, describe, expect, it } from 'vitest';
import { deleteDelivery } from '../../../functions/core/reconcile/delete.ts';
import { getDelivery } from '../../../functions/core/store/deliveries.ts';
import { readInventory } from '../../../functions/core/store/inventory.ts';
import { getStatus } from '../../../functions/core/store/status.ts';
import { engineDeps, pushFiles, registerDelivery, run } from '../../support/deliveries.ts';
import { writesSince } from '../../support/audit.ts';
import { createNamespace, kubeconfigCopy, testbed, uniqueName } from '../../support/testbed.ts';
import { seedManifests } from './seed-manifests.ts';

const bed = testbed();
const deps = engineDeps();

interface Snapshot {
  uid?: string;
  resourceVersion?: string;
}

async function snapshot(kc: KubeConfig, ns: string) {
  const meta = (o: { metadata?: Snapshot }) => ({
    uid: o.metadata?.uid,
    resourceVersion: o.metadata?.resourceVersion,
  });
  const tryRead = async (read: () => Promise<{ metadata?: Snapshot }>) => {
    try {
      return meta(await read());
    } catch {
      return undefined;
    }
  };
  return {
    deployment: await tryRead(() =>
      kc.makeApiClient(AppsV1Api).readNamespacedDeployment({ name: 'oddy-test-deployment', namespace: ns }),
    ),
    service: await tryRead(() =>
      kc.makeApiClient(CoreV1Api).readNamespacedService({ name: 'oddy-test-service', namespace: ns }),
    ),
    hpa: await tryRead(() =>
      kc
        .makeApiClient(AutoscalingV2Api)
        .readNamespacedHorizontalPodAutoscaler({ name: 'oddy-test-hpa', namespace: ns }),
    ),
    pdb: await tryRead(() =>
      kc
        .makeApiClient(PolicyV1Api)
        .readNamespacedPodDisruptionBudget({ name: 'oddy-test-pdb', namespace: ns }),
    ),
  };
}

describe('seed scenario: Deployment, Service, HPA, PDB from an OCI artifact', () => {
  const kc = bed.kubeConfig();
  const ns = uniqueName('seed');
  const repository = uniqueName('seed/oddy-test');
  const name = uniqueName('oddy');

  beforeAll(async () => {
    await createNamespace(kc, ns);
    await pushFiles(bed, repository, 'main', { 'app.yaml': seedManifests(ns, { withPdb: true }) });
    // A kubeconfig of its own: its removal below consults only deliveries on that "cluster".
    await registerDelivery(deps, bed, {
      name,
      repository,
      prune: true,
      cluster: { kubeconfig: kubeconfigCopy() },
    });
  });

  it("v1 applies all four objects, labelled as the delivery's, and records them", async () => {
    const result = await run(name, deps);
    expect(result).toMatchObject({ outcome: 'Succeeded', reason: 'ReconciliationSucceeded' });
    expect(result.changes).toEqual({ created: 4, configured: 0, unchanged: 0, deleted: 0 });
    expect(result.revision).toMatch(/^main@sha256:[0-9a-f]{64}$/);
    const objects = await snapshot(kc, ns);
    expect(Object.values(objects).every((o) => o?.uid)).toBe(true);
    const deployment = await kc
      .makeApiClient(AppsV1Api)
      .readNamespacedDeployment({ name: 'oddy-test-deployment', namespace: ns });
    expect(deployment.metadata?.labels).toMatchObject({ app: 'oddy-test', 'sluice.io/delivery': name });
    expect(
      deployment.metadata?.managedFields?.some((f) => f.manager === 'sluice' && f.operation === 'Apply'),
    ).toBe(true);
    const inventory = await readInventory(deps.db, name);
    expect(inventory.map((e) => e.id).sort()).toEqual(
      [
        `${ns}_oddy-test-deployment_apps_Deployment`,
        `${ns}_oddy-test-hpa_autoscaling_HorizontalPodAutoscaler`,
        `${ns}_oddy-test-pdb_policy_PodDisruptionBudget`,
        `${ns}_oddy-test-service__Service`,
      ].sort(),
    );
    const status = await getStatus(deps.db, name);
    expect(status).toMatchObject({ ready: true, lastAppliedRevision: result.revision, inventorySize: 4 });
  });

  it('a second reconcile of the same revision writes nothing to the cluster', async () => {
    const before = await snapshot(kc, ns);
    const since = new Date(Date.now() - 1).toISOString();
    const result = await run(name, deps);
    expect(result.changes).toEqual({ created: 0, configured: 0, unchanged: 4, deleted: 0 });
    expect(writesSince(bed, ns, since)).toEqual([]);
    expect(await snapshot(kc, ns)).toEqual(before);
  });

  it('v2 without the PDB prunes the PDB and leaves the other three untouched', async () => {
    const before = await snapshot(kc, ns);
    await pushFiles(bed, repository, 'main', { 'app.yaml': seedManifests(ns, { withPdb: false }) });
    const result = await run(name, deps);
    expect(result).toMatchObject({ outcome: 'Succeeded' });
    expect(result.changes).toEqual({ created: 0, configured: 0, unchanged: 3, deleted: 1 });
    const after = await snapshot(kc, ns);
    expect(after.pdb).toBeUndefined();
    expect(after.deployment).toEqual(before.deployment);
    expect(after.service).toEqual(before.service);
    expect(after.hpa).toEqual(before.hpa);
    expect((await readInventory(deps.db, name)).length).toBe(3);
  });

  it('corrects drift: a field changed by hand is set back, a deleted object is re-created', async () => {
    const apps = kc.makeApiClient(AppsV1Api);
    await apps.patchNamespacedDeployment({
      name: 'oddy-test-deployment',
      namespace: ns,
      body: [{ op: 'replace', path: '/spec/template/spec/containers/0/image', value: 'evil:latest' }],
    });
    await kc.makeApiClient(CoreV1Api).deleteNamespacedService({ name: 'oddy-test-service', namespace: ns });
    const since = new Date(Date.now() - 1).toISOString();
    const result = await run(name, deps);
    expect(result.changes).toMatchObject({ created: 1, configured: 1, unchanged: 1 });
    // The audit-log counter used by the no-op test does see sluice's writes.
    expect(writesSince(bed, ns, since).filter((w) => w.startsWith('patch')).length).toBe(2);
    const deployment = await apps.readNamespacedDeployment({ name: 'oddy-test-deployment', namespace: ns });
    expect(deployment.spec?.template.spec?.containers[0]?.image).toBe(
      'public.ecr.aws/eks-distro/kubernetes/pause:3.7',
    );
    expect((await snapshot(kc, ns)).service?.uid).toBeDefined();
  });

  it('deleting the delivery deletes what it applied and removes its records', async () => {
    const result = await deleteDelivery(name, deps);
    expect(result.policy).toBe('Delete');
    expect(result.deleted.length).toBe(3);
    expect(Object.values(await snapshot(kc, ns)).every((o) => o === undefined)).toBe(true);
    expect(await getDelivery(deps.db, name)).toBeUndefined();
    expect(await readInventory(deps.db, name)).toEqual([]);
  });
});

describe('deletionPolicy: Orphan', () => {
  it('leaves the objects in the cluster when the delivery is deleted', async () => {
    const kc = bed.kubeConfig();
    const ns = uniqueName('orphan');
    const repository = uniqueName('seed/orphan');
    const name = uniqueName('orphan');
    await createNamespace(kc, ns);
    await pushFiles(bed, repository, 'main', { 'app.yaml': seedManifests(ns, { withPdb: true }) });
    await registerDelivery(deps, bed, { name, repository, prune: true, deletionPolicy: 'Orphan' });
    expect((await run(name, deps)).outcome).toBe('Succeeded');
    const before = await snapshot(kc, ns);
    const result = await deleteDelivery(name, deps);
    expect(result).toMatchObject({ policy: 'Orphan', deleted: [] });
    expect(await snapshot(kc, ns)).toEqual(before);
    expect(await getDelivery(deps.db, name)).toBeUndefined();
  });
});
