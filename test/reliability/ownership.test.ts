import { systemClock } from '../../functions/core/clock.ts';
// Never delete or take what is not ours: an object another registered delivery owns is not taken
// over without `sluice.io/takeover-from`, and `sluice.io/force` recreates only our own objects,
// counted by the mass-deletion brake.
import { CoreV1Api, type KubernetesObject } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { KubeClient } from '../../functions/core/kube/client.ts';
import { waitForCrdsEstablished } from '../../functions/core/kube/wait.ts';
import { OWNER_LABEL } from '../../functions/core/manifests/objects.ts';
import { deleteDelivery } from '../../functions/core/reconcile/delete.ts';
import { diffDelivery } from '../../functions/core/reconcile/diff.ts';
import { namespacedCrd } from '../support/crd.ts';
import { engineDeps, pushFiles, registerDelivery, run } from '../support/deliveries.ts';
import { createNamespace, kubeconfigCopy, testbed, uniqueName } from '../support/testbed.ts';

const bed = testbed();
const kc = bed.kubeConfig();
const core = kc.makeApiClient(CoreV1Api);
const deps = engineDeps();

const configMap = (ns: string, name: string, value: string, annotations: Record<string, string> = {}) =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\n  namespace: ${ns}\n  annotations: ${JSON.stringify(annotations)}\ndata:\n  v: "${value}"\n`;

async function twoDeliveries(prefix: string) {
  const ns = uniqueName(prefix);
  await createNamespace(kc, ns);
  const cluster = { kubeconfig: kubeconfigCopy() };
  const make = async (suffix: string) => {
    const name = uniqueName(`${prefix}-${suffix}`);
    const repository = uniqueName(`ownership/${suffix}`);
    await registerDelivery(deps, bed, { name, repository, prune: true, cluster, deletionPolicy: 'Delete' });
    return { name, push: (text: string) => pushFiles(bed, repository, 'main', { 'a.yaml': text }) };
  };
  return { ns, a: await make('a'), b: await make('b') };
}

const read = (ns: string, name: string) => core.readNamespacedConfigMap({ name, namespace: ns });

describe('an object declared by two registered deliveries', () => {
  it('is refused to the second, naming both, and diff shows it; nothing flips', async () => {
    const { ns, a, b } = await twoDeliveries('twice');
    await a.push(configMap(ns, 'shared', 'from-a'));
    expect((await run(a.name, deps)).outcome).toBe('Succeeded');
    await b.push([configMap(ns, 'shared', 'from-b'), configMap(ns, 'own', 'b')].join('---\n'));

    const refused = await run(b.name, deps);
    expect(refused).toMatchObject({ outcome: 'Failed', reason: 'OwnershipConflict' });
    expect(refused.message).toContain(
      `delivery '${b.name}' declares objects another registered delivery owns`,
    );
    expect(refused.message).toContain(`ConfigMap/${ns}/shared belongs to delivery '${a.name}'`);
    const shared = await read(ns, 'shared');
    expect(shared.metadata?.labels?.[OWNER_LABEL]).toBe(a.name);
    expect(shared.data?.v).toBe('from-a');
    await expect(read(ns, 'own')).rejects.toThrow(); // nothing of b's revision was applied
    const diff = await diffDelivery(b.name, deps);
    expect(diff.conflicts).toEqual([{ object: `ConfigMap/${ns}/shared`, origin: 'a.yaml', owner: a.name }]);

    // Removing b (which never owned it) leaves a's object alone.
    await deleteDelivery(b.name, deps);
    expect((await read(ns, 'shared')).metadata?.labels?.[OWNER_LABEL]).toBe(a.name);
    expect((await run(a.name, deps)).outcome).toBe('Succeeded');
  });

  it('is taken over with sluice.io/takeover-from, and the old owner cannot take it back silently', async () => {
    const { ns, a, b } = await twoDeliveries('takeover');
    await a.push(configMap(ns, 'moved', 'from-a'));
    expect((await run(a.name, deps)).outcome).toBe('Succeeded');
    await b.push(configMap(ns, 'moved', 'from-b', { 'sluice.io/takeover-from': a.name }));
    expect((await run(b.name, deps)).outcome).toBe('Succeeded');
    expect((await read(ns, 'moved')).metadata?.labels?.[OWNER_LABEL]).toBe(b.name);

    const back = await run(a.name, deps);
    expect(back).toMatchObject({ outcome: 'Failed', reason: 'OwnershipConflict' });
    expect((await read(ns, 'moved')).data?.v).toBe('from-b');
    // a's removal does not delete what b now owns.
    await deleteDelivery(a.name, deps);
    expect((await read(ns, 'moved')).metadata?.labels?.[OWNER_LABEL]).toBe(b.name);
  });

  it('of a delivery no longer registered is taken over without asking', async () => {
    const { ns, a, b } = await twoDeliveries('orphaned');
    await a.push(configMap(ns, 'left', 'from-a'));
    expect((await run(a.name, deps)).outcome).toBe('Succeeded');
    await registerDelivery(deps, bed, {
      name: a.name,
      repository: 'unused',
      cluster: { kubeconfig: kubeconfigCopy() },
      deletionPolicy: 'Orphan',
    });
    await deleteDelivery(a.name, deps); // orphaned: the object stays with a's label
    await b.push(configMap(ns, 'left', 'from-b'));
    expect((await run(b.name, deps)).outcome).toBe('Succeeded');
    expect((await read(ns, 'left')).metadata?.labels?.[OWNER_LABEL]).toBe(b.name);
  });
});

describe('objects checked only once their Namespace or CRD is applied are still checked', () => {
  it("declaring a Namespace that already exists does not let the second delivery take, then prune, the first one's object", async () => {
    const { ns, a, b } = await twoDeliveries('declaredns');
    await a.push(configMap(ns, 'shared', 'from-a'));
    expect((await run(a.name, deps)).outcome).toBe('Succeeded');
    const namespace = `apiVersion: v1\nkind: Namespace\nmetadata:\n  name: ${ns}\n`;
    await b.push([namespace, configMap(ns, 'shared', 'from-b')].join('---\n'));

    const refused = await run(b.name, deps);
    expect(refused).toMatchObject({ outcome: 'Failed', reason: 'OwnershipConflict' });
    expect(refused.message).toContain(`ConfigMap/${ns}/shared belongs to delivery '${a.name}'`);
    // Refused before the first write: not even the Namespace was labelled by b.
    const live = await core.readNamespace({ name: ns });
    expect(live.metadata?.labels?.[OWNER_LABEL]).toBeUndefined();
    expect((await read(ns, 'shared')).data?.v).toBe('from-a');

    // b's next revision, without the ConfigMap, prunes nothing of a's.
    await b.push(namespace);
    expect((await run(b.name, deps)).outcome).toBe('Succeeded');
    const shared = await read(ns, 'shared');
    expect(shared.metadata?.labels?.[OWNER_LABEL]).toBe(a.name);
    expect(shared.data?.v).toBe('from-a');
  });

  it('a custom resource in a version a CRD of the artifact newly serves is checked before anything is written', async () => {
    const { ns, a, b } = await twoDeliveries('crdversion');
    const group = `${uniqueName('own')}.example.com`;
    const v1 = namespacedCrd({
      group,
      kind: 'Widget',
      plural: 'widgets',
      specProperties: { v: { type: 'string' } },
    });
    // The CRD is nobody's (installed by hand): only the widget belongs to a.
    const kube = new KubeClient(kc);
    await kube.apply(v1);
    await waitForCrdsEstablished(kube, [v1], { clock: systemClock, timeoutMs: 60_000 });
    const widget = (version: string, value: string) =>
      `apiVersion: ${group}/${version}\nkind: Widget\nmetadata:\n  name: shared\n  namespace: ${ns}\nspec:\n  v: ${value}\n`;
    await a.push(widget('v1', 'from-a'));
    expect(await run(a.name, deps)).toMatchObject({ outcome: 'Succeeded' });

    const [stored] = v1.spec.versions;
    const v1v2 = {
      ...v1,
      spec: { ...v1.spec, versions: [stored!, { ...stored!, name: 'v2', storage: false }] },
    };
    await b.push([JSON.stringify(v1v2), widget('v2', 'from-b')].join('\n---\n'));
    const refused = await run(b.name, deps);
    expect(refused).toMatchObject({ outcome: 'Failed', reason: 'OwnershipConflict' });
    expect(refused.message).toContain(`Widget/${ns}/shared belongs to delivery '${a.name}'`);
    const live = await kube.get({
      apiVersion: `${group}/v1`,
      kind: 'Widget',
      metadata: { name: 'shared', namespace: ns },
    });
    expect(live?.metadata?.labels?.[OWNER_LABEL]).toBe(a.name);
    expect((live as { spec?: { v?: string } } | undefined)?.spec?.v).toBe('from-a');
    // Refused before the first write: the CRD does not serve v2, and is nobody's still.
    const crd = (await kube.get(v1)) as { spec: { versions: unknown[] } } & KubernetesObject;
    expect(crd.spec.versions).toHaveLength(1);
    expect(crd.metadata?.labels?.[OWNER_LABEL]).toBeUndefined();
  });
});

describe('sluice.io/force', () => {
  const immutableSecret = (ns: string, name: string, value: string, force: boolean) =>
    `apiVersion: v1\nkind: Secret\nmetadata:\n  name: ${name}\n  namespace: ${ns}\n${force ? '  annotations:\n    sluice.io/force: enabled\n' : ''}immutable: true\nstringData:\n  v: "${value}"\n`;

  it('never recreates an object that is not ours: the run fails naming it, and it is left alone', async () => {
    const ns = uniqueName('force');
    const repository = uniqueName('ownership/force');
    const name = uniqueName('force');
    await createNamespace(kc, ns);
    const theirs = await core.createNamespacedSecret({
      namespace: ns,
      body: { metadata: { name: 'db-password' }, immutable: true, stringData: { v: 'theirs' } },
    });
    await pushFiles(bed, repository, 'main', { 's.yaml': immutableSecret(ns, 'db-password', 'ours', true) });
    await registerDelivery(deps, bed, {
      name,
      repository,
      prune: true,
      cluster: { kubeconfig: kubeconfigCopy() },
    });
    const result = await run(name, deps);
    expect(result).toMatchObject({ outcome: 'Failed', reason: 'ValidationFailed' });
    expect(result.message).toMatch(new RegExp(`Secret/${ns}/db-password: .*recreates only objects labelled`));
    const after = await core.readNamespacedSecret({ name: 'db-password', namespace: ns });
    expect(after.metadata?.uid).toBe(theirs.metadata?.uid);
  });

  it('counts recreations in the mass-deletion brake', async () => {
    const ns = uniqueName('forcebrake');
    const repository = uniqueName('ownership/forcebrake');
    const name = uniqueName('forcebrake');
    await createNamespace(kc, ns);
    const secrets = (value: string, force: boolean) =>
      Array.from({ length: 10 }, (_, i) => immutableSecret(ns, `s${i}`, value, force)).join('---\n');
    await pushFiles(bed, repository, 'main', { 's.yaml': secrets('1', true) });
    await registerDelivery(deps, bed, {
      name,
      repository,
      prune: true,
      cluster: { kubeconfig: kubeconfigCopy() },
    });
    expect((await run(name, deps)).outcome).toBe('Succeeded');
    const uids = async () =>
      (await core.listNamespacedSecret({ namespace: ns })).items.map((s) => s.metadata?.uid).sort();
    const before = await uids();

    await pushFiles(bed, repository, 'main', { 's.yaml': secrets('2', true) });
    const held = await run(name, deps);
    expect(held).toMatchObject({ outcome: 'Blocked', reason: 'PruneLimitExceeded' });
    expect(held.message).toMatch(/would delete 10 of the 10 objects .*Would delete: Secret\//);
    expect(await uids()).toEqual(before);
  });
});
