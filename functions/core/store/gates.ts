import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { GetCommand, PutCommand, QueryCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { randomUUID } from 'node:crypto';
import type { Gate, GateAction } from '../config/index.ts';
import { getSpec, listSpecNames, putSpec, removeSpec, type SpecKind } from './specs.ts';
import { gateKey, type TableClient } from './table-client.ts';

/**
 * Where a request came from, as recorded in the audit trail: `url` is a signed request through
 * the gate's function URL (its caller verified); the others reached the function directly.
 */
export type RequestSource = 'schedule' | 'console' | 'cli' | 'api' | 'url';

/** A request to open or close a gate. */
export interface GateRequest {
  readonly action: GateAction;
  /** ISO 8601, from the recording side's clock (a schedule's: its firing time). */
  readonly requestedAt: string;
  /** The verified principal ARN, or the name an unverified caller claimed. */
  readonly requestedBy: string;
  readonly reason: string;
  /** How long the request lasts; none = until the next request. Resolved when the request is made. */
  readonly windowMs?: number;
  readonly source: RequestSource;
  /** True when AWS vouched for `requestedBy`: a signed request through the gate's function URL. */
  readonly verified?: boolean;
  /** The revision an open request approves (`<tag>@sha256:<hex>` or `sha256:<hex>`); others stay held. */
  readonly revision?: string;
  /** The distinct verified principals whose approvals opened the gate, when it needs more than one. */
  readonly approvedBy?: readonly string[];
}

/** The item listing every registered gate (one sort key per gate name). */
export const GATE_INDEX = 'gates';
/** How long audit records are kept by default (DynamoDB TTL). */
export const AUDIT_RETENTION_MS = 400 * 24 * 3_600_000;

/** One line of a gate's audit trail: a request and what became of it. */
export interface GateAuditRecord extends GateRequest {
  readonly gate: string;
  /**
   * `accepted`: it is now the gate's last request; `stale`: a newer request was already stored;
   * `pending`: an approval recorded while the gate waits for more approvers.
   */
  readonly outcome: 'accepted' | 'stale' | 'pending';
  readonly recordedAt: string;
}

const GATES: SpecKind = { key: gateKey, index: GATE_INDEX };

export const putGate = (db: TableClient, gate: Gate, registeredAt: Date): Promise<void> =>
  putSpec(db, GATES, gate, registeredAt);

export const getGate = (db: TableClient, name: string): Promise<Gate | undefined> =>
  getSpec<Gate>(db, GATES, name);

export const listGateNames = (db: TableClient): Promise<string[]> => listSpecNames(db, GATES);

/** Removes a gate's spec, its last request and its audit trail. */
export const removeGate = (db: TableClient, name: string): Promise<void> => removeSpec(db, GATES, name);

export async function getGateRequest(db: TableClient, name: string): Promise<GateRequest | undefined> {
  const { Item } = await db.doc.send(
    new GetCommand({ TableName: db.table, Key: { pk: gateKey(name), sk: 'request' }, ConsistentRead: true }),
  );
  return Item?.request as GateRequest | undefined;
}

export function auditItem(
  gate: string,
  request: GateRequest,
  outcome: GateAuditRecord['outcome'],
  now: Date,
) {
  const record: GateAuditRecord = { ...request, gate, outcome, recordedAt: now.toISOString() };
  return {
    pk: gateKey(gate),
    // Ordered by request time; the suffix keeps two requests in the same millisecond apart.
    sk: `audit#${request.requestedAt}#${randomUUID()}`,
    record,
    expiresAt: Math.floor((now.getTime() + AUDIT_RETENTION_MS) / 1000),
  };
}

/** How often a request whose transaction collided with another is tried again. */
export const CONFLICT_ATTEMPTS = 6;

/** The transaction was cancelled because another one touched the same item at the same moment. */
export function isTransactionConflict(error: unknown): boolean {
  return (
    error instanceof TransactionCanceledException &&
    (error.CancellationReasons ?? []).some((reason) => reason.Code === 'TransactionConflict')
  );
}

/**
 * Stores `request` as the gate's last request unless a request at the same time or later is
 * already stored (then it is stale). Either way it is appended to the audit trail. The write
 * is conditional, so concurrent requests resolve by `requestedAt` and none is lost; one that
 * collides with another's transaction (DynamoDB's TransactionConflict) is tried again.
 */
export async function recordGateRequest(
  db: TableClient,
  gate: string,
  request: GateRequest,
  now: Date,
): Promise<'accepted' | 'stale'> {
  return retryOnConflict(`the ${request.action} request by ${request.requestedBy}`, gate, () =>
    writeGateRequest(db, gate, request, now),
  );
}

/** Runs a transaction again when it collides with another one (DynamoDB's TransactionConflict). */
export async function retryOnConflict<T>(what: string, gate: string, write: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await write();
    } catch (error) {
      if (!isTransactionConflict(error)) throw error;
      if (attempt === CONFLICT_ATTEMPTS)
        throw new Error(
          `gate '${gate}': ${what} collided with other requests ${attempt} times; nothing was recorded, try again`,
          { cause: error },
        );
      // Jittered backoff: 20 ms, 40 ms, … so colliding writers fall out of step.
      await new Promise((resolve) => setTimeout(resolve, 20 * 2 ** (attempt - 1) * (0.5 + Math.random())));
    }
  }
}

