// The revisions a delivery has applied, one item per digest (`applied#sha256:…`), written with
// the status of the run that changed the applied revision (so only when it changes). A rollback
// returns only to one of these.
import { DeleteCommand, type TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import type { AppliedRevision } from '../model/rollback.ts';
import { deliveryKey, queryPartition, type TableClient } from './table-client.ts';

const PREFIX = 'applied#';

/** One write of a transaction (lease.ts's TransactItem; the lease module imports the specs, which import this). */
type TransactItem = NonNullable<
  ConstructorParameters<typeof TransactWriteCommand>[0]['TransactItems']
>[number];

const digestOf = (revision: string): string => revision.slice(revision.lastIndexOf('sha256:'));

/**
 * The writes that record a run's change of the applied revision from `previous` to `next` (pulled
 * from `url`) at `now`: `next` became the running revision, `previous` was replaced. None when the
 * digest did not change. They go into the run end's fenced transaction.
 */
export function appliedRevisionWrites(
  db: TableClient,
  delivery: string,
  url: string,
  previous: string | undefined,
  next: string,
  now: Date,
): TransactItem[] {
  if (previous !== undefined && digestOf(previous) === digestOf(next)) return [];
  const key = (revision: string) => ({ pk: deliveryKey(delivery), sk: `${PREFIX}${digestOf(revision)}` });
  const at = now.toISOString();
  const items: TransactItem[] = [
    {
      Update: {
        TableName: db.table,
        Key: key(next),
        UpdateExpression: 'SET digest = :digest, revision = :revision, #url = :url, appliedAt = :at',
        ExpressionAttributeNames: { '#url': 'url' },
        ExpressionAttributeValues: { ':digest': digestOf(next), ':revision': next, ':url': url, ':at': at },
      },
    },
  ];
  // The revision it replaced: recorded even when it was applied before this history was kept.
  if (previous !== undefined)
    items.push({
      Update: {
        TableName: db.table,
        Key: key(previous),
        UpdateExpression:
          'SET digest = :digest, revision = if_not_exists(revision, :revision), #url = if_not_exists(#url, :url), replacedAt = :at',
        ExpressionAttributeNames: { '#url': 'url' },
        ExpressionAttributeValues: {
          ':digest': digestOf(previous),
          ':revision': previous,
          ':url': url,
          ':at': at,
        },
      },
    });
  return items;
}

/** Every revision `delivery` has applied, as recorded (none before its first change of revision). */
export async function listAppliedRevisions(db: TableClient, delivery: string): Promise<AppliedRevision[]> {
  const items = await queryPartition(db, deliveryKey(delivery), { skPrefix: PREFIX, consistent: true });
  return items.map(({ pk: _pk, sk: _sk, ...item }) => item as unknown as AppliedRevision);
}

/** Forgets `delivery`'s applied revisions (its removal): a delivery registered again under its name starts afresh. */
export async function removeAppliedRevisions(db: TableClient, delivery: string): Promise<void> {
  const items = await queryPartition(db, deliveryKey(delivery), { skPrefix: PREFIX, projection: 'pk, sk' });
  for (const { pk, sk } of items)
    await db.doc.send(new DeleteCommand({ TableName: db.table, Key: { pk, sk } }));
}
