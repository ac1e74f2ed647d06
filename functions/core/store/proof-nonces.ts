import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import type { TableClient } from './table-client.ts';

/**
 * Marks an identity proof's nonce as used, until `expiresAt` (DynamoDB TTL, after the proof itself
 * has expired). False when it was used already: the proof is a replay.
 */
export async function claimProofNonce(db: TableClient, nonce: string, expiresAt: Date): Promise<boolean> {
  try {
    await db.doc.send(
      new PutCommand({
        TableName: db.table,
        Item: { pk: `proof#${nonce}`, sk: 'nonce', expiresAt: Math.ceil(expiresAt.getTime() / 1000) },
        ConditionExpression: 'attribute_not_exists(pk)',
      }),
    );
    return true;
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException) return false;
    throw error;
  }
}
