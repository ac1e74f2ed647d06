// The table requests of one run, counted on DynamoDB Local with the real API server and registry:
// what every run of many small deliveries pays (issue 30, benchmark (b)). A change that adds a
// request to a run fails here; one that removes one updates the lists.
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { listEvents } from '../../../functions/core/store/events.ts';
import { readDesiredSet } from '../../../functions/core/store/desired-set.ts';
import { readInventory } from '../../../functions/core/store/inventory.ts';
import { getStatus } from '../../../functions/core/store/status.ts';
import { clusterKey } from '../../../functions/core/config/index.ts';
import { clusterSlotsKey } from '../../../functions/core/store/cluster-slots.ts';
import { deliveryKey, queryPartition } from '../../../functions/core/store/table-client.ts';
import { countedTableOf } from '../../support/counted-table.ts';
import { engineDeps, pushFiles, registerDelivery, run } from '../../support/deliveries.ts';
import { createNamespace, testbed, uniqueName } from '../../support/testbed.ts';

const bed = testbed();
const countedTable = () => countedTableOf(bed);

const configMaps = (ns: string, value: string, names: readonly string[]) =>
  names
    .map(
      (name) =>
        `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\n  namespace: ${ns}\ndata:\n  k: ${value}\n`,
    )
    .join('---\n');

describe('table requests of one run', () => {
  it('a new revision of a small pruning delivery, in a warm container', async () => {
    const [ns, repository, name] = [
      uniqueName('requests'),
      uniqueName('requests/app'),
      uniqueName('requests'),
    ];
    await createNamespace(bed.kubeConfig(), ns);
    const { db, sent } = countedTable();
    const deps = { ...engineDeps(), db };
    await pushFiles(bed, repository, 'main', { 'cm.yaml': configMaps(ns, 'one', ['a', 'b', 'c']) });
    const delivery = await registerDelivery(deps, bed, { name, repository, prune: true });
    expect((await run(name, deps)).changes).toMatchObject({ created: 3 });

    // One object changed, one gone, one unchanged: apply, prune, both inventory writes.
    await pushFiles(bed, repository, 'main', { 'cm.yaml': configMaps(ns, 'two', ['a', 'b']) });
    sent.length = 0;
    const result = await run(name, deps);
    expect(result).toMatchObject({ outcome: 'Succeeded', changes: { configured: 2, deleted: 1 } });
    expect(sent).toEqual([
      'UpdateItem', // the lease claimed, with the spec and the status the last run left
      'Query', // the rollout it is a member of, if any (asked once a run)
      'GetItem', // the inventory
      'PutItem', // the cluster slot this container held last
      'TransactWriteItems', // the inventory, write-ahead, and the desired set
      'TransactWriteItems', // the inventory, final
      'TransactWriteItems', // status and event, the cluster slot freed, the lease released
    ]);

    const { Item } = await db.doc.send(
      new GetCommand({
        TableName: db.table,
        Key: { pk: deliveryKey(name), sk: 'status' },
        ConsistentRead: true,
      }),
    );
    expect(Item).not.toHaveProperty('leaseHolder');
    const slots = await queryPartition(db, clusterSlotsKey(clusterKey(delivery.cluster)), {
      consistent: true,
    });
    expect(slots.filter((slot) => String(slot.holder).endsWith(`/${name}`))).toEqual([]);
    const status = await getStatus(db, name);
    expect(status).toMatchObject({ ready: true, lastAppliedRevision: result.revision });
    expect(await listEvents(db, name)).toHaveLength(2);
    expect((await readInventory(db, name)).map((e) => e.id).sort()).toEqual([
      `${ns}_a__ConfigMap`,
      `${ns}_b__ConfigMap`,
    ]);
    expect(await readDesiredSet(db, name)).toMatchObject({ revision: result.revision });

    // Steady: nothing to write to the cluster, no slot, no event; the desired set goes with the status.
    sent.length = 0;
    expect((await run(name, deps)).changes).toMatchObject({ unchanged: 2, configured: 0 });
    expect(sent).toEqual([
      'UpdateItem', // the lease claimed, with the spec and the status the last run left
      'Query', // the rollout it is a member of, if any (asked once a run)
      'GetItem', // the inventory
      'TransactWriteItems', // status and desired set, the lease released
    ]);
    expect(await listEvents(db, name)).toHaveLength(2);
  });
});
