// Removal and prune finish their job: what is ours goes, and a Namespace or CRD that holds what is
// not ours (hand-made objects, a StatefulSet's PVCs, `prune: disabled` ones) is kept, in the
// inventory, with a warning, and deleted by a later run once it holds nothing else. A removal does
// not depend on another delivery's artifact being buildable now: it uses the set that delivery's
// runs stored. envtest runs no controller-manager: a deleted Namespace stays Terminating, and the
// PVCs a StatefulSet controller would make are made here by hand.
import { CoreV1Api, type KubernetesObject } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { KubeClient } from '../../functions/core/kube/client.ts';
import { OWNER_LABEL } from '../../functions/core/manifests/objects.ts';
import { deleteDelivery } from '../../functions/core/reconcile/delete.ts';
import { diffDelivery } from '../../functions/core/reconcile/diff.ts';
import { getDelivery } from '../../functions/core/store/deliveries.ts';
import { readDesiredSet } from '../../functions/core/store/desired-set.ts';
import { listEvents } from '../../functions/core/store/events.ts';
import { readInventory } from '../../functions/core/store/inventory.ts';
import { getStatus } from '../../functions/core/store/status.ts';
import { sluice } from '../support/cli.ts';
import { namespacedCrd } from '../support/crd.ts';
import { engineDeps, pushFiles, registerDelivery, run } from '../support/deliveries.ts';
import { registerGate } from '../support/gates.ts';
import { deliveryOnOwnCluster } from '../support/own-cluster.ts';
import { createNamespace, kubeconfigCopy, testbed, uniqueName } from '../support/testbed.ts';

const bed = testbed();
const kc = bed.kubeConfig();
const kube = new KubeClient(kc);
const core = kc.makeApiClient(CoreV1Api);
const deps = engineDeps();

