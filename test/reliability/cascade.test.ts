// Pruning a CRD or a Namespace deletes what it holds. One that holds anything the run does not
// prune itself (a hand-made object, another delivery's, one the same revision applies) is kept:
// not deleted, left in the inventory, named in the status with a warning, pruned by a later run
// once it holds nothing else; the rest of the run goes on. What does go with a pruned one
// (garbage-collected dependents) counts in the mass-deletion brake. envtest runs no controller-manager: nothing is
// garbage-collected and a deleted Namespace stays Terminating, so deletion is seen as a
// deletionTimestamp, and dependents and namespace furniture are made by hand.
import type { KubernetesObject } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KubeClient } from '../../functions/core/kube/client.ts';
import { refOf } from '../../functions/core/manifests/inventory.ts';
import { deleteDelivery } from '../../functions/core/reconcile/delete.ts';
import { getDelivery } from '../../functions/core/store/deliveries.ts';
import { readInventory } from '../../functions/core/store/inventory.ts';
import { getStatus } from '../../functions/core/store/status.ts';
import { namespacedCrd } from '../support/crd.ts';
import { engineDeps, run } from '../support/deliveries.ts';
import { startKubeFaultProxy, type KubeFaultProxy } from '../support/kube-fault-proxy.ts';
import { deliveryOnOwnCluster } from '../support/own-cluster.ts';
import { createNamespace, testbed, uniqueName } from '../support/testbed.ts';

const bed = testbed();
const kc = bed.kubeConfig();
const kube = new KubeClient(kc);
const deps = engineDeps();
let proxy: KubeFaultProxy;

beforeAll(async () => {
  proxy = await startKubeFaultProxy(bed);
});
afterAll(() => proxy.close());

const REMEDY =
  'It is deleted by a later run once it holds nothing else; to delete it sooner, delete or move what ' +
  'it holds (objects this delivery applies are pruned along with it when the revision leaves them out ' +
  'too); to keep it for good, annotate it sluice.io/prune: disabled';

const namespace = (name: string) => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
const configMap = (ns: string, name: string, value = '1') => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace: ns },
  data: { value },
});
const widgetCrd = (group: string) =>
  namespacedCrd({ group, kind: 'Widget', plural: 'widgets', specProperties: { size: { type: 'integer' } } });
