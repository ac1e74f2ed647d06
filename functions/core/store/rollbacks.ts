// A delivery's rollback request, kept on its status item beside the spec copy, so that the lease's
// claim reads it with no request of its own. Runs never write it; the next request replaces it.
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { RollbackRequest } from '../model/rollback.ts';
import { deliveryKey, type TableClient } from './table-client.ts';

/** The attribute of the status item that holds the request. */
export const ROLLBACK_ATTRIBUTE = 'rollback';

/** The rollback request a status item holds (as a lease claim read it), if any. */
export function rollbackFromStatusItem(
  item: Readonly<Record<string, unknown>> | undefined,
): RollbackRequest | undefined {
  const request = item?.[ROLLBACK_ATTRIBUTE];
  return typeof request === 'object' && request !== null ? (request as RollbackRequest) : undefined;
}

/**
 * Stores `request` for `delivery`, only while the delivery is registered (its status item holds
 * the spec) and still runs `request.from`, as the request was decided on. False when either no
 * longer holds: nothing was written.
 */
export async function putRollbackRequest(
  db: TableClient,
  delivery: string,
  request: RollbackRequest,
): Promise<boolean> {
  try {
    await db.doc.send(
      new UpdateCommand({
        TableName: db.table,
        Key: { pk: deliveryKey(delivery), sk: 'status' },
        UpdateExpression: 'SET #rollback = :request',
        ConditionExpression: 'attribute_exists(spec) AND lastAppliedRevision = :from',
        ExpressionAttributeNames: { '#rollback': ROLLBACK_ATTRIBUTE },
        ExpressionAttributeValues: { ':request': request, ':from': request.from },
      }),
    );
    return true;
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException) return false;
    throw error;
  }
}
