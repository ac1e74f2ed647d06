// Break-glass overrides: each lets one pinned revision through one gate for a bounded window. They
// are items of their own beside the gate's request, which they never touch, so the gate's state is
// what its schedules and requests make it, before, during and after an override.
import { randomUUID } from 'node:crypto';
import { PutCommand, QueryCommand, TransactWriteCommand, type PutCommandInput } from '@aws-sdk/lib-dynamodb';
import { MAX_OVERRIDE_LIMIT_MS } from '../config/defaults.ts';
import { AUDIT_RETENTION_MS, PINNABLE_REVISION, type RequestSource } from './gates.ts';
import { gateKey, type TableClient } from './table-client.ts';

/** One break-glass override of one gate, as stored. */
export interface GateOverride {
  /** Shared by the overrides one request made (one per gate). */
  readonly id: string;
  readonly gate: string;
  /** The one revision it lets through (`<tag>@sha256:<hex>` or `sha256:<hex>`); compared by digest. */
  readonly revision: string;
  /** The deliveries it is for (sorted, distinct); absent: every delivery whose `gates` name the gate. */
  readonly deliveries?: readonly string[];
  /** ISO 8601, the recording side's clock. */
  readonly madeAt: string;
  /** ISO 8601: it lets nothing through from this instant on. */
  readonly endsAt: string;
  /** The principal AWS verified (STS for a proof, Systems Manager for a runbook). */
  readonly madeBy: string;
  readonly reason: string;
  readonly source: RequestSource;
}

/** A conditional put written in an override's transaction. */
export type PutInput = Pick<PutCommandInput, 'TableName' | 'Item' | 'ConditionExpression'>;

const PREFIX = 'override#';
/** The most overrides of one gate read at once: more than this in force at one time is not break-glass. */
export const MAX_ACTIVE_OVERRIDES = 25;

/** The problem with an override read from the table, or undefined when it can be evaluated. */
export function overrideProblem(override: GateOverride): string | undefined {
  const raw = override as unknown as Record<string, unknown>;
  const madeAt = typeof raw.madeAt === 'string' ? Date.parse(raw.madeAt) : NaN;
  const endsAt = typeof raw.endsAt === 'string' ? Date.parse(raw.endsAt) : NaN;
  if (Number.isNaN(madeAt) || Number.isNaN(endsAt)) return 'its window is not two ISO 8601 times';
  if (endsAt <= madeAt || endsAt - madeAt > MAX_OVERRIDE_LIMIT_MS) return 'its window is not 1 ms to 24h';
  if (typeof raw.revision !== 'string' || !PINNABLE_REVISION.test(raw.revision))
    return 'its revision is not <tag>@sha256:<hex>';
  if (
    raw.deliveries !== undefined &&
    (!Array.isArray(raw.deliveries) || !raw.deliveries.every((name) => typeof name === 'string'))
  )
    return 'its deliveries are not a list of names';
  return undefined;
}

/** True when `override` was made by `at` and has not ended: it is computed, never undone by a timer. */
export const overrideActiveAt = (override: GateOverride, at: Date): boolean =>
  overrideProblem(override) === undefined &&
  Date.parse(override.madeAt) <= at.getTime() &&
  at.getTime() < Date.parse(override.endsAt);

/**
 * The gate's overrides in force at `at`, oldest first. The sort key starts with the end time, so
 * the query reads only those not ended; one that cannot be evaluated lets nothing through.
 */
export async function activeOverrides(db: TableClient, gate: string, at: Date): Promise<GateOverride[]> {
  const { Items } = await db.doc.send(
    new QueryCommand({
      TableName: db.table,
      KeyConditionExpression: 'pk = :pk AND sk BETWEEN :from AND :to',
      ExpressionAttributeValues: {
        ':pk': gateKey(gate),
        ':from': `${PREFIX}${at.toISOString()}`,
        ':to': `${PREFIX}\uffff`,
      },
      ConsistentRead: true,
      Limit: MAX_ACTIVE_OVERRIDES,
    }),
  );
  return (Items ?? [])
    .map((item) => item.override as GateOverride)
    .filter((override) => overrideActiveAt(override, at))
    .sort((a, b) => Date.parse(a.madeAt) - Date.parse(b.madeAt));
}

/**
 * Stores the overrides one request made, each with its gate's audit row (action `override`), in
 * one transaction with the conditional puts `alsoPut` (a runbook execution's claim): all of them or
 * none. The gates' own requests are not touched.
 */
export async function putOverrides(
  db: TableClient,
  overrides: readonly GateOverride[],
  alsoPut: readonly PutInput[] = [],
): Promise<void> {
  const items = overrides.flatMap((override) => [
    {
      Put: {
        TableName: db.table,
        Item: {
          pk: gateKey(override.gate),
          sk: `${PREFIX}${override.endsAt}#${override.id}`,
          override,
          // Kept as long as the audit trail; an ended override lets nothing through whatever is kept.
          expiresAt: Math.floor((Date.parse(override.endsAt) + AUDIT_RETENTION_MS) / 1000),
        },
        ConditionExpression: 'attribute_not_exists(pk)',
      },
    },
    { Put: { TableName: db.table, Item: overrideAuditItem(override) } },
  ]);
  await db.doc.send(
    new TransactWriteCommand({ TransactItems: [...items, ...alsoPut.map((put) => ({ Put: put }))] }),
  );
}

/** The audit row of an override: a line of the gate's history marked `override`. */
function overrideAuditItem(override: GateOverride) {
  const madeAt = Date.parse(override.madeAt);
  return {
    pk: gateKey(override.gate),
    sk: `audit#${override.madeAt}#${override.id}`,
    record: {
      gate: override.gate,
      action: 'override' as const,
      requestedAt: override.madeAt,
      requestedBy: override.madeBy,
      verified: true,
      reason: override.reason,
      source: override.source,
      windowMs: Date.parse(override.endsAt) - madeAt,
      revision: override.revision,
      ...(override.deliveries && { deliveries: override.deliveries }),
      outcome: 'accepted' as const,
      recordedAt: override.madeAt,
    },
    expiresAt: Math.floor((madeAt + AUDIT_RETENTION_MS) / 1000),
  };
}

/** What a refused override asked for, as its audit rows say it. */
export type RefusedOverride = Pick<GateOverride, 'revision' | 'deliveries' | 'reason' | 'source'> & {
  readonly requestedAt: string;
  readonly requestedBy: string;
  readonly windowMs: number;
};

/**
 * A verified override that was turned down goes to the audit trail of each gate only (action
 * `override`, outcome `refused`, `refusedBecause`): no override, no claim, no state.
 */
export async function auditOverrideRefusal(
  db: TableClient,
  gates: readonly string[],
  asked: RefusedOverride,
  refusedBecause: string,
  now: Date,
): Promise<void> {
  const id = randomUUID();
  for (const gate of gates)
    await db.doc.send(
      new PutCommand({
        TableName: db.table,
        Item: {
          pk: gateKey(gate),
          sk: `audit#${asked.requestedAt}#${id}`,
          record: {
            gate,
            action: 'override' as const,
            ...asked,
            verified: true,
            outcome: 'refused' as const,
            refusedBecause,
            recordedAt: now.toISOString(),
          },
          expiresAt: Math.floor((now.getTime() + AUDIT_RETENTION_MS) / 1000),
        },
      }),
    );
}
