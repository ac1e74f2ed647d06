// Prune reaches every object it inventoried, whatever its name or the version it was applied in:
// RBAC names with `_` (ids parsed as cli-utils parses them), custom resources whose CRD moved to
// another version, and kinds that went away; an object is reported deleted only when the API
// server confirmed it, and one whose kind may still exist stays in the inventory with an error.
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { KubeClient } from '../../functions/core/kube/client.ts';
import { pruneEntries } from '../../functions/core/kube/prune.ts';
import { entryFor, refOf } from '../../functions/core/manifests/inventory.ts';
import { OWNER_LABEL } from '../../functions/core/manifests/objects.ts';
import { deleteDelivery } from '../../functions/core/reconcile/delete.ts';
import { readInventory } from '../../functions/core/store/inventory.ts';
import { engineDeps, pushFiles, registerDelivery, run } from '../support/deliveries.ts';
import { createNamespace, kubeconfigCopy, testbed, uniqueName } from '../support/testbed.ts';

const bed = testbed();
const kc = bed.kubeConfig();
const kube = new KubeClient(kc);
const deps = engineDeps();

const RBAC = 'rbac.authorization.k8s.io/v1';
const exists = async (apiVersion: string, kind: string, name: string, namespace?: string) =>
  (await kube.get({ apiVersion, kind, metadata: { name, namespace } })) !== undefined;
const inventoryIds = async (name: string) =>
  (await readInventory(deps.db, name)).map((entry) => entry.id).sort();
const inventoryNames = async (name: string) =>
  (await readInventory(deps.db, name)).map((entry) => refOf(entry).name).sort();

async function delivery(prefix: string) {
  const name = uniqueName(prefix);
  const repository = uniqueName(`prune-kinds/${prefix}`);
  // A cluster of its own: removal plans every other delivery on the same cluster (see shared-objects).
  const cluster = { kubeconfig: kubeconfigCopy() };
  await registerDelivery(deps, bed, { name, repository, prune: true, deletionPolicy: 'Delete', cluster });
  const push = (files: Record<string, string>) => pushFiles(bed, repository, 'main', files);
  return { name, push };
}

describe('objects whose names contain `_`', () => {
  /** A cluster-admin ClusterRoleBinding and a Role with `_` in their names, and a ConfigMap. */
  const rbac = (ns: string) => {
    const tag = randomBytes(3).toString('hex');
    const bindingName = `ci_admin_x_${tag}`;
    const roleName = `read_all_${tag}`;
    const ids = [
      `_${bindingName}_rbac.authorization.k8s.io_ClusterRoleBinding`,
      `${ns}_${roleName}_rbac.authorization.k8s.io_Role`,
      `${ns}_keep__ConfigMap`,
    ].sort();
    return {
      bindingName,
      roleName,
      ids,
      files: (withRbac: boolean) => files(ns, bindingName, roleName, withRbac),
    };
  };
  const files = (ns: string, bindingName: string, roleName: string, withRbac: boolean) => ({
    'cm.yaml': `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: keep\n  namespace: ${ns}\n`,
    ...(withRbac && {
      'rbac.yaml': `apiVersion: ${RBAC}
kind: ClusterRoleBinding
metadata:
  name: ${bindingName}
roleRef: { apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: cluster-admin }
subjects: [{ kind: ServiceAccount, name: ci, namespace: ${ns} }]
---
apiVersion: ${RBAC}
kind: Role
metadata:
  name: ${roleName}
  namespace: ${ns}
rules: [{ apiGroups: [''], resources: [configmaps], verbs: [get, list] }]
`,
    }),
  });

  it('are pruned when they leave the artifact', async () => {
    const ns = uniqueName('rbac');
    await createNamespace(kc, ns);
    const { bindingName, roleName, ids, files } = rbac(ns);
    const { name, push } = await delivery('rbac');
    await push(files(true));
    expect(await run(name, deps)).toMatchObject({ outcome: 'Succeeded', changes: { created: 3 } });
    expect(await inventoryIds(name)).toEqual(ids);

    await push(files(false));
    expect(await run(name, deps)).toMatchObject({ outcome: 'Succeeded', changes: { deleted: 2 } });
    expect(await exists(RBAC, 'ClusterRoleBinding', bindingName)).toBe(false);
    expect(await exists(RBAC, 'Role', roleName, ns)).toBe(false);
    expect(await inventoryIds(name)).toEqual([`${ns}_keep__ConfigMap`]);
  });

  it('are deleted with their delivery', async () => {
    const ns = uniqueName('rbac-rm');
    await createNamespace(kc, ns);
    const { bindingName, roleName, ids, files } = rbac(ns);
    const { name, push } = await delivery('rbac-rm');
    await push(files(true));
    expect(await run(name, deps)).toMatchObject({ outcome: 'Succeeded', changes: { created: 3 } });

    const removed = await deleteDelivery(name, deps);
    expect(removed.deleted.sort()).toEqual(ids);
    expect(await exists(RBAC, 'ClusterRoleBinding', bindingName)).toBe(false);
    expect(await exists(RBAC, 'Role', roleName, ns)).toBe(false);
    expect(await exists('v1', 'ConfigMap', 'keep', ns)).toBe(false);
  });
});

/** A CRD of kind Widget whose `versions` are given as [name, served, storage]. */
const widgetCrd = (
  group: string,
  versions: readonly [string, boolean, boolean][],
) => `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.${group}
spec:
  group: ${group}
  scope: Namespaced
  names: { plural: widgets, singular: widget, kind: Widget }
  versions:
${versions
  .map(
    ([version, served, storage]) => `    - name: ${version}
      served: ${served}
      storage: ${storage}
      schema:
        openAPIV3Schema:
          type: object
          properties:
            spec: { type: object, properties: { size: { type: integer } } }