/** Requests dated further ahead of the recorder's clock than this cannot be real; a new request replaces them. */
export const MAX_FUTURE_MS = 5 * 60_000;

/**
 * The write that makes `request` the gate's last request: only over an older one, or over one
 * that cannot be real (dated in the future, or without a usable time) so it can never wedge a gate.
 */
export function putGateRequest(db: TableClient, gate: string, request: GateRequest, now: Date) {
  const requestedAtMs = Date.parse(request.requestedAt);
  return {
    Put: {
      TableName: db.table,
      Item: { pk: gateKey(gate), sk: 'request', request, requestedAtMs },
      ConditionExpression:
        'attribute_not_exists(requestedAtMs) OR NOT attribute_type(requestedAtMs, :number) OR requestedAtMs < :t OR requestedAtMs > :future',
      ExpressionAttributeValues: {
        ':t': requestedAtMs,
        ':future': now.getTime() + MAX_FUTURE_MS,
        ':number': 'N',
      },
    },
  };
}

async function writeGateRequest(
  db: TableClient,
  gate: string,
  request: GateRequest,
  now: Date,
): Promise<'accepted' | 'stale'> {
  try {
    await db.doc.send(
      new TransactWriteCommand({
        TransactItems: [
          putGateRequest(db, gate, request, now),
          { Put: { TableName: db.table, Item: auditItem(gate, request, 'accepted', now) } },
        ],
      }),
    );
    return 'accepted';
  } catch (error) {
    const conditionFailed =
      error instanceof TransactionCanceledException &&
      error.CancellationReasons?.[0]?.Code === 'ConditionalCheckFailed';
    if (!conditionFailed) throw error;
    await db.doc.send(new PutCommand({ TableName: db.table, Item: auditItem(gate, request, 'stale', now) }));
    return 'stale';
  }
}

/** A gate's audit trail, newest first. */
export async function listGateAudit(db: TableClient, gate: string, limit = 50): Promise<GateAuditRecord[]> {
  const records: GateAuditRecord[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const page = await db.doc.send(
      new QueryCommand({
        TableName: db.table,
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
        ExpressionAttributeValues: { ':pk': gateKey(gate), ':prefix': 'audit#' },
        ScanIndexForward: false,
        Limit: limit - records.length,
        ExclusiveStartKey: start,
      }),
    );
    records.push(...(page.Items ?? []).map((item) => item.record as GateAuditRecord));
    start = page.LastEvaluatedKey;
  } while (start && records.length < limit);
  return records;
}