const widget = (group: string, ns: string, name: string) => ({
  apiVersion: `${group}/v1`,
  kind: 'Widget',
  metadata: { name, namespace: ns },
  spec: { size: 1 },
});
const deployment = (ns: string, name: string) => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name, namespace: ns },
  spec: {
    replicas: 1,
    selector: { matchLabels: { app: name } },
    template: {
      metadata: { labels: { app: name } },
      spec: { containers: [{ name: 'app', image: 'registry.k8s.io/pause:3.10' }] },
    },
  },
});
/** A ReplicaSet of `owner`, as the deployment controller would make it. */
const replicaSetOf = (owner: KubernetesObject, name: string) => {
  const app = owner.metadata!.name!;
  return {
    apiVersion: 'apps/v1',
    kind: 'ReplicaSet',
    metadata: {
      name,
      namespace: owner.metadata!.namespace,
      ownerReferences: [
        {
          apiVersion: 'apps/v1',
          kind: 'Deployment',
          name: app,
          uid: owner.metadata!.uid!,
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    },
    spec: {
      selector: { matchLabels: { app } },
      template: {
        metadata: { labels: { app } },
        spec: { containers: [{ name: 'app', image: 'registry.k8s.io/pause:3.10' }] },
      },
    },
  };
};

const read = (object: KubernetesObject) => kube.get(object);
const terminating = async (object: KubernetesObject) =>
  (await read(object))?.metadata?.deletionTimestamp !== undefined;
const inventoryIds = async (name: string) =>
  (await readInventory(deps.db, name)).map((entry) => {
    const ref = refOf(entry);
    return `${ref.kind}/${ref.namespace ? `${ref.namespace}/` : ''}${ref.name}`;
  });

const delivery = (prefix: string, spec: Record<string, unknown> = {}) =>
  deliveryOnOwnCluster(deps, bed, prefix, spec);

/** A namespace made by hand, holding one ConfigMap `keep` the delivery applies in every revision. */
async function keeper() {
  const ns = uniqueName('keep');
  await createNamespace(kc, ns);
  return configMap(ns, 'keep');
}

describe('leaving out a CRD', () => {
  it('is kept while a hand-made custom resource exists, the rest applied and pruned; pruned once none is left', async () => {
    const group = `${uniqueName('held')}.sluice.test`;
    const ns = uniqueName('crd-held');
    await createNamespace(kc, ns);
    const crd = widgetCrd(group);
    const ours = widget(group, ns, 'ours');
    const { name, push } = await delivery('crd-held');
    await push(crd, ours, configMap(ns, 'cfg', '1'));
    expect(await run(name, deps)).toMatchObject({ outcome: 'Succeeded', changes: { created: 3 } });
    const handMade = widget(group, ns, 'by-hand');
    await kube.apply(handMade);

    await push(configMap(ns, 'cfg', '2'));
    const kept = await run(name, deps);
    const container = `CustomResourceDefinition/widgets.${group}`;
    expect(kept).toMatchObject({
      outcome: 'Succeeded',
      changes: { configured: 1, deleted: 1 },
      kept: [{ container, objects: [`Widget/${ns}/by-hand`] }],
    });
    expect(kept.message).toBe(
      `Applied revision: ${kept.revision}; ${container} is kept: it holds 1 object this operation does not ` +
        `delete: Widget/${ns}/by-hand. ${REMEDY}`,
    );
    expect(await getStatus(deps.db, name)).toMatchObject({
      ready: true,
      reason: 'ReconciliationSucceeded',
      message: kept.message,
      kept: [{ container, objects: [`Widget/${ns}/by-hand`] }],
    });
    // Applied and pruned: cfg has its new value, our Widget is gone; the CRD and the hand-made one stay.
    expect(await terminating(crd)).toBe(false);
    expect(await read(ours)).toBeUndefined();
    expect(await read(handMade)).toBeDefined();
    expect((await read(configMap(ns, 'cfg'))) as unknown).toMatchObject({ data: { value: '2' } });
    expect(await inventoryIds(name)).toEqual([
      `ConfigMap/${ns}/cfg`,
      `CustomResourceDefinition/widgets.${group}`,
    ]);

    // Once the hand-made resource is gone, the CRD goes.
    await kube.delete(handMade);
    expect(await run(name, deps)).toMatchObject({ outcome: 'Succeeded', changes: { deleted: 1 } });
    expect(
      await read(crd).then((live) => live === undefined || live.metadata?.deletionTimestamp),
    ).toBeTruthy();
    expect(await inventoryIds(name)).toEqual([`ConfigMap/${ns}/cfg`]);
    expect((await getStatus(deps.db, name))?.kept).toBeUndefined();
  });

  it('prunes a CRD left out together with every resource of it, in several namespaces', async () => {
    const group = `${uniqueName('all')}.sluice.test`;
    const [a, b] = [uniqueName('crd-all'), uniqueName('crd-all')];
    await createNamespace(kc, a);
    await createNamespace(kc, b);
    const keep = await keeper();
    const crd = widgetCrd(group);
    const widgets = [widget(group, a, 'one'), widget(group, a, 'two'), widget(group, b, 'three')];
    const { name, push } = await delivery('crd-all');
    await push(crd, ...widgets, keep);
    expect(await run(name, deps)).toMatchObject({ outcome: 'Succeeded', changes: { created: 5 } });

    await push(keep);
    expect(await run(name, deps)).toMatchObject({ outcome: 'Succeeded', changes: { deleted: 4 } });
    for (const w of widgets) expect(await read(w).catch(() => undefined)).toBeUndefined();
    expect(
      await read(crd).then((live) => live === undefined || live.metadata?.deletionTimestamp),
    ).toBeTruthy();
    expect(await inventoryIds(name)).toEqual([`ConfigMap/${keep.metadata.namespace}/keep`]);
  });

  it('prunes a CRD and the Namespace holding its resources in one run (the kind goes while the Namespace is checked)', async () => {
    // The CRD and the Namespace are deleted side by side; the Namespace's last check must not trip
    // over the Widget kind that was served a moment ago. Three times: the race is not every time.
    for (let attempt = 0; attempt < 3; attempt++) {
      const group = `${uniqueName('both')}.sluice.test`;
      const ns = uniqueName('crd-ns');
      const keep = await keeper();
      const { name, push } = await delivery('crd-ns');
      await push(namespace(ns), widgetCrd(group), widget(group, ns, 'one'), keep);
      expect(await run(name, deps)).toMatchObject({ outcome: 'Succeeded', changes: { created: 4 } });
      await push(keep);
      const pruned = await run(name, deps);
      expect(pruned, pruned.message).toMatchObject({ outcome: 'Succeeded', changes: { deleted: 3 } });
      expect(await inventoryIds(name)).toEqual([`ConfigMap/${keep.metadata.namespace}/keep`]);
    }
  });

  it('is kept while the same revision still applies resources of it; they are applied', async () => {
    const group = `${uniqueName('still')}.sluice.test`;
    const ns = uniqueName('crd-still');
    await createNamespace(kc, ns);
    const crd = widgetCrd(group);
    const { name, push } = await delivery('crd-still');
    await push(crd, widget(group, ns, 'a'));
    expect(await run(name, deps)).toMatchObject({ outcome: 'Succeeded', changes: { created: 2 } });

    await push(widget(group, ns, 'a'), widget(group, ns, 'b'));
    const kept = await run(name, deps);
    expect(kept).toMatchObject({ outcome: 'Succeeded', changes: { created: 1, deleted: 0 } });
    expect(kept.message).toContain(
      `CustomResourceDefinition/widgets.${group} is kept: it holds 2 objects this operation does not ` +
        `delete: Widget/${ns}/a (in this revision), Widget/${ns}/b (in this revision). ${REMEDY}`,
    );
    expect(await read(widget(group, ns, 'b'))).toBeDefined();
    expect(await terminating(crd)).toBe(false);
  });
});

describe('leaving out a Namespace', () => {
  it('is kept while a hand-made ConfigMap lives in it; what is ours in it is pruned', async () => {
    const ns = uniqueName('ns-held');
    const keep = await keeper();
    const { name, push } = await delivery('ns-held');
    await push(namespace(ns), configMap(ns, 'ours'), keep);
    expect(await run(name, deps)).toMatchObject({ outcome: 'Succeeded', changes: { created: 3 } });
    await kube.apply(configMap(ns, 'hand-made'));

    await push(keep);
    const kept = await run(name, deps);
    expect(kept).toMatchObject({ outcome: 'Succeeded', changes: { deleted: 1 } });
    expect(kept.message).toContain(
      `Namespace/${ns} is kept: it holds 1 object this operation does not delete: ConfigMap/${ns}/hand-made`,
    );
    expect(await terminating(namespace(ns))).toBe(false);
    expect(await read(configMap(ns, 'ours'))).toBeUndefined();
    expect(await inventoryIds(name)).toContain(`Namespace/${ns}`);
  });

  it('prunes a Namespace left out with all its contents, past its furniture and the dependents of what it prunes', async () => {
    const ns = uniqueName('ns-all');
    const keep = await keeper();
    const service = {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'web', namespace: ns },
      spec: { selector: { app: 'web' }, ports: [{ port: 80 }] },
    };
    const { name, push } = await delivery('ns-all');
    await push(namespace(ns), deployment(ns, 'web'), service, configMap(ns, 'cfg'), keep);
    expect(await run(name, deps)).toMatchObject({ outcome: 'Succeeded', changes: { created: 5 } });
    // What the control plane would add: furniture, Endpoints of the Service, a ReplicaSet of the Deployment.
    const live = (await read(deployment(ns, 'web')))!;
    await kube.apply(replicaSetOf(live, 'web-5d4f8'));
    await kube.apply({
      apiVersion: 'v1',
      kind: 'ServiceAccount',
      metadata: { name: 'default', namespace: ns },
    });
    await kube.apply(configMap(ns, 'kube-root-ca.crt'));
    await kube.apply({
      apiVersion: 'v1',
      kind: 'Endpoints',
      metadata: { name: 'web', namespace: ns },
      subsets: [],
    });

    await push(keep);
    expect(await run(name, deps)).toMatchObject({ outcome: 'Succeeded', changes: { deleted: 4 } });
    expect(await terminating(namespace(ns))).toBe(true);
    expect(await read(deployment(ns, 'web'))).toBeUndefined();
    expect(await read(service)).toBeUndefined();
    expect(await inventoryIds(name)).toEqual([`ConfigMap/${keep.metadata.namespace}/keep`]);
  });

  it('counts the dependents a pruned Namespace takes with it in the mass-deletion brake', async () => {
    const ns = uniqueName('ns-brake');
    const keep = await keeper();
    const { name, push } = await delivery('ns-brake', { pruneLimit: 3 });
    await push(namespace(ns), deployment(ns, 'web'), configMap(ns, 'cfg'), keep);
    expect(await run(name, deps)).toMatchObject({ outcome: 'Succeeded', changes: { created: 4 } });
    const live = (await read(deployment(ns, 'web')))!;
    const replicaSets = [replicaSetOf(live, 'web-1'), replicaSetOf(live, 'web-2')];
    for (const rs of replicaSets) await kube.apply(rs);

    // 3 stale objects are within pruneLimit 3; with the 2 ReplicaSets they go with, 5 are not.
    await push(keep);
    const held = await run(name, deps);
    expect(held).toMatchObject({ outcome: 'Blocked', reason: 'PruneLimitExceeded' });
    expect(held.message).toContain(
      `would delete 5 of the 4 objects of delivery '${name}' (125%), more than pruneLimit 3 objects; ` +
        `nothing was applied or pruned.`,
    );
    expect(held.message).toContain(`ReplicaSet/${ns}/web-1, ReplicaSet/${ns}/web-2`);
    expect(await terminating(namespace(ns))).toBe(false);

    // Without the dependents, the same revision is within the limit.
    for (const rs of replicaSets) await kube.delete(rs);
    expect(await run(name, deps)).toMatchObject({ outcome: 'Succeeded', changes: { deleted: 3 } });
    expect(await terminating(namespace(ns))).toBe(true);
  });

  it('is kept when something moves in between the check and its deletion; the entry stays', async () => {
    const ns = uniqueName('ns-race');
    const keep = await keeper();
    const { name, push } = await delivery('ns-race');
    const viaProxy = { ...deps, connect: async () => proxy.kubeConfig() };
    await push(namespace(ns), configMap(ns, 'ours'), keep);
    expect(await run(name, viaProxy)).toMatchObject({ outcome: 'Succeeded', changes: { created: 3 } });

    // Right when the prune deletes `ours`, someone creates a ConfigMap in the namespace.
    proxy.plan({
      beforeForward: async ({ method, url }) => {
        if (method === 'DELETE' && url.startsWith(`/api/v1/namespaces/${ns}/configmaps/ours`))
          await kube.apply(configMap(ns, 'moved-in'));
      },
    });
    await push(keep);
    const kept = await run(name, viaProxy);
    proxy.plan({});
    expect(kept).toMatchObject({ outcome: 'Succeeded', changes: { deleted: 1 } });
    expect(kept.message).toBe(
      `Applied revision: ${kept.revision}; Namespace/${ns} is kept: it holds 1 object this operation does ` +
        `not delete: ConfigMap/${ns}/moved-in. ${REMEDY}`,
    );
    expect(await terminating(namespace(ns))).toBe(false);
    expect(await read(configMap(ns, 'moved-in'))).toBeDefined();
    expect(await inventoryIds(name)).toContain(`Namespace/${ns}`);

    await kube.delete(configMap(ns, 'moved-in'));
    expect(await run(name, viaProxy)).toMatchObject({ outcome: 'Succeeded' });
    expect(await terminating(namespace(ns))).toBe(true);
    expect(await inventoryIds(name)).toEqual([`ConfigMap/${keep.metadata.namespace}/keep`]);
  });
});

describe('removing a delivery', () => {
  it('deletes what is its own and keeps a Namespace that holds an object that is not', async () => {
    const ns = uniqueName('ns-remove');
    const { name, push } = await delivery('ns-remove');
    await push(namespace(ns), configMap(ns, 'ours'));
    expect(await run(name, deps)).toMatchObject({ outcome: 'Succeeded', changes: { created: 2 } });
    await kube.apply(configMap(ns, 'hand-made'));

    const removed = await deleteDelivery(name, deps);
    expect(removed).toMatchObject({
      deleted: [`${ns}_ours__ConfigMap`],
      containersKept: [
        { id: `_${ns}__Namespace`, container: `Namespace/${ns}`, objects: [`ConfigMap/${ns}/hand-made`] },
      ],
    });
    expect(await read(configMap(ns, 'ours'))).toBeUndefined();
    expect(await read(configMap(ns, 'hand-made'))).toBeDefined();
    expect(await terminating(namespace(ns))).toBe(false);
    expect(await getDelivery(deps.db, name)).toBeUndefined();
  });
});