`,
  )
  .join('')}`;

const widget = (group: string, version: string, ns: string, name: string) =>
  `apiVersion: ${group}/${version}\nkind: Widget\nmetadata:\n  name: ${name}\n  namespace: ${ns}\nspec:\n  size: 1\n`;

describe('kinds that moved to another version or went away', () => {
  it('prunes an object applied as v1alpha1 once its CRD serves only v1', async () => {
    const group = `${uniqueName('moved')}.sluice.test`;
    const ns = uniqueName('moved');
    await createNamespace(kc, ns);
    const { name, push } = await delivery('moved');
    await push({
      'crd.yaml': widgetCrd(group, [['v1alpha1', true, true]]),
      'widgets.yaml': [widget(group, 'v1alpha1', ns, 'old'), widget(group, 'v1alpha1', ns, 'kept')].join(
        '---\n',
      ),
    });
    expect(await run(name, deps)).toMatchObject({ outcome: 'Succeeded', changes: { created: 3 } });

    // The next revision stops serving v1alpha1 (storage moves to v1) and leaves `old` out.
    await push({
      'crd.yaml': widgetCrd(group, [
        ['v1alpha1', false, false],
        ['v1', true, true],
      ]),
      'widgets.yaml': widget(group, 'v1', ns, 'kept'),
    });
    expect(await run(name, deps)).toMatchObject({ outcome: 'Succeeded', changes: { deleted: 1 } });
    expect(await exists(`${group}/v1`, 'Widget', 'old', ns)).toBe(false);
    expect(await exists(`${group}/v1`, 'Widget', 'kept', ns)).toBe(true);
    expect(await inventoryNames(name)).toEqual(['kept', `widgets.${group}`].sort());
  });

  it('drops an entry whose kind nothing defines any more, deleting nothing for it', async () => {
    const group = `${uniqueName('gone')}.sluice.test`;
    const ns = uniqueName('gone');
    await createNamespace(kc, ns);
    const { name, push } = await delivery('gone');
    await push({
      'crd.yaml': widgetCrd(group, [['v1', true, true]]),
      'widgets.yaml': widget(group, 'v1', ns, 'w'),
      'cm.yaml': `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: keep\n  namespace: ${ns}\n`,
    });
    expect(await run(name, deps)).toMatchObject({ outcome: 'Succeeded', changes: { created: 3 } });
    // Someone deletes the CRD, and with it the kind and its objects.
    await kube.delete({
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: `widgets.${group}` },
    });
    await expect
      .poll(() => exists('apiextensions.k8s.io/v1', 'CustomResourceDefinition', `widgets.${group}`), {
        timeout: 20_000,
      })
      .toBe(false);
    const served = () => {
      kube.forgetDiscovery();
      return kube.servedVersions(group, 'Widget');
    };
    await expect.poll(served, { timeout: 20_000 }).toEqual([]);

    await push({
      'cm.yaml': `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: keep\n  namespace: ${ns}\n`,
    });
    // The CRD: confirmed NotFound. The Widget: gone with its kind, not counted as deleted by this run.
    expect(await run(name, deps)).toMatchObject({ outcome: 'Succeeded', changes: { deleted: 1 } });
    expect(await inventoryNames(name)).toEqual(['keep']);
  });

  it('fails, naming the object and its CRD, while a CRD defines the kind but serves no version; the entry stays', async () => {
    const group = `${uniqueName('unserved')}.sluice.test`;
    const ns = uniqueName('unserved');
    await createNamespace(kc, ns);
    const { name, push } = await delivery('unserved');
    await push({
      'crd.yaml': widgetCrd(group, [['v1', true, true]]),
      'widgets.yaml': widget(group, 'v1', ns, 'w'),
    });
    expect(await run(name, deps)).toMatchObject({ outcome: 'Succeeded', changes: { created: 2 } });

    // The next revision keeps the CRD but serves none of its versions, and leaves the Widget out.
    await push({ 'crd.yaml': widgetCrd(group, [['v1', false, true]]) });
    const failed = await run(name, deps);
    expect(failed).toMatchObject({ outcome: 'Failed', reason: 'PruneFailed' });
    expect(failed.message).toBe(
      `could not delete Widget/${ns}/w: no version of Widget (group ${group}) is served, but ` +
        `CustomResourceDefinition/widgets.${group} still defines it, so its objects may still exist: ` +
        `serve a version of it, or delete the CRD, for the prune to go on`,
    );
    expect(await inventoryNames(name)).toEqual(['w', `widgets.${group}`].sort());

    // Serving it again lets the prune finish.
    await push({ 'crd.yaml': widgetCrd(group, [['v1', true, true]]) });
    expect(await run(name, deps)).toMatchObject({ outcome: 'Succeeded', changes: { deleted: 1 } });
    expect(await exists(`${group}/v1`, 'Widget', 'w', ns)).toBe(false);
    expect(await inventoryNames(name)).toEqual([`widgets.${group}`]);
  });

  it('refuses an inventory entry it cannot parse, naming it, and deletes nothing', async () => {
    const ns = uniqueName('unparsable');
    await createNamespace(kc, ns);
    const delivery = uniqueName('d');
    const cm = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'stale', namespace: ns, labels: { [OWNER_LABEL]: delivery } },
    };
    await kube.apply(cm);
    await expect(
      pruneEntries({ kube, owner: delivery, entries: [entryFor(cm), { id: `${ns}_broken`, v: 'v1' }] }),
    ).rejects.toThrow(
      `nothing was pruned: inventory entry '${ns}_broken' (version 'v1') cannot be parsed: expected <namespace>_<name>_<group>_<kind>`,
    );
    expect(await exists('v1', 'ConfigMap', 'stale', ns)).toBe(true);
  });
});
