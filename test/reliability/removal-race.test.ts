// Removal and reconcile share the delivery's lease: a reconcile whose claim of the lease comes just
// after the delivery was removed finds the spec gone with it (the claim is conditional on the
// spec's copy on the status item): it re-creates nothing and leaves no status behind.
import { CoreV1Api } from '@kubernetes/client-node';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { NotRegisteredError } from '../../functions/core/errors.ts';
import { OWNER_LABEL } from '../../functions/core/manifests/objects.ts';
import { deleteDelivery } from '../../functions/core/reconcile/delete.ts';
import { deliveryKey } from '../../functions/core/store/table-client.ts';
import { engineDeps, pushFiles, registerDelivery, run } from '../support/deliveries.ts';
import { faultyTable } from '../support/dynamodb-faults.ts';
import { createNamespace, kubeconfigCopy, testbed, uniqueName } from '../support/testbed.ts';

const bed = testbed();
const kc = bed.kubeConfig();
const core = kc.makeApiClient(CoreV1Api);

describe('a reconcile racing the removal of its delivery', () => {
  it('re-creates nothing once the removal has deleted the objects and the spec', async () => {
    const deps = engineDeps();
    const ns = uniqueName('race');
    const repository = uniqueName('race/app');
    const name = uniqueName('race');
    await createNamespace(kc, ns);
    await pushFiles(bed, repository, 'main', {
      'cm.yaml': `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\n  namespace: ${ns}\ndata:\n  v: "1"\n`,
    });
    await registerDelivery(deps, bed, {
      name,
      repository,
      prune: true,
      cluster: { kubeconfig: kubeconfigCopy() },
    });
    expect((await run(name, deps)).outcome).toBe('Succeeded');

    // The reconcile started; before its claim of the lease, the delivery is removed whole.
    let removed = false;
    const table = faultyTable(
      bed.dynamodb.table,
      () => undefined,
      async (call) => {
        if (call.index !== 1 || removed) return;
        removed = true;
        await deleteDelivery(name, engineDeps());
      },
    );
    await expect(run(name, { ...engineDeps(), db: table.db })).rejects.toBeInstanceOf(NotRegisteredError);
    expect(removed).toBe(true);
    const left = await core.listNamespacedConfigMap({
      namespace: ns,
      labelSelector: `${OWNER_LABEL}=${name}`,
    });
    expect(left.items).toEqual([]);
    const { Item } = await deps.db.doc.send(
      new GetCommand({
        TableName: deps.db.table,
        Key: { pk: deliveryKey(name), sk: 'status' },
        ConsistentRead: true,
      }),
    );
    expect(Item).toBeUndefined();
  });
});
