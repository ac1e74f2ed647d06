// The last good copy of each live calendar (a gate's calendar read from S3 or HTTPS): its text
// (gzipped), its ETag and when its source last confirmed it, kept in the table beside the gate so
// that every function and every run reads the same copy and judges its age alike.
import { createHash } from 'node:crypto';
import { gunzipSync, gzipSync } from 'node:zlib';
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { gateKey, type TableClient } from './table-client.ts';

/** A live calendar's last good copy, as stored. */
export interface CalendarCopy {
  /** `s3://bucket/key` or the URL it was read from: a copy of another source is not this calendar's. */
  readonly source: string;
  readonly ics: string;
  /** The ETag its source sent with it, if any (sent back as If-None-Match). */
  readonly etag?: string;
  /** When this text was read (ISO 8601). */
  readonly readAt: string;
  /** When its source last confirmed it: read, or answered 304 Not Modified (ISO 8601). Its age counts from here. */
  readonly confirmedAt: string;
}

const key = (gate: string, source: string) => ({
  pk: gateKey(gate),
  sk: `calendar#${createHash('sha256').update(source).digest('hex')}`,
});

/** The gzipped size of a copy's text: what the table item holds. */
export const storedSize = (ics: string): number => gzipSync(ics).length;

/** The last good copy of `gate`'s calendar read from `source`, if one is stored (and is of that source). */
export async function getCalendarCopy(
  db: TableClient,
  gate: string,
  source: string,
): Promise<CalendarCopy | undefined> {
  const { Item } = await db.doc.send(
    new GetCommand({ TableName: db.table, Key: key(gate, source), ConsistentRead: true }),
  );
  if (!Item || Item.source !== source || !(Item.icsGzip instanceof Uint8Array)) return undefined;
  if (typeof Item.readAt !== 'string' || typeof Item.confirmedAt !== 'string') return undefined;
  return {
    source,
    ics: gunzipSync(Item.icsGzip).toString('utf8'),
    ...(typeof Item.etag === 'string' && { etag: Item.etag }),
    readAt: Item.readAt,
    confirmedAt: Item.confirmedAt,
  };
}

/**
 * Stores `copy` as the calendar's last good copy, unless one confirmed later is stored already (a
 * slower reader never puts an older copy back). Returns false when it was not stored.
 */
export async function putCalendarCopy(db: TableClient, gate: string, copy: CalendarCopy): Promise<boolean> {
  try {
    await db.doc.send(
      new PutCommand({
        TableName: db.table,
        Item: {
          ...key(gate, copy.source),
          source: copy.source,
          icsGzip: gzipSync(copy.ics),
          etag: copy.etag,
          readAt: copy.readAt,
          confirmedAt: copy.confirmedAt,
          confirmedAtMs: Date.parse(copy.confirmedAt),
        },
        ConditionExpression: 'attribute_not_exists(pk) OR confirmedAtMs <= :at',
        ExpressionAttributeValues: { ':at': Date.parse(copy.confirmedAt) },
      }),
    );
    return true;
  } catch (error) {
    if ((error as Error).name === 'ConditionalCheckFailedException') return false;
    throw error;
  }
}
