// Lease records as other runs leave them, written straight into the table.
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { deliveryKey, type TableClient } from '../../functions/core/store/table-client.ts';

/**
 * Makes `holder` the lease's holder with the next fencing token, as a run that took the lease and
 * then died (or froze) leaves it: never renewed, it can be taken over after `ttlMs` of watching.
 */
export async function leaveLease(
  db: TableClient,
  name: string,
  holder: string,
  ttlMs = 1_000,
): Promise<void> {
  await db.doc.send(
    new UpdateCommand({
      TableName: db.table,
      Key: { pk: deliveryKey(name), sk: 'status' },
      UpdateExpression:
        'SET leaseHolder = :holder, leaseTtlMs = :ttl, leaseVersion = :zero ADD leaseToken :one',
      ExpressionAttributeValues: { ':holder': holder, ':ttl': ttlMs, ':zero': 0, ':one': 1 },
    }),
  );
}
