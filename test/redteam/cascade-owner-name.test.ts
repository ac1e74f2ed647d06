// Red team: "A CRD or Namespace is never deleted while it holds anything the operation does not
// itself delete." findCascade (kube/cascade.ts) counts an object in a pruned Namespace as a
// garbage-collected dependent when its owner is in the stale set *by name* (ownerGoes, for an
// owner not held in the Namespace: a cluster-scoped one), without asking whether the prune will
// actually delete that owner. An owner the prune keeps (`sluice.io/prune: disabled`, or a
// Namespace/CRD the cascade itself keeps) does not go, so GC never takes the dependent: only the
// Namespace deletion does. The pusher sets the annotation on its own ClusterRole in one revision
// and leaves both out in the next: the Namespace, holding a hand-made ConfigMap, is deleted.
import { CoreV1Api, RbacAuthorizationV1Api } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { engineDeps, pushFiles, registerDelivery, run } from '../support/deliveries.ts';
import { createNamespace, kubeconfigCopy, testbed, uniqueName } from '../support/testbed.ts';

const bed = testbed();
const kc = bed.kubeConfig();
const core = kc.makeApiClient(CoreV1Api);
const rbac = kc.makeApiClient(RbacAuthorizationV1Api);
const deps = engineDeps();

const cm = (ns: string, name: string) =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\n  namespace: ${ns}\ndata:\n  k: v\n`;

async function setup(prefix: string) {
  const keep = uniqueName(`${prefix}-keep`);
  await createNamespace(kc, keep);
  const name = uniqueName(prefix);
  const repository = uniqueName(`redteam/${prefix}`);
  await registerDelivery(deps, bed, {
    name,
    repository,
    prune: true,
    cluster: { kubeconfig: kubeconfigCopy() },
  });
  const fillers = Array.from({ length: 8 }, (_, i) => cm(keep, `filler-${i}`));
  return {
    name,
    fillers,
    push: (docs: string[]) => pushFiles(bed, repository, 'main', { 'all.yaml': docs.join('---\n') }),
  };
}

describe('a Namespace holding an object whose cluster-scoped owner the prune keeps', () => {
  it('owner annotated sluice.io/prune: disabled: the Namespace is kept', async () => {
    const { name, fillers, push } = await setup('rt-casc');
    const ns = uniqueName('rt-casc-ns');
    const role = uniqueName('rt-casc-role');
    const namespace = `apiVersion: v1\nkind: Namespace\nmetadata:\n  name: ${ns}\n`;
    const clusterRole = `apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: ${role}\n  annotations:\n    sluice.io/prune: disabled\nrules: []\n`;
    await push([namespace, clusterRole, cm(ns, 'own'), ...fillers]);
    expect((await run(name, deps)).outcome).toBe('Succeeded');

    // Made by hand (or by an operator): a ConfigMap in the Namespace, owned by the ClusterRole.
    const live = await rbac.readClusterRole({ name: role });
    await core.createNamespacedConfigMap({
      namespace: ns,
      body: {
        metadata: {
          name: 'hand-made',
          ownerReferences: [
            {
              apiVersion: 'rbac.authorization.k8s.io/v1',
              kind: 'ClusterRole',
              name: role,
              uid: live.metadata!.uid!,
            },
          ],
        },
        data: { precious: 'yes' },
      },
    });

    // The next revision leaves out the Namespace, its ConfigMap and the (prune: disabled) ClusterRole.
    await push(fillers);
    const result = await run(name, deps);

    // The ClusterRole stays (prune: disabled), so GC would never take the hand-made ConfigMap...
    expect((await rbac.readClusterRole({ name: role })).metadata?.name).toBe(role);
    // ...so the Namespace must be kept, not deleted with it.
    const after = await core.readNamespace({ name: ns });
    expect({
      outcome: result.outcome,
      namespaceDeleted: after.metadata?.deletionTimestamp !== undefined,
    }).toEqual({ outcome: 'Succeeded', namespaceDeleted: false });
  });

  it('owner is a Namespace the cascade itself keeps: the other Namespace is kept', async () => {
    const { name, fillers, push } = await setup('rt-casc2');
    const ns = uniqueName('rt-casc2-ns');
    const holder = uniqueName('rt-casc2-holder');
    const namespace = (n: string) => `apiVersion: v1\nkind: Namespace\nmetadata:\n  name: ${n}\n`;
    await push([namespace(ns), namespace(holder), cm(ns, 'own'), ...fillers]);
    expect((await run(name, deps)).outcome).toBe('Succeeded');

    // Hand-made: something in `holder` (so the cascade keeps it), and in `ns` a ConfigMap owned by `holder`.
    await core.createNamespacedConfigMap({ namespace: holder, body: { metadata: { name: 'pvc-like' } } });
    const holderUid = (await core.readNamespace({ name: holder })).metadata!.uid!;
    await core.createNamespacedConfigMap({
      namespace: ns,
      body: {
        metadata: {
          name: 'hand-made',
          ownerReferences: [{ apiVersion: 'v1', kind: 'Namespace', name: holder, uid: holderUid }],
        },
        data: { precious: 'yes' },
      },
    });

    await push(fillers);
    const result = await run(name, deps);
    const holderAfter = await core.readNamespace({ name: holder });
    expect(holderAfter.metadata?.deletionTimestamp).toBeUndefined(); // kept, as documented
    const after = await core.readNamespace({ name: ns });
    expect({
      outcome: result.outcome,
      namespaceDeleted: after.metadata?.deletionTimestamp !== undefined,
    }).toEqual({ outcome: 'Succeeded', namespaceDeleted: false });
  });
});
