import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { DeleteCommand, GetCommand, PutCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import {
  auditItem,
  putGateRequest,
  readGateRequest,
  retryOnConflict,
  supersedes,
  type GateRequest,
} from './gates.ts';
import { gateKey, type TableClient } from './table-client.ts';

/** Approvals gathered for a gate that needs more than one approver, before it opens. */
export interface PendingApprovals {
  /** The revision they approve; none: any revision. Approvals of different revisions do not add up. */
  readonly revision?: string;
  /** The deliveries they approve it for; none: every one. Approvals for different deliveries do not add up. */
  readonly deliveries?: readonly string[];
  /** Each approval: who (ARN), when, who it counts as (the approver key) and for how long it would open the gate. */
  readonly approvals: readonly Approval[];
  /** When the last approval lapses unless the others arrive (PENDING_APPROVAL_MS after the first). */
  readonly expiresAt: string;
}

export interface Approval {
  readonly principal: string;
  readonly at: string;
  /** The approver key; absent on items stored before keys, whose key is computed from `principal`. */
  readonly approver?: string;
  /** The window the approver asked for; absent: no end. */
  readonly windowMs?: number;
}

/** How a gate counts approvals. */
export interface ApprovalRule {
  /** How many distinct approvers open the gate. */
  readonly required: number;
  /** The approver key of a principal (for approvals stored without one). */
  readonly keyOf: (principal: string) => string;
  /**
   * True when two principals with different keys may still be one approver (a role's own ARN and
   * a session of that role); none: keys alone decide.
   */
  readonly sameApprover?: (a: string, b: string) => boolean;
  /**
   * When the gate was last asked to close (ms), given its stored request: approvals made before
   * then no longer count, whether the close was a request or a schedule's firing.
   */
  readonly lastClosedAt: (recorded: GateRequest | undefined) => number;
}

/** How long gathered approvals wait for the rest: one working day. */
export const PENDING_APPROVAL_MS = 24 * 3_600_000;

export type ApprovalOutcome =
  | { readonly outcome: 'accepted'; readonly approvedBy: readonly string[] }
  | { readonly outcome: 'stale' }
  | { readonly outcome: 'pending'; readonly pending: PendingApprovals; readonly duplicate: boolean };

const KEY = (gate: string) => ({ pk: gateKey(gate), sk: 'approvals' });

/** The approvals a gate is gathering at `now`, if any have not lapsed. */
export async function getPendingApprovals(
  db: TableClient,
  gate: string,
  now: Date,
  closedAt = -Infinity,
): Promise<PendingApprovals | undefined> {
  const { Item } = await db.doc.send(
    new GetCommand({ TableName: db.table, Key: KEY(gate), ConsistentRead: true }),
  );
  return stillCounting(Item?.pending as PendingApprovals | undefined, now, closedAt);
}

/** `pending` without the approvals made at or before the last close; undefined when none is left or they lapsed. */
function stillCounting(
  pending: PendingApprovals | undefined,
  now: Date,
  closedAt: number,
): PendingApprovals | undefined {
  if (!pending || Date.parse(pending.expiresAt) <= now.getTime()) return undefined;
  const approvals = pending.approvals.filter((approval) => Date.parse(approval.at) > closedAt);
  if (approvals.length === pending.approvals.length) return pending;
  if (approvals.length === 0) return undefined;
  return { ...pending, approvals, expiresAt: lapsesAt(approvals[0]!.at) };
}

const lapsesAt = (firstApproval: string): string =>
  new Date(Date.parse(firstApproval) + PENDING_APPROVAL_MS).toISOString();

/** The shortest window the approvers asked for: none of them agreed to more. */
function agreedWindow(approvals: readonly Approval[]): number | undefined {
  const shortest = Math.min(...approvals.map((approval) => approval.windowMs ?? Infinity));
  return Number.isFinite(shortest) ? shortest : undefined;
}

/** Drops gathered approvals: a close request vetoes them. */
export async function clearPendingApprovals(db: TableClient, gate: string): Promise<void> {
  await db.doc.send(new DeleteCommand({ TableName: db.table, Key: KEY(gate) }));
}

/**
 * Adds one verified principal's open request to the approvals a gate is gathering. Approvals
 * made at or before the gate's last close (a request or a schedule's firing) no longer count.
 * When `required` distinct approvers (by approver key: sessions of one role are one approver)
 * have approved the same revision, the open request is recorded (with all of them in
 * `approvedBy`, for the shortest window any of them asked for) and the gathered approvals are
 * cleared, in one transaction. Every write is conditional on the approvals and the stored
 * request as read, so concurrent approvals are never lost and a close that lands meanwhile is
 * taken into account.
 */
export async function addApproval(
  db: TableClient,
  gate: string,
  request: GateRequest,
  rule: ApprovalRule,
  now: Date,
): Promise<ApprovalOutcome> {
  return retryOnConflict(`the approval by ${request.requestedBy}`, gate, async () => {
    for (;;) {
      const outcome = await tryAddApproval(db, gate, request, rule, now);
      if (outcome) return outcome;
    }
  });
}

async function tryAddApproval(
  db: TableClient,
  gate: string,
  request: GateRequest,
  rule: ApprovalRule,
  now: Date,
): Promise<ApprovalOutcome | undefined> {
  const { required } = rule;
  const seen = await readGateRequest(db, gate);
  const { Item } = await db.doc.send(
    new GetCommand({ TableName: db.table, Key: KEY(gate), ConsistentRead: true }),
  );
  const version = (Item?.version as number | undefined) ?? 0;
  const stored = stillCounting(
    Item?.pending as PendingApprovals | undefined,
    now,
    rule.lastClosedAt(seen.request),
  );
  const current =
    stored && stored.revision === request.revision && String(stored.deliveries) === String(request.deliveries)
      ? stored
      : undefined;
  const approver = request.approver ?? rule.keyOf(request.requestedBy);
  // The key stored with an approval, and the key its principal has now: an approval stored under an
  // earlier form of the key is still the same approver.
  const keysOf = (approval: Approval) =>
    [approval.approver, rule.keyOf(approval.principal)].flatMap((key) => (key ? [key.toLowerCase()] : []));
  const already = (approval: Approval) =>
    keysOf(approval).includes(approver.toLowerCase()) ||
    (rule.sameApprover?.(approval.principal, request.requestedBy) ?? false);
  if (current?.approvals.some(already)) {
    await db.doc.send(
      new PutCommand({ TableName: db.table, Item: auditItem(gate, request, 'pending', now) }),
    );
    return { outcome: 'pending', pending: current, duplicate: true };
  }
  const approvals: Approval[] = [
    ...(current?.approvals ?? []),
    {
      principal: request.requestedBy,
      at: request.requestedAt,
      approver,
      ...(request.windowMs !== undefined && { windowMs: request.windowMs }),
    },
  ];
  const unchanged = {
    ConditionExpression: Item ? 'version = :version' : 'attribute_not_exists(pk)',
    ...(Item && { ExpressionAttributeValues: { ':version': version } }),
  };
  try {
    if (approvals.length >= required) {
      const approvedBy = approvals.map((approval) => approval.principal);
      const { windowMs: _, ...asked } = request;
      const windowMs = agreedWindow(approvals);
      const opening: GateRequest = { ...asked, ...(windowMs !== undefined && { windowMs }), approvedBy };
      if (!supersedes(seen, opening, now)) {
        await db.doc.send(
          new PutCommand({ TableName: db.table, Item: auditItem(gate, request, 'stale', now) }),
        );
        return { outcome: 'stale' };
      }
      await db.doc.send(
        new TransactWriteCommand({
          TransactItems: [
            putGateRequest(db, gate, opening, seen),
            Item
              ? { Delete: { TableName: db.table, Key: KEY(gate), ...unchanged } }
              : { ConditionCheck: { TableName: db.table, Key: KEY(gate), ...unchanged } },
            { Put: { TableName: db.table, Item: auditItem(gate, opening, 'accepted', now) } },
          ],
        }),
      );
      return { outcome: 'accepted', approvedBy };
    }
    const pending: PendingApprovals = {
      ...(request.revision !== undefined && { revision: request.revision }),
      ...(request.deliveries !== undefined && { deliveries: request.deliveries }),
      approvals,
      expiresAt: lapsesAt(approvals[0]!.at),
    };
    await db.doc.send(
      new TransactWriteCommand({
        TransactItems: [
          {
            Put: {
              TableName: db.table,
              Item: { ...KEY(gate), pending, version: version + 1 },
              ...unchanged,
            },
          },
          { Put: { TableName: db.table, Item: auditItem(gate, request, 'pending', now) } },
        ],
      }),
    );
    return { outcome: 'pending', pending, duplicate: false };
  } catch (error) {
    const reasons = error instanceof TransactionCanceledException ? (error.CancellationReasons ?? []) : [];
    const failed = reasons.map((reason) => reason.Code);
    const approvalsMoved =
      failed.length > 0 && failed[approvals.length >= required ? 1 : 0] === 'ConditionalCheckFailed';
    if (approvalsMoved) return undefined; // someone else approved meanwhile: read again
    // Another request replaced the gate's request meanwhile: read both again (stale if it is newer).
    if (approvals.length >= required && failed[0] === 'ConditionalCheckFailed') return undefined;
    throw error;
  }
}
