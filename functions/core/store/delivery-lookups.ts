// Which deliveries pull from a repository, use a gate or depend on a delivery, as index items in
// the single table: one Query answers an ECR push, a gate opening or a dependency that became
// ready, however many deliveries are registered.
// putDelivery and removeDelivery keep them in step with the specs, in the same transaction.
import { GetCommand, PutCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import type { Delivery } from '../config/index.ts';
import { parseEcrHost, parseReference } from '../oci/index.ts';
import { getDeliveryItem, listDeliveryNames } from './deliveries.ts';
import { queryPartition, type TableClient } from './table-client.ts';

/** `team/app` → the partition listing the deliveries whose source is that repository (any registry). */
export const repositoryLookupKey = (repository: string) => `lookup#repository#${repository}`;
/** The partition listing the deliveries that reference a gate (in `gates`, or as their pruneLimitGate). */
export const gateLookupKey = (gate: string) => `lookup#gate#${gate}`;

/** The partition listing the deliveries whose `dependsOn` names a delivery. */
export const dependentsLookupKey = (delivery: string) => `lookup#depends-on#${delivery}`;

/** One index item: the delivery is its sort key; an ECR source also records its registry's account and region. */
export interface LookupEntry {
  readonly pk: string;
  readonly sk: string;
  readonly account?: string;
  readonly region?: string;
}

/** The index items a delivery's spec calls for. */
export function lookupEntries(delivery: Delivery): LookupEntry[] {
  const { host, repository } = parseReference(delivery.source.url);
  const ecr = parseEcrHost(host);
  const gates = new Set(delivery.gates.map((ref) => ref.name));
  if (delivery.pruneLimitGate) gates.add(delivery.pruneLimitGate);
  return [
    {
      pk: repositoryLookupKey(repository),
      sk: delivery.name,
      ...(ecr && { account: ecr.account, region: ecr.region }),
    },
    ...[...gates].map((gate) => ({ pk: gateLookupKey(gate), sk: delivery.name })),
    ...delivery.dependsOn.map((dependency) => ({ pk: dependentsLookupKey(dependency), sk: delivery.name })),
  ];
}

const sameEntry = (a: LookupEntry, b: LookupEntry) =>
  a.pk === b.pk && a.sk === b.sk && a.account === b.account && a.region === b.region;

/** What changing a delivery's spec from `before` to `after` writes to the index, as transaction items. */
export function lookupChanges(
  db: TableClient,
  before: Delivery | undefined,
  after: Delivery | undefined,
): Record<string, unknown>[] {
  const old = before ? lookupEntries(before) : [];
  const next = after ? lookupEntries(after) : [];
  const kept = (entry: LookupEntry, among: LookupEntry[]) => among.some((other) => sameEntry(entry, other));
  return [
    ...old
      .filter((entry) => !next.some((n) => n.pk === entry.pk && n.sk === entry.sk))
      .map((entry) => ({ Delete: { TableName: db.table, Key: { pk: entry.pk, sk: entry.sk } } })),
    ...next
      .filter((entry) => !kept(entry, old))
      .map((entry) => ({ Put: { TableName: db.table, Item: { ...entry } } })),
  ];
}

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

/** The deliveries that reference a gate (in `gates`, or as the approval gate of their pruneLimit). */
export async function deliveriesUsingGate(db: TableClient, gate: string): Promise<string[]> {
  await ensureLookups(db);
  return (await queryPartition(db, gateLookupKey(gate))).map((item) => item.sk as string);
}

/** The deliveries whose `dependsOn` names `delivery`. */
export async function deliveriesDependingOn(db: TableClient, delivery: string): Promise<string[]> {
  await ensureLookups(db);
  return (await queryPartition(db, dependentsLookupKey(delivery))).map((item) => item.sk as string);
}

/** Written once every delivery stored before the index existed has its index items. */
const LOOKUPS_MARKER = { pk: 'lookups', sk: 'v1' };

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
