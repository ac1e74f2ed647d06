// Renaming a delivery: CloudFormation creates the new one, then deletes the old one. The old one's
// removal must not delete what the new one (held or not) would apply. On the real components,
// through the spec handler as the CDK Provider framework invokes it.
import type { KubernetesObject } from '@kubernetes/client-node';
import type { Context } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { parseGateEvent } from '../../functions/core/gates/event.ts';
import { handleGateEvent } from '../../functions/core/gates/requests.ts';
import { KubeClient } from '../../functions/core/kube/client.ts';
import { OWNER_LABEL } from '../../functions/core/manifests/objects.ts';
import { deleteDelivery } from '../../functions/core/reconcile/delete.ts';
import type { ReconcileDeps } from '../../functions/core/reconcile/deps.ts';
import { handleSpecEvent } from '../../functions/core/spec-resource/resource.ts';
import { getDelivery } from '../../functions/core/store/deliveries.ts';
import { readInventory } from '../../functions/core/store/inventory.ts';
import { handler } from '../../functions/spec-resource/handler.ts';
import { recordReconcileInvocations } from '../support/aws-recorder.ts';
import { namespacedCrd } from '../support/crd.ts';
import { engineDeps, pushFiles, registerDelivery, run } from '../support/deliveries.ts';
import { inProcessGateDeps, registerGate } from '../support/gates.ts';
import { specEvents } from '../support/spec-events.ts';
import { kubeconfigCopy, testbed, uniqueName } from '../support/testbed.ts';

const bed = testbed();
const deps = engineDeps();
const kube = new KubeClient(bed.kubeConfig());
const context = (id: string) => ({ awsRequestId: id }) as Context;
const { invocationsOf } = recordReconcileInvocations();

/** A delivery spec as the Sluice construct writes it into the custom resource. */
function deliverySpec(
  name: string,
  repository: string,
  kubeconfig: string,
  fields: Record<string, unknown> = {},
) {
  return {
    name,
    source: { url: `oci://${bed.registry.host}/${repository}`, tag: 'main', provider: 'aws' },
    cluster: { kubeconfig },
    prune: true,
    deletionPolicy: 'Delete',
    interval: '300s',
    ...fields,
  };
}

const event = specEvents('delivery');

