// Red team: `sluice.io/force: enabled` on a CustomResourceDefinition. dryRun/applyOne
// (kube/apply.ts) recreate an owned object whose change is refused as immutable by deleting it and
// applying it again; the cascade check (kube/cascade.ts) guards only the prune of stale CRDs and
// Namespaces, never a recreation. Deleting a CRD deletes every object of its kind in the cluster:
// another delivery's and hand-made ones. The pusher of the delivery that owns the CRD changes an
// immutable field (its scope) and annotates it force: every custom resource of that kind is gone.
import { CustomObjectsApi } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { OWNER_LABEL } from '../../functions/core/manifests/objects.ts';
import { namespacedCrd } from '../support/crd.ts';
import { engineDeps, pushFiles, registerDelivery, run } from '../support/deliveries.ts';
import { createNamespace, kubeconfigCopy, testbed, uniqueName } from '../support/testbed.ts';

const bed = testbed();
const kc = bed.kubeConfig();
const custom = kc.makeApiClient(CustomObjectsApi);
const deps = engineDeps();

describe('sluice.io/force on a CRD whose change is immutable', () => {
  it('does not delete (with it) the custom resources of other deliveries and hand-made ones', async () => {
    const ns = uniqueName('rt-force');
    await createNamespace(kc, ns);
    const cluster = { kubeconfig: kubeconfigCopy() };
    const group = `${uniqueName('rt')}.example.com`;
    const plural = 'gizmos';
    const crd = namespacedCrd({
      group,
      kind: 'Gizmo',
      plural,
      specProperties: { size: { type: 'integer' } },
    });
    const withForce = (scope: string) =>
      JSON.stringify({
        ...crd,
        metadata: { ...crd.metadata, annotations: { 'sluice.io/force': 'enabled' } },
        spec: { ...crd.spec, scope },
      });

    // Delivery "platform" (the attacker pushes here) owns the CRD.
    const platform = uniqueName('rt-platform');
    const platformRepo = uniqueName('redteam/platform');
    await registerDelivery(deps, bed, { name: platform, repository: platformRepo, prune: true, cluster });
    await pushFiles(bed, platformRepo, 'main', { 'crd.json': withForce('Namespaced') });
    expect((await run(platform, deps)).outcome).toBe('Succeeded');

    // Delivery "app" (someone else's) owns a Gizmo; another Gizmo is made by hand.
    const app = uniqueName('rt-app');
    const appRepo = uniqueName('redteam/app');
    await registerDelivery(deps, bed, { name: app, repository: appRepo, prune: true, cluster });
    await pushFiles(bed, appRepo, 'main', {
      'gizmo.yaml': `apiVersion: ${group}/v1\nkind: Gizmo\nmetadata:\n  name: apps\n  namespace: ${ns}\nspec:\n  size: 1\n`,
    });
    expect((await run(app, deps)).outcome).toBe('Succeeded');
    await custom.createNamespacedCustomObject({
      group,
      version: 'v1',
      namespace: ns,
      plural,
      body: { apiVersion: `${group}/v1`, kind: 'Gizmo', metadata: { name: 'hand-made' }, spec: { size: 2 } },
    });

    // The attack: an immutable change (scope) with force.
    await pushFiles(bed, platformRepo, 'main', { 'crd.json': withForce('Cluster') });
    const result = await run(platform, deps);

    const names = async () => {
      try {
        // All namespaces (works whatever the CRD's scope is now).
        const list = (await custom.listClusterCustomObject({ group, version: 'v1', plural })) as {
          items: { metadata: { name: string; labels?: Record<string, string> } }[];
        };
        return list.items
          .map((item) => `${item.metadata.name}:${item.metadata.labels?.[OWNER_LABEL] ?? '-'}`)
          .sort();
      } catch (error) {
        return [`cannot list: ${(error as Error).message.slice(0, 80)}`];
      }
    };
    // Secure behaviour: the other delivery's and the hand-made Gizmo are still there.
    expect({ outcome: result.outcome, gizmos: await names() }).toMatchObject({
      gizmos: [`apps:${app}`, 'hand-made:-'],
    });
  });
});
