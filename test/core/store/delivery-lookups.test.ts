// The index that answers an ECR push or a gate opening with one Query, on DynamoDB Local: kept in
// step with the specs when a delivery is registered, changed (CDK update, register again) or
// removed, also when two writes of one delivery race, and built once for specs stored before it.
import { DeleteCommand, PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { parseDelivery } from '../../../functions/core/config/index.ts';
import {
  deliveriesDependingOn,
  deliveriesOfRepository,
  deliveriesUsingGate,
  LOOKUPS_MARKER,
} from '../../../functions/core/store/delivery-lookups.ts';
import { gateLookupKey, repositoryLookupKey } from '../../../functions/core/store/lookup-entries.ts';
import { getDelivery, putDelivery, removeDelivery } from '../../../functions/core/store/deliveries.ts';
import { ensureTable } from '../../../functions/core/store/table.ts';
import { DELIVERY_INDEX, deliveryKey, tableClient } from '../../../functions/core/store/table-client.ts';
import { testbed, uniqueName } from '../../support/testbed.ts';

const bed = testbed();
const db = tableClient(bed.dynamoDb(), bed.dynamodb.table);
const ACCOUNT = '123456789012';
const REGION = 'eu-west-1';
const registry = { account: ACCOUNT, region: REGION };

function delivery(name: string, repository: string, gates: string[] = [], extra: object = {}) {
  return parseDelivery({
    name,
    source: { url: `oci://${ACCOUNT}.dkr.ecr.${REGION}.amazonaws.com/${repository}` },
    cluster: { eks: { name: 'prod', region: REGION } },
    gates: gates.map((gate) => ({ name: gate })),
    ...extra,
  });
}

/** Every delivery the index names under a partition, whatever registry. */
async function indexed(pk: string): Promise<string[]> {
  const { Items } = await db.doc.send(
    new QueryCommand({
      TableName: db.table,
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': pk },
      ConsistentRead: true,
    }),
  );
  return (Items ?? []).map((item) => item.sk as string).sort();
}

describe('delivery lookups', () => {
  it('register: the repository and every gate (pruneLimitGate too) find the delivery', async () => {
    const [name, repository] = [uniqueName('lookup'), uniqueName('team/app')];
    const [freeze, approval, brake] = [uniqueName('freeze'), uniqueName('approval'), uniqueName('brake')];
    await putDelivery(
      db,
      delivery(name, repository, [freeze, approval], { pruneLimitGate: brake }),
      new Date(),
    );
    expect(await deliveriesOfRepository(db, repository, registry)).toEqual([name]);
    for (const gate of [freeze, approval, brake]) expect(await deliveriesUsingGate(db, gate)).toEqual([name]);
  });

  it('a changed repository and gates (an update): the old entries are gone, the new ones there', async () => {
    const name = uniqueName('moved');
    const [before, after] = [uniqueName('team/old'), uniqueName('team/new')];
    const [kept, dropped, added] = [uniqueName('kept'), uniqueName('dropped'), uniqueName('added')];
    await putDelivery(db, delivery(name, before, [kept, dropped]), new Date());
    await putDelivery(db, delivery(name, after, [kept, added]), new Date());

    expect(await indexed(repositoryLookupKey(before))).toEqual([]);
    expect(await indexed(gateLookupKey(dropped))).toEqual([]);
    expect(await deliveriesOfRepository(db, after, registry)).toEqual([name]);
    expect(await deliveriesUsingGate(db, kept)).toEqual([name]);
    expect(await deliveriesUsingGate(db, added)).toEqual([name]);
  });

  it('the same repository name in another account or region is another repository', async () => {
    const repository = uniqueName('team/shared-name');
    const [here, elsewhere] = [uniqueName('here'), uniqueName('elsewhere')];
    await putDelivery(db, delivery(here, repository), new Date());
    await putDelivery(
      db,
      parseDelivery({
        name: elsewhere,
        source: { url: `oci://210987654321.dkr.ecr.${REGION}.amazonaws.com/${repository}` },
        cluster: { eks: { name: 'prod', region: REGION } },
      }),
      new Date(),
    );
    expect(await deliveriesOfRepository(db, repository, registry)).toEqual([here]);
    expect(await deliveriesOfRepository(db, repository, { account: '210987654321', region: REGION })).toEqual(
      [elsewhere],
    );
  });

  it('dependsOn: the dependency finds the deliveries depending on it, and no longer once they stop', async () => {
    const [infra, app] = [uniqueName('infra'), uniqueName('app')];
    await putDelivery(db, delivery(app, uniqueName('team/app'), [], { dependsOn: [infra] }), new Date());
    expect(await deliveriesDependingOn(db, infra)).toEqual([app]);
    await putDelivery(db, delivery(app, uniqueName('team/app')), new Date());
    expect(await deliveriesDependingOn(db, infra)).toEqual([]);
  });

  it('unregister: no lookup names the delivery any more', async () => {
    const [name, repository, gate] = [uniqueName('removed'), uniqueName('team/gone'), uniqueName('gate')];
    await putDelivery(db, delivery(name, repository, [gate]), new Date());
    await removeDelivery(db, name);
    expect(await indexed(repositoryLookupKey(repository))).toEqual([]);
    expect(await indexed(gateLookupKey(gate))).toEqual([]);
  });

  it('two writes of one delivery at once leave the lookups of the spec that was stored last, and no other', async () => {
    const name = uniqueName('raced');
    const repositories = Array.from({ length: 6 }, () => uniqueName('team/race'));
    await Promise.all(
      repositories.map((repository) => putDelivery(db, delivery(name, repository), new Date())),
    );
    const stored = await getDelivery(db, name);
    const holding = [];
    for (const repository of repositories)
      if ((await indexed(repositoryLookupKey(repository))).length > 0) holding.push(repository);
    expect(holding).toEqual(repositories.filter((r) => stored!.source.url.endsWith(`/${r}`)));
    expect(holding).toHaveLength(1);
  });

  it('specs stored before the index existed are indexed once, at the first lookup', async () => {
    const legacy = tableClient(bed.dynamoDb(), uniqueName('legacy-table'));
    await ensureTable(bed.dynamoDb(), legacy.table);
    // A table from before the lookups: without the marker a new table gets.
    await legacy.doc.send(new DeleteCommand({ TableName: legacy.table, Key: LOOKUPS_MARKER }));
    const [name, repository, gate] = [uniqueName('old'), uniqueName('team/old'), uniqueName('gate')];
    // What putDelivery wrote before: the spec and the list entry, nothing else.
    await legacy.doc.send(
      new PutCommand({
        TableName: legacy.table,
        Item: {
          pk: deliveryKey(name),
          sk: 'spec',
          spec: delivery(name, repository, [gate]),
          registeredAt: 'x',
        },
      }),
    );
    await legacy.doc.send(
      new PutCommand({ TableName: legacy.table, Item: { pk: DELIVERY_INDEX, sk: name } }),
    );

    expect(await deliveriesUsingGate(legacy, gate)).toEqual([name]);
    expect(await deliveriesOfRepository(legacy, repository, registry)).toEqual([name]);
    // Built once: a later lookup reads the index as it is.
    await legacy.doc.send(
      new DeleteCommand({ TableName: legacy.table, Key: { pk: gateLookupKey(gate), sk: name } }),
    );
    expect(await deliveriesUsingGate(legacy, gate)).toEqual([]);
  });
});