const configMap = (name: string, ns: string) =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\n  namespace: ${ns}\ndata:\n  k: v\n`;

/** An application: its Namespace, a ConfigMap, a Secret and a Service. */
function application(ns: string): Record<string, string> {
  return {
    'namespace.yaml': `apiVersion: v1\nkind: Namespace\nmetadata:\n  name: ${ns}\n`,
    'config.yaml': configMap('settings', ns),
    'secret.yaml': `apiVersion: v1\nkind: Secret\nmetadata:\n  name: creds\n  namespace: ${ns}\nstringData:\n  password: hunter2\n`,
    'service.yaml': `apiVersion: v1\nkind: Service\nmetadata:\n  name: web\n  namespace: ${ns}\nspec:\n  selector: { app: web }\n  ports:\n    - port: 80\n`,
  };
}

function applicationObjects(ns: string): KubernetesObject[] {
  return [
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } },
    { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'settings', namespace: ns } },
    { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'creds', namespace: ns } },
    { apiVersion: 'v1', kind: 'Service', metadata: { name: 'web', namespace: ns } },
  ];
}

/**
 * Each object's uid and owner label as the cluster has them now; undefined when it is gone or being
 * deleted (a deleted Namespace stays Terminating: no namespace controller runs here).
 */
async function live(objects: readonly KubernetesObject[]) {
  return Promise.all(
    objects.map(async (object) => {
      const found = await kube.get(object);
      if (!found || found.metadata?.deletionTimestamp) return undefined;
      return { uid: found.metadata?.uid, owner: found.metadata?.labels?.[OWNER_LABEL] };
    }),
  );
}

describe('renaming a delivery (CloudFormation: create the new one, then delete the old one)', () => {
  it('keeps every object while the new delivery is held by a closed gate; it takes them over when the gate opens', async () => {
    const kubeconfig = kubeconfigCopy();
    const ns = uniqueName('rename');
    const repository = uniqueName('rename/app');
    const [before, after, gate] = [uniqueName('before'), uniqueName('after'), uniqueName('approval')];
    await pushFiles(bed, repository, 'main', application(ns));
    await registerGate(deps, { name: gate, default: 'closed' });

    const old = await handler(event('Create', deliverySpec(before, repository, kubeconfig)), context('r1'));
    expect(await run(before, deps)).toMatchObject({ outcome: 'Succeeded' });
    const objects = applicationObjects(ns);
    const applied = await live(objects);
    expect(applied.map((o) => o?.owner)).toEqual([before, before, before, before]);

    await handler(
      event(
        'Create',
        deliverySpec(after, repository, kubeconfig, { gates: [{ name: gate, blocks: 'all' }] }),
      ),
      context('r2'),
    );
    expect(await run(after, deps)).toMatchObject({ outcome: 'Blocked', reason: 'GateClosed' });
    const invokedBefore = invocationsOf(after).length;

    await handler(event('Delete', { name: before }, old.PhysicalResourceId), context('r3'));
    expect(await getDelivery(deps.db, before)).toBeUndefined();
    // Every object is still there: the same object (uid), under the old owner label.
    expect(await live(objects)).toEqual(applied);
    // The new delivery was asked to reconcile at once (it stays held while the gate is closed).
    expect(invocationsOf(after)).toHaveLength(invokedBefore + 1);
    expect(await run(after, deps)).toMatchObject({ outcome: 'Blocked', reason: 'GateClosed' });
    expect(await live(objects)).toEqual(applied);

    const gateDeps = inProcessGateDeps(deps);
    await handleGateEvent(
      parseGateEvent({ gate, action: 'open', reason: 'CHG-42', requestedBy: 'alice', source: 'cli' }),
      gateDeps,
    );
    expect(gateDeps.reconciled).toMatchObject([{ delivery: after, outcome: 'Succeeded' }]);
    const takenOver = await live(objects);
    expect(takenOver.map((o) => o?.owner)).toEqual([after, after, after, after]);
    expect(takenOver.map((o) => o?.uid)).toEqual(applied.map((o) => o?.uid)); // never re-created
    expect((await readInventory(deps.db, after)).map((e) => e.id).sort()).toEqual(
      [`_${ns}__Namespace`, `${ns}_settings__ConfigMap`, `${ns}_creds__Secret`, `${ns}_web__Service`].sort(),
    );
  });

  it('deletes what only the old delivery has; keeps the rest, with the Namespace and CRD holding it', async () => {
    const kubeconfig = kubeconfigCopy();
    const ns = uniqueName('partial');
    const group = `${uniqueName('rename')}.example.com`;
    const crd = namespacedCrd({ group, kind: 'Widget', plural: 'widgets', specProperties: {} });
    const widget = (name: string) =>
      `apiVersion: ${group}/v1\nkind: Widget\nmetadata:\n  name: ${name}\n  namespace: ${ns}\nspec: {}\n`;
    const [oldRepository, newRepository] = [uniqueName('rename/old'), uniqueName('rename/new')];
    const [before, after] = [uniqueName('before'), uniqueName('after')];
    await pushFiles(bed, oldRepository, 'main', {
      'namespace.yaml': `apiVersion: v1\nkind: Namespace\nmetadata:\n  name: ${ns}\n`,
      'crd.yaml': JSON.stringify(crd),
      'shared.yaml': configMap('shared', ns),
      'only-old.yaml': configMap('only-old', ns),
      'widget.yaml': widget('w1'),
      'only-old-widget.yaml': widget('w2'),
    });
    // The new delivery's artifact holds neither the Namespace nor the CRD, only objects in them.
    await pushFiles(bed, newRepository, 'main', {
      'shared.yaml': configMap('shared', ns),
      'widget.yaml': widget('w1'),
    });

    const log: string[] = [];
    const reconciled: string[] = [];
    const removalDeps: ReconcileDeps = {
      ...deps,
      reconcileNow: async (names) => void reconciled.push(...names),
    };
    const specDeps = {
      db: deps.db,
      clock: deps.clock,
      deleteDelivery: (name: string) => deleteDelivery(name, removalDeps),
      log: (message: string) => void log.push(message),
    };
    const old = await handleSpecEvent(
      event('Create', deliverySpec(before, oldRepository, kubeconfig)),
      specDeps,
    );
    expect(await run(before, deps)).toMatchObject({ outcome: 'Succeeded' });
    await handleSpecEvent(event('Create', deliverySpec(after, newRepository, kubeconfig)), specDeps);

    await handleSpecEvent(event('Delete', { name: before }, old.PhysicalResourceId), specDeps);
    const object = (
      apiVersion: string,
      kind: string,
      name: string,
      namespace?: string,
    ): KubernetesObject => ({
      apiVersion,
      kind,
      metadata: { name, ...(namespace && { namespace }) },
    });
    const [namespace, definition, shared, w1, onlyOld, w2] = await live([
      object('v1', 'Namespace', ns),
      object('apiextensions.k8s.io/v1', 'CustomResourceDefinition', `widgets.${group}`),
      object('v1', 'ConfigMap', 'shared', ns),
      object(`${group}/v1`, 'Widget', 'w1', ns),
      object('v1', 'ConfigMap', 'only-old', ns),
      object(`${group}/v1`, 'Widget', 'w2', ns),
    ]);
    expect([namespace?.owner, definition?.owner, shared?.owner, w1?.owner]).toEqual([
      before,
      before,
      before,
      before,
    ]);
    expect(onlyOld).toBeUndefined();
    expect(w2).toBeUndefined();
    expect(reconciled).toEqual([after]);
    const message = log.find((line) => line.startsWith(`deleted delivery ${before}`));
    expect(message).toContain(`deleted delivery ${before} and 2 of its objects; kept 4 objects`);
    for (const id of [`_${ns}__Namespace`, `_widgets.${group}_apiextensions.k8s.io_CustomResourceDefinition`])
      expect(message).toContain(`${id} (delivery '${after}')`);
  });

  it('a delivery on another cluster (another kubeconfig) protects nothing, even one that cannot be built', async () => {
    const [here, elsewhere] = [kubeconfigCopy(), kubeconfigCopy()];
    const ns = uniqueName('othercluster');
    const repository = uniqueName('rename/other');
    const broken = uniqueName('rename/broken');
    await pushFiles(bed, repository, 'main', application(ns));
    await pushFiles(bed, broken, 'main', { 'bad.yaml': 'kind: ConfigMap\nmetadata: { name: x }\n' });
    const name = uniqueName('removed');
    await registerDelivery(deps, bed, { name, repository, prune: true, cluster: { kubeconfig: here } });
    await registerDelivery(deps, bed, {
      name: uniqueName('twin'),
      repository,
      cluster: { kubeconfig: elsewhere },
    });
    await registerDelivery(deps, bed, {
      name: uniqueName('unbuildable'),
      repository: broken,
      cluster: { kubeconfig: elsewhere },
    });
    expect(await run(name, deps)).toMatchObject({ outcome: 'Succeeded' });

    const result = await deleteDelivery(name, deps);
    expect(result).toMatchObject({ policy: 'Delete', kept: [] });
    expect(result.deleted).toHaveLength(4);
    expect(await live(applicationObjects(ns))).toEqual([undefined, undefined, undefined, undefined]);
  });

  it('another delivery on the same cluster that cannot be built or pulled fails the removal, and nothing is deleted', async () => {
    const kubeconfig = kubeconfigCopy();
    const ns = uniqueName('unknown');
    const repository = uniqueName('rename/app');
    const brokenRepository = uniqueName('rename/broken');
    await pushFiles(bed, repository, 'main', application(ns));
    await pushFiles(bed, brokenRepository, 'main', {
      'bad.yaml': 'kind: ConfigMap\nmetadata: { name: x }\n',
    });
    const name = uniqueName('removed');
    await registerDelivery(deps, bed, { name, repository, prune: true, cluster: { kubeconfig } });
    expect(await run(name, deps)).toMatchObject({ outcome: 'Succeeded' });
    const objects = applicationObjects(ns);
    const applied = await live(objects);
    const inventory = await readInventory(deps.db, name);

    const unbuildable = uniqueName('unbuildable');
    await registerDelivery(deps, bed, {
      name: unbuildable,
      repository: brokenRepository,
      cluster: { kubeconfig },
    });
    await expect(deleteDelivery(name, deps)).rejects.toThrow(
      new RegExp(
        `^delivery '${name}' was not removed and none of its objects were deleted: .*delivery '${unbuildable}' \\(oci://[^)]+/${brokenRepository}\\): \\w+: bad\\.yaml: ConfigMap/x: apiVersion is missing`,
      ),
    );
    expect(await live(objects)).toEqual(applied);
    expect(await getDelivery(deps.db, name)).toMatchObject({ name });
    expect(await readInventory(deps.db, name)).toEqual(inventory);
    // Removing the broken one first (it applied nothing, so nothing needs planning) lets it through.
    expect(await deleteDelivery(unbuildable, deps)).toMatchObject({ deleted: [], kept: [] });

    const unreachable = uniqueName('unreachable');
    await registerDelivery(deps, bed, {
      name: unreachable,
      repository,
      cluster: { kubeconfig },
      source: { url: 'oci://127.0.0.1:1/gone', tag: 'main', provider: 'generic', insecure: true },
    });
    await expect(deleteDelivery(name, deps)).rejects.toThrow(
      new RegExp(`delivery '${unreachable}' \\(oci://127\\.0\\.0\\.1:1/gone\\): ArtifactFailed: `),
    );
    expect(await live(objects)).toEqual(applied);
    expect(await readInventory(deps.db, name)).toEqual(inventory);

    await deleteDelivery(unreachable, deps);
    expect(await deleteDelivery(name, deps)).toMatchObject({ kept: [] });
    expect(await live(objects)).toEqual([undefined, undefined, undefined, undefined]);
  });
});
