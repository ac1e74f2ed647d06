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
  /** Each approval: who (ARN), when, and who it counts as (the approver key; the ARN for older items). */
  readonly approvals: readonly {
    readonly principal: string;
    readonly at: string;
    readonly approver?: string;
  }[];
  /** When the last approval lapses unless the others arrive (PENDING_APPROVAL_MS after the first). */
  readonly expiresAt: string;
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
): Promise<PendingApprovals | undefined> {
  const { Item } = await db.doc.send(
    new GetCommand({ TableName: db.table, Key: KEY(gate), ConsistentRead: true }),
  );
  const pending = Item?.pending as PendingApprovals | undefined;
  return pending && Date.parse(pending.expiresAt) > now.getTime() ? pending : undefined;
}

/** Drops gathered approvals: a close request vetoes them. */
export async function clearPendingApprovals(db: TableClient, gate: string): Promise<void> {
  await db.doc.send(new DeleteCommand({ TableName: db.table, Key: KEY(gate) }));
}

/**
 * Adds one verified principal's open request to the approvals a gate is gathering. When
 * `required` distinct approvers (by approver key: sessions of one role are one approver) have approved the same revision, the open request is recorded
 * (with all of them in `approvedBy`) and the gathered approvals are cleared, in one transaction.
 * Every write is conditional on the version read, so concurrent approvals are never lost.
 */
export async function addApproval(
  db: TableClient,
  gate: string,
  request: GateRequest,
  required: number,
  now: Date,
): Promise<ApprovalOutcome> {
  return retryOnConflict(`the approval by ${request.requestedBy}`, gate, async () => {
    for (;;) {
      const outcome = await tryAddApproval(db, gate, request, required, now);
      if (outcome) return outcome;
    }
  });
}

async function tryAddApproval(
  db: TableClient,
  gate: string,
  request: GateRequest,
  required: number,
  now: Date,
): Promise<ApprovalOutcome | undefined> {
  const { Item } = await db.doc.send(
    new GetCommand({ TableName: db.table, Key: KEY(gate), ConsistentRead: true }),
  );
  const version = (Item?.version as number | undefined) ?? 0;
  const stored = Item?.pending as PendingApprovals | undefined;
  const current =
    stored && Date.parse(stored.expiresAt) > now.getTime() && stored.revision === request.revision
      ? stored
      : undefined;
  const approver = request.approver ?? request.requestedBy;
  if (current?.approvals.some((approval) => (approval.approver ?? approval.principal) === approver)) {
    await db.doc.send(
      new PutCommand({ TableName: db.table, Item: auditItem(gate, request, 'pending', now) }),
    );
    return { outcome: 'pending', pending: current, duplicate: true };
  }
  const approvals = [
    ...(current?.approvals ?? []),
    { principal: request.requestedBy, at: request.requestedAt, approver },
  ];
  const unchanged = {
    ConditionExpression: Item ? 'version = :version' : 'attribute_not_exists(pk)',
    ...(Item && { ExpressionAttributeValues: { ':version': version } }),
  };
  try {
    if (approvals.length >= required) {
      const approvedBy = approvals.map((approval) => approval.principal);
      const opening: GateRequest = { ...request, approvedBy };
      const seen = await readGateRequest(db, gate);
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
      approvals,
      expiresAt: new Date(
        Date.parse(current ? current.approvals[0]!.at : request.requestedAt) + PENDING_APPROVAL_MS,
      ).toISOString(),
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
