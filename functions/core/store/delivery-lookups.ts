// Which deliveries pull from a repository, use a gate or depend on a delivery: one Query of the
// index items (lookup-entries.ts) answers an ECR push, a gate opening or a dependency that became
// ready, however many deliveries are registered.
import { GetCommand, PutCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { getDeliveryItem, listDeliveryNames } from './deliveries.ts';
import { dependentsLookupKey, gateLookupKey, lookupEntries, repositoryLookupKey } from './lookup-entries.ts';
import { queryPartition, type TableClient } from './table-client.ts';

/**
 * The deliveries whose source is `repository` in the registry of `account` and `region` (any of
 * its hosts: classic, FIPS, dual-stack); a delivery from a registry that is not ECR matches by
 * repository alone.
 */
export async function deliveriesOfRepository(
  db: TableClient,
  repository: string,
  registry: { readonly account: string; readonly region: string },
): Promise<string[]> {
  await ensureLookups(db);
  const items = await queryPartition(db, repositoryLookupKey(repository));
  return items
    .filter(
      (item) =>
        item.account === undefined || (item.account === registry.account && item.region === registry.region),
    )
    .map((item) => item.sk as string);
}

/**
 * The deliveries that reference a gate (in `gates`, or as the approval gate of their pruneLimit),
 * and the members of the rollout waves it holds (their items name the delivery apart from the key).
 */
export async function deliveriesUsingGate(db: TableClient, gate: string): Promise<string[]> {
  await ensureLookups(db);
  const items = await queryPartition(db, gateLookupKey(gate));
  return [...new Set(items.map((item) => (item.delivery ?? item.sk) as string))];
}

/** The deliveries whose `dependsOn` names `delivery`. */
export async function deliveriesDependingOn(db: TableClient, delivery: string): Promise<string[]> {
  await ensureLookups(db);
  return (await queryPartition(db, dependentsLookupKey(delivery))).map((item) => item.sk as string);
}

/** Written once every delivery stored before the index existed has its index items. */
export const LOOKUPS_MARKER = { pk: 'lookups', sk: 'v1' };

/**
 * Builds the index for specs stored before it existed, once per table. Each delivery's items are
 * written only while its spec is still the one read (a transaction's condition check), so a
 * delivery changed or removed meanwhile keeps the index its own write gave it.
 */
export async function ensureLookups(db: TableClient): Promise<void> {
  const marker = await db.doc.send(new GetCommand({ TableName: db.table, Key: LOOKUPS_MARKER }));
  if (marker.Item) return;
  for (const name of await listDeliveryNames(db)) {
    const stored = await getDeliveryItem(db, name);
    if (!stored) continue;
    try {
      await db.doc.send(
        new TransactWriteCommand({
          TransactItems: [
            {
              ConditionCheck: {
                TableName: db.table,
                Key: stored.key,
                ConditionExpression: 'registeredAt = :registeredAt',
                ExpressionAttributeValues: { ':registeredAt': stored.registeredAt },
              },
            },
            ...lookupEntries(stored.delivery).map((entry) => ({
              Put: { TableName: db.table, Item: { ...entry } },
            })),
          ],
        }),
      );
    } catch (error) {
      if (!(error instanceof TransactionCanceledException)) throw error;
    }
  }
  await db.doc.send(new PutCommand({ TableName: db.table, Item: LOOKUPS_MARKER }));
}
