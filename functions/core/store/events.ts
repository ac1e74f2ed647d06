import { PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { randomBytes } from 'node:crypto';
import { fencedTransaction, type Fence } from './lease.ts';
import { deliveryKey, type TableClient } from './table-client.ts';

/** How long reconcile events are kept in the table. */
export const EVENT_RETENTION_DAYS = 30;

export type ReconcileOutcome = 'Succeeded' | 'Failed' | 'Blocked';

export interface ReconcileEvent {
  readonly delivery: string;
  readonly outcome: ReconcileOutcome;
  readonly reason: string;
  readonly message: string;
  readonly revision?: string;
  /** The applied artifact's origin revision (`org.opencontainers.image.revision`, e.g. `main@sha1:…`). */
  readonly originRevision?: string;
  /** `Warning`: the run succeeded but left something undone (a CRD or Namespace it kept). */
  readonly type?: 'Warning';
  readonly time: string;
}

/** Records a reconcile event; with `fence`, only while that run holds the lease (else LeaseLostError). */
export async function recordEvent(db: TableClient, event: ReconcileEvent, fence?: Fence): Promise<void> {
  const put = eventPutInput(db, event);
  if (!fence) {
    await db.doc.send(new PutCommand(put));
    return;
  }
  await fencedTransaction(db, fence, [{ Put: put }]);
}

/** The Put that records `event` (kept EVENT_RETENTION_DAYS). */
export function eventPutInput(db: TableClient, event: ReconcileEvent) {
  const expiresAt = Math.floor(Date.parse(event.time) / 1000) + EVENT_RETENTION_DAYS * 86_400;
  return {
    TableName: db.table,
    Item: {
      pk: deliveryKey(event.delivery),
      sk: `event#${event.time}#${randomBytes(3).toString('hex')}`,
      ...event,
      expiresAt,
    },
  };
}

/** The delivery's events, newest first. */
export async function listEvents(db: TableClient, delivery: string, limit = 20): Promise<ReconcileEvent[]> {
  const page = await db.doc.send(
    new QueryCommand({
      TableName: db.table,
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
      ExpressionAttributeValues: { ':pk': deliveryKey(delivery), ':prefix': 'event#' },
      ScanIndexForward: false,
      Limit: limit,
    }),
  );
  return (page.Items ?? []).map(({ pk: _pk, sk: _sk, expiresAt: _e, ...event }) => event as ReconcileEvent);
}
