// The spec custom resource handler, invoked as the CDK Provider framework invokes it, on the real
// components: specs written on create and update, a removed delivery's objects deleted from the cluster.
import { CoreV1Api } from '@kubernetes/client-node';
import type { Context } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import type { SpecResourceEvent } from '../../../functions/core/spec-resource/resource.ts';
import { getDelivery } from '../../../functions/core/store/deliveries.ts';
import { getGate } from '../../../functions/core/store/gates.ts';
import { handler } from '../../../functions/spec-resource/handler.ts';
import { recordReconcileInvocations } from '../../support/aws-recorder.ts';
import { engineDeps, pushFiles, run } from '../../support/deliveries.ts';
import { specEvents } from '../../support/spec-events.ts';
import { createNamespace, kubeconfigCopy, testbed, uniqueName } from '../../support/testbed.ts';

const bed = testbed();
const deps = engineDeps();
const context = (id: string) => ({ awsRequestId: id }) as Context;
const { invocationsOf } = recordReconcileInvocations();

function deliverySpec(name: string, repository: string, fields: Record<string, unknown> = {}) {
  return {
    name,
    source: { url: `oci://${bed.registry.host}/${repository}`, tag: 'main', provider: 'aws' },
    cluster: { kubeconfig: bed.kube.kubeconfig },
    prune: true,
    interval: '300s',
    ...fields,
  };
}

const event = (
  type: SpecResourceEvent['RequestType'],
  kind: 'delivery' | 'gate',
  spec: { name: string } & Record<string, unknown>,
  physicalId?: string,
) => specEvents(kind)(type, spec, physicalId);

describe('spec handler', () => {
  it('create: validates and stores the delivery, and reconciles it at once', async () => {
    const name = uniqueName('created');
    const response = await handler(
      event('Create', 'delivery', deliverySpec(name, 'spec/created')),
      context('c1'),
    );
    expect(response.PhysicalResourceId).toMatch(new RegExp(`^sluice/delivery/${name}/`));
    expect(await getDelivery(deps.db, name)).toMatchObject({ name, intervalMs: 300_000, prune: true });
    expect(invocationsOf(name)).toHaveLength(1);
    expect(invocationsOf(name)[0]!.headers['x-amz-invocation-type']).toBe('Event');
  });

  it('an invalid spec fails the deployment with the field named, and stores nothing', async () => {
    const name = uniqueName('invalid');
    await expect(
      handler(
        event('Create', 'delivery', deliverySpec(name, 'spec/invalid', { interval: '5x' })),
        context('c2'),
      ),
    ).rejects.toThrow(`delivery ${name}: interval: "5x" is not a duration: unknown unit "x"`);
    expect(await getDelivery(deps.db, name)).toBeUndefined();
  });

  it('gates: create, update (reconciling the deliveries using it), delete', async () => {
    const gate = uniqueName('approval');
    const created = await handler(
      event('Create', 'gate', { name: gate, default: 'closed', window: '3600s' }),
      context('g1'),
    );
    expect(await getGate(deps.db, gate)).toMatchObject({
      name: gate,
      default: 'closed',
      windowMs: 3_600_000,
    });
    const user = uniqueName('gated');
    await handler(
      event('Create', 'delivery', deliverySpec(user, 'spec/gated', { gates: [{ name: gate }] })),
      context('g2'),
    );

    const updated = await handler(
      event('Update', 'gate', { name: gate, default: 'open' }, created.PhysicalResourceId),
      context('g3'),
    );
    expect(updated.PhysicalResourceId).toBe(created.PhysicalResourceId);
    expect(await getGate(deps.db, gate)).toMatchObject({ default: 'open' });
    expect(invocationsOf(user)).toHaveLength(2); // on its create, and when the gate's default changed

    await handler(event('Delete', 'gate', { name: gate }, created.PhysicalResourceId), context('g4'));
    expect(await getGate(deps.db, gate)).toBeUndefined();
  });

  it('delete: prunes the delivery’s objects from the cluster, then forgets it', async () => {
    const ns = uniqueName('spec');
    const name = uniqueName('removed');
    const repository = uniqueName('spec/removed');
    await createNamespace(bed.kubeConfig(), ns);
    await pushFiles(bed, repository, 'main', {
      'cm.yaml': `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\n  namespace: ${ns}\ndata:\n  k: v\n`,
    });
    // A kubeconfig of its own: the removal consults only the other deliveries on that "cluster".
    const spec = deliverySpec(name, repository, { cluster: { kubeconfig: kubeconfigCopy() } });
    const created = await handler(event('Create', 'delivery', spec), context('d1'));
    expect(await run(name, deps)).toMatchObject({ outcome: 'Succeeded' });
    const core = bed.kubeConfig().makeApiClient(CoreV1Api);
    await core.readNamespacedConfigMap({ name: 'app', namespace: ns });

    await handler(event('Delete', 'delivery', { name }, created.PhysicalResourceId), context('d2'));
    await expect(core.readNamespacedConfigMap({ name: 'app', namespace: ns })).rejects.toMatchObject({
      code: 404,
    });
    expect(await getDelivery(deps.db, name)).toBeUndefined();
  });

  it('rename: the new name is created, the old one deleted', async () => {
    const [before, after] = [uniqueName('before'), uniqueName('after')];
    const old = await handler(
      event('Create', 'delivery', deliverySpec(before, 'spec/renamed')),
      context('r1'),
    );
    const renamed = await handler(
      event('Update', 'delivery', deliverySpec(after, 'spec/renamed'), old.PhysicalResourceId),
      context('r2'),
    );
    expect(renamed.PhysicalResourceId).not.toBe(old.PhysicalResourceId);
    // CloudFormation then deletes the old physical resource.
    await handler(event('Delete', 'delivery', { name: before }, old.PhysicalResourceId), context('r3'));
    expect(await getDelivery(deps.db, before)).toBeUndefined();
    expect(await getDelivery(deps.db, after)).toMatchObject({ name: after });
  });

  it('a replaced resource writing the same name keeps the delivery when the old one is deleted', async () => {
    const name = uniqueName('moved');
    const old = await handler(event('Create', 'delivery', deliverySpec(name, 'spec/moved')), context('m1'));
    // The construct moved in the tree: CloudFormation creates the new resource, then deletes the old.
    await handler(event('Create', 'delivery', deliverySpec(name, 'spec/moved')), context('m2'));
    await handler(event('Delete', 'delivery', { name }, old.PhysicalResourceId), context('m3'));
    expect(await getDelivery(deps.db, name)).toMatchObject({ name });
  });

  it('deleting a resource whose create failed (no id of ours) does nothing', async () => {
    const response = await handler(
      event('Delete', 'delivery', { name: 'never-created' }, '2f8e6c1a-request-id'),
      context('f1'),
    );
    expect(response.PhysicalResourceId).toBe('2f8e6c1a-request-id');
  });
});
