import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { TableClient } from './table-client.ts';

const KEY = (digest: string) => ({ pk: `image#${digest}`, sk: 'pushers' });

/**
 * Adds `pusher` (the principal CloudTrail names) to those who pushed `digest`. A digest pushed
 * again (another tag, another repository, another person) keeps every pusher: none of them may
 * approve it.
 */
export async function recordImagePusher(
  db: TableClient,
  digest: string,
  pusher: string,
  at: string,
): Promise<void> {
  await db.doc.send(
    new UpdateCommand({
      TableName: db.table,
      Key: KEY(digest),
      UpdateExpression: 'ADD pushers :pusher SET lastPushAt = :at',
      ExpressionAttributeValues: { ':pusher': new Set([pusher]), ':at': at },
    }),
  );
}

/** Everyone recorded as having pushed `digest`; empty when no push of it was recorded. */
export async function imagePushers(db: TableClient, digest: string): Promise<string[]> {
  const { Item } = await db.doc.send(
    new GetCommand({ TableName: db.table, Key: KEY(digest), ConsistentRead: true }),
  );
  const pushers = Item?.pushers as Set<string> | undefined;
  return pushers ? [...pushers].sort() : [];
}