const yaml = (...objects: object[]) => objects.map((o) => JSON.stringify(o)).join('\n---\n');
const namespace = (name: string) => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
const configMap = (ns: string, name: string, annotations?: Record<string, string>) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace: ns, ...(annotations && { annotations }) },
  data: { value: '1' },
});
const service = (ns: string, name: string) => ({
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { name, namespace: ns },
  spec: { selector: { app: name }, ports: [{ port: 80 }] },
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
/** A PVC of StatefulSet `db`'s volumeClaimTemplate `data`, as its controller makes it (no owner). */
const pvc = (ns: string, ordinal: number) => ({
  apiVersion: 'v1',
  kind: 'PersistentVolumeClaim',
  metadata: { name: `data-db-${ordinal}`, namespace: ns, labels: { app: 'db' } },
  spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
});

const read = (object: KubernetesObject) => kube.get(object);
const gone = async (object: KubernetesObject) => {
  const live = await read(object).catch(() => undefined);
  return live === undefined || live.metadata?.deletionTimestamp !== undefined;
};
const terminating = async (object: KubernetesObject) =>
  (await read(object))?.metadata?.deletionTimestamp !== undefined;

const delivery = (prefix: string, spec: Record<string, unknown> = {}) =>
  deliveryOnOwnCluster(deps, bed, prefix, spec);

/** A namespace made by hand, holding one ConfigMap the delivery applies in every revision. */
async function keeper() {
  const ns = uniqueName('keep');
  await createNamespace(kc, ns);
  return configMap(ns, 'keep');
}

describe('unregister', () => {
  it('deletes everything of the delivery it can, keeps its Namespace holding a prune-disabled and a hand-made ConfigMap, exits 0 and says why', async () => {
    const ns = uniqueName('unreg');
    const group = `${uniqueName('unreg')}.sluice.test`;
    const role = uniqueName('unreg-role');
    const crd = namespacedCrd({
      group,
      kind: 'Widget',
      plural: 'widgets',
      specProperties: { size: { type: 'integer' } },
    });
    const widget = {
      apiVersion: `${group}/v1`,
      kind: 'Widget',
      metadata: { name: 'w', namespace: ns },
      spec: { size: 1 },
    };
    const clusterRole = {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name: role },
      rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get'] }],
    };
    const pinned = configMap(ns, 'pinned', { 'sluice.io/prune': 'disabled' });
    const ours = [deployment(ns, 'web'), service(ns, 'web'), crd, widget, clusterRole];
    const { name, push } = await delivery('unreg');
    await push(namespace(ns), ...ours, pinned);
    expect(await run(name, deps)).toMatchObject({ outcome: 'Succeeded', changes: { created: 7 } });
    const handMade = configMap(ns, 'hand-made');
    await kube.apply(handMade);

    const removed = await sluice('unregister', name);
    expect(removed.code, removed.stderr).toBe(0);
    expect(removed.stdout).toBe(
      `delivery ${name} removed; 5 objects deleted\n` +
        `  kept _${ns}__Namespace: Namespace/${ns} is kept: it holds 2 objects this operation does not delete: ` +
        `ConfigMap/${ns}/hand-made, ConfigMap/${ns}/pinned\n` +
        `  kept ${ns}_pinned__ConfigMap: annotated sluice.io/prune: disabled\n`,
    );
    for (const object of ours) expect(await gone(object), JSON.stringify(object.metadata)).toBe(true);
    expect(await terminating(namespace(ns))).toBe(false);
    expect(await read(pinned)).toBeDefined();
    expect(await read(handMade)).toBeDefined();
    expect(await getDelivery(deps.db, name)).toBeUndefined();
  });
});

describe('a revision that leaves out a Namespace holding PVCs of a StatefulSet', () => {
  it('applies, prunes the rest, keeps the Namespace with a warning, and deletes it once the PVCs are gone', async () => {
    const ns = uniqueName('pvc');
    const keep = await keeper();
    const { name, push } = await delivery('pvc');
    await push(namespace(ns), service(ns, 'db'), configMap(ns, 'cfg'), keep);
    expect(await run(name, deps)).toMatchObject({ outcome: 'Succeeded', changes: { created: 4 } });
    const claims = [pvc(ns, 0), pvc(ns, 1)];
    for (const claim of claims) await kube.apply(claim);

    await push(keep, configMap(keep.metadata.namespace, 'new'));
    const container = `Namespace/${ns}`;
    const holding = [`PersistentVolumeClaim/${ns}/data-db-0`, `PersistentVolumeClaim/${ns}/data-db-1`];
    // What a reconcile would do: prune the Service and cfg, keep the Namespace.
    const diff = await diffDelivery(name, deps);
    expect(diff.kept).toEqual([{ container, objects: holding }]);
    expect(diff.prune).toEqual([`ConfigMap/${ns}/cfg`, container, `Service/${ns}/db`]);

    const applied = await run(name, deps);
    const why =
      `${container} is kept: it holds 2 objects this operation does not delete: ${holding.join(', ')}. ` +
      'It is deleted by a later run once it holds nothing else';
    expect(applied).toMatchObject({
      outcome: 'Succeeded',
      reason: 'ReconciliationSucceeded',
      changes: { created: 1, deleted: 2 },
      kept: [{ id: `_${ns}__Namespace`, container, objects: holding }],
    });
    expect(applied.message).toContain(`Applied revision: ${applied.revision}; ${why}`);
    expect(await gone(service(ns, 'db'))).toBe(true);
    expect(await gone(configMap(ns, 'cfg'))).toBe(true);
    expect(await terminating(namespace(ns))).toBe(false);
    for (const claim of claims) expect(await read(claim)).toBeDefined();
    expect(await getStatus(deps.db, name)).toMatchObject({
      ready: true,
      message: applied.message,
      kept: [{ container, objects: holding }],
    });
    expect((await listEvents(deps.db, name))[0]).toMatchObject({
      outcome: 'Succeeded',
      type: 'Warning',
      message: applied.message,
    });
    const inventory = await readInventory(deps.db, name);
    expect(inventory.find((e) => e.id === `_${ns}__Namespace`)).toMatchObject({ v: 'v1', k: 1 });
    expect(inventory.map((e) => e.id).sort()).toEqual(
      [
        `_${ns}__Namespace`,
        `${keep.metadata.namespace}_keep__ConfigMap`,
        `${keep.metadata.namespace}_new__ConfigMap`,
      ].sort(),
    );
    const status = await sluice('status', name);
    expect(status.stdout).toContain(
      `${name}: kept ${container} (left out of the revision): it holds ${holding.join(', ')}`,
    );

    // Retried while the PVCs are there: kept again, still a success.
    expect(await run(name, deps)).toMatchObject({ outcome: 'Succeeded', kept: [{ container }] });
    expect(await terminating(namespace(ns))).toBe(false);

    // The PVCs go (their protection finalizer removed, as its controller does once no pod uses them).
    for (const claim of claims) {
      await kube.delete(claim);
      const live = await core.readNamespacedPersistentVolumeClaim({
        name: claim.metadata.name,
        namespace: ns,
      });
      live.metadata!.finalizers = [];
      await core.replaceNamespacedPersistentVolumeClaim({
        name: claim.metadata.name,
        namespace: ns,
        body: live,
      });
    }
    for (const claim of claims) expect(await read(claim)).toBeUndefined();
    const later = await run(name, deps);
    expect(later).toMatchObject({ outcome: 'Succeeded', message: `Applied revision: ${later.revision}` });
    expect(later.changes?.deleted).toBe(1);
    expect(later.kept).toBeUndefined();
    expect(await terminating(namespace(ns))).toBe(true);
    expect((await readInventory(deps.db, name)).map((e) => e.id)).not.toContain(`_${ns}__Namespace`);
    expect((await getStatus(deps.db, name))?.kept).toBeUndefined();
  });
});

describe('removal while another delivery on the cluster cannot be built', () => {
  it("uses what that delivery's last run stored (it was held by a gate), and fails, naming it and the remedy, only for one with nothing stored", async () => {
    const kubeconfig = kubeconfigCopy();
    const cluster = { kubeconfig };
    const ns = uniqueName('stored');
    const [oldRepo, newRepo] = [uniqueName('kept/old'), uniqueName('kept/new')];
    const shared = configMap(ns, 'settings');
    const onlyOld = [configMap(ns, 'old-only'), service(ns, 'web')];
    await pushFiles(bed, oldRepo, 'main', { 'all.yaml': yaml(namespace(ns), shared, ...onlyOld) });
    await pushFiles(bed, newRepo, 'main', { 'all.yaml': yaml(shared) });
    const [old, renamed, gate] = [uniqueName('old'), uniqueName('renamed'), uniqueName('hold')];
    await registerDelivery(deps, bed, { name: old, repository: oldRepo, prune: true, cluster });
    expect(await run(old, deps)).toMatchObject({ outcome: 'Succeeded', changes: { created: 4 } });
    await registerGate(deps, { name: gate, default: 'closed' });
    await registerDelivery(deps, bed, {
      name: renamed,
      repository: newRepo,
      prune: true,
      cluster,
      gates: [{ name: gate, blocks: 'all' }],
    });
    // Held by the gate, the run builds its revision anyway and stores what it desires.
    expect(await run(renamed, deps)).toMatchObject({ outcome: 'Blocked', reason: 'GateClosed' });
    expect(await readDesiredSet(deps.db, renamed)).toMatchObject({
      revision: expect.stringMatching(/^main@sha256:/),
      ids: [`${ns}_settings__ConfigMap`],
    });
    // Its artifact is now broken: it cannot be planned any more.
    await pushFiles(bed, newRepo, 'main', { 'bad.yaml': 'kind: ConfigMap\nmetadata: { name: x }\n' });

    // A delivery that never ran and cannot be built: nothing stored, so the removal cannot go on.
    const neverRan = uniqueName('never');
    const brokenRepo = uniqueName('kept/broken');
    await pushFiles(bed, brokenRepo, 'main', { 'bad.yaml': 'kind: ConfigMap\nmetadata: { name: y }\n' });
    await registerDelivery(deps, bed, { name: neverRan, repository: brokenRepo, cluster });
    await expect(deleteDelivery(old, deps)).rejects.toThrow(
      new RegExp(
        `^delivery '${old}' was not removed and none of its objects were deleted: .*delivery '${neverRan}' ` +
          `\\(oci://[^)]+\\): \\w+: bad\\.yaml: ConfigMap/y: apiVersion is missing, and no run of it has stored ` +
          `what it desires\\. Fix those deliveries' artifacts and reconcile them once \\(sluice reconcile <name>\\), ` +
          `or remove them, or set deletionPolicy: Orphan on '${old}', then try again$`,
      ),
    );
    expect(await read(onlyOld[0]!)).toBeDefined();
    await deleteDelivery(neverRan, deps);

    const removed = await deleteDelivery(old, deps);
    expect(removed.kept).toEqual([
      { id: `_${ns}__Namespace`, delivery: renamed },
      { id: `${ns}_settings__ConfigMap`, delivery: renamed },
    ]);
    expect(removed.deleted.sort()).toEqual([`${ns}_old-only__ConfigMap`, `${ns}_web__Service`]);
    for (const object of onlyOld) expect(await gone(object)).toBe(true);
    expect((await read(shared))?.metadata?.labels?.[OWNER_LABEL]).toBe(old);
    expect(await terminating(namespace(ns))).toBe(false);
    expect(await getDelivery(deps.db, old)).toBeUndefined();
  });
});

describe('the mass-deletion brake', () => {
  it('still holds a revision whose deletions of owned objects exceed pruneLimit, with a Namespace it would keep', async () => {
    const ns = uniqueName('brake');
    const keep = await keeper();
    const { name, push } = await delivery('brake', { pruneLimit: 2 });
    const ours = [configMap(ns, 'a'), configMap(ns, 'b'), configMap(ns, 'c')];
    await push(namespace(ns), ...ours, keep);
    expect(await run(name, deps)).toMatchObject({ outcome: 'Succeeded', changes: { created: 5 } });
    await kube.apply(configMap(ns, 'hand-made'));
    const inventory = await readInventory(deps.db, name);

    await push(keep);
    const held = await run(name, deps);
    expect(held).toMatchObject({ outcome: 'Blocked', reason: 'PruneLimitExceeded' });
    expect(held.message).toContain(
      `would delete 3 of the 5 objects of delivery '${name}' (60%), more than pruneLimit 2 objects; ` +
        `nothing was applied or pruned. Would delete: ConfigMap/${ns}/a, ConfigMap/${ns}/b, ConfigMap/${ns}/c.`,
    );
    for (const object of ours) expect(await read(object)).toBeDefined();
    expect(await terminating(namespace(ns))).toBe(false);
    expect(await readInventory(deps.db, name)).toEqual(inventory);
  });
});
