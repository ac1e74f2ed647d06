import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { GetCommand, PutCommand, QueryCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { randomUUID } from 'node:crypto';
import { MAX_WINDOW_MS } from '../config/defaults.ts';
import { formatDuration, type Gate, type GateAction } from '../config/index.ts';
import { getSpec, listSpecNames, putSpec, removeSpec, type SpecKind } from './specs.ts';
import { gateKey, type TableClient } from './table-client.ts';
import { PINNABLE_REVISION } from '../model/pinnable-revision.ts';

/**
 * Where a request came from, as recorded in the audit trail: `url` (through the gate's function
 * URL) and `invoke` (a direct invocation of the gate's alias) carry a proof STS verified;
 * `runbook` is an approval in the gate's Systems Manager runbook (its approvers read from AWS's
 * record); the others reached the function as claims.
 */
export type RequestSource = 'schedule' | 'console' | 'cli' | 'api' | 'url' | 'invoke' | 'runbook';

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
  /** True when AWS vouched for `requestedBy` (STS, for a request's proof). */
  readonly verified?: boolean;
  /** Who a verified approval counts as (approverKey): sessions of one role count once. */
  readonly approver?: string;
  /** The revision an open request approves (`<tag>@sha256:<hex>` or `sha256:<hex>`); others stay held. */
  readonly revision?: string;
  /** The deliveries an open request is for (sorted, distinct); absent: every delivery using the gate. */
  readonly deliveries?: readonly string[];
  /** The distinct verified principals whose approvals opened the gate, when it needs more than one. */
  readonly approvedBy?: readonly string[];
  /**
   * The earlier close requests still in effect when this one was made, each lasting its own
   * window: a later request never ends a close early (an open one lets releases through only while
   * it decides). Closes that another outlasts and outranks are left out.
   */
  readonly earlierCloses?: readonly GateRequest[];
}

export { PINNABLE_REVISION };

/** The problem with a request read from the table, or undefined when it can be evaluated. */
export function requestProblem(request: GateRequest): string | undefined {
  const raw = request as unknown as Record<string, unknown>;
  if (raw.action !== 'open' && raw.action !== 'close')
    return `its action ${JSON.stringify(raw.action)} is not open or close`;
  if (typeof raw.requestedAt !== 'string' || Number.isNaN(Date.parse(raw.requestedAt)))
    return `its time ${JSON.stringify(raw.requestedAt)} is not an ISO 8601 time`;
  const window = raw.windowMs;
  if (
    window !== undefined &&
    !(Number.isSafeInteger(window) && (window as number) > 0 && (window as number) <= MAX_WINDOW_MS)
  )
    return `its window ${JSON.stringify(window)} ms is not between 1 ms and ${formatDuration(MAX_WINDOW_MS)}`;
  if (
    raw.revision !== undefined &&
    (typeof raw.revision !== 'string' || !PINNABLE_REVISION.test(raw.revision))
  )
    return `its revision ${JSON.stringify(raw.revision)} is not <tag>@sha256:<hex>`;
  if (
    raw.deliveries !== undefined &&
    (!Array.isArray(raw.deliveries) ||
      raw.deliveries.length === 0 ||
      !raw.deliveries.every((name) => typeof name === 'string'))
  )
    return `its deliveries ${JSON.stringify(raw.deliveries)} are not a list of delivery names`;
  if (raw.earlierCloses !== undefined) {
    if (!Array.isArray(raw.earlierCloses)) return `its earlier closes are not a list`;
    for (const close of raw.earlierCloses as unknown[]) {
      const fields = close as Record<string, unknown> | null;
      if (typeof fields !== 'object' || fields === null || fields.action !== 'close')
        return `an earlier close it carries is not a close request`;
      const problem = requestProblem({ ...(fields as unknown as GateRequest), earlierCloses: undefined });
      if (problem) return `an earlier close it carries: ${problem}`;
    }
  }
  return undefined;
}

/** When a request's window ends, in ms since the epoch; Infinity for one that lasts until the next request. */
export const requestEnd = (request: GateRequest): number =>
  request.windowMs === undefined ? Infinity : Date.parse(request.requestedAt) + request.windowMs;

/** True when `request` has been made by `at` and its window is not over: it decides unless a later one does. */
export const covers = (request: GateRequest, at: number): boolean =>
  Date.parse(request.requestedAt) <= at && at < requestEnd(request);

/** How many earlier closes a request carries at most; beyond it the two oldest become one that outlasts both. */
const MAX_EARLIER_CLOSES = 8;

/**
 * `next` as it is stored over `previous`: carrying every close of `previous` (itself and the
 * closes it carries) still in effect at `next`'s time, but for those another close outranks (as
 * late or later) and outlasts. Only valid requests are carried (a stored one that cannot be
 * evaluated is replaced, as ever).
 */
export function withEarlierCloses(next: GateRequest, previous: GateRequest | undefined): GateRequest {
  const { earlierCloses: _, ...request } = next;
  const at = Date.parse(next.requestedAt);
  const valid = previous && requestProblem(previous) === undefined ? previous : undefined;
  const inEffect = [valid, ...(valid?.earlierCloses ?? [])]
    .filter((close): close is GateRequest => close?.action === 'close' && covers(close, at))
    .map(({ earlierCloses: __, ...close }) => close as GateRequest);
  const kept = inEffect
    .filter((close) => !(next.action === 'close' && requestEnd(next) >= requestEnd(close)))
    .filter((close, index, all) => !all.some((other, j) => j !== index && dominates(other, close, j < index)))
    .sort((a, b) => Date.parse(a.requestedAt) - Date.parse(b.requestedAt));
  while (kept.length > MAX_EARLIER_CLOSES) kept.splice(0, 2, mergedClose(kept[0]!, kept[1]!));
  return kept.length > 0 ? { ...request, earlierCloses: kept } : request;
}

/** `a` makes `b` irrelevant: made as late or later and lasting as long or longer (of equals, the first is kept). */
function dominates(a: GateRequest, b: GateRequest, aFirst: boolean): boolean {
  const [aStart, bStart, aEnd, bEnd] = [
    Date.parse(a.requestedAt),
    Date.parse(b.requestedAt),
    requestEnd(a),
    requestEnd(b),
  ];
  if (aStart === bStart && aEnd === bEnd) return aFirst;
  return aStart >= bStart && aEnd >= bEnd;
}

/** One close in place of two: from the later start to the later end, so it outranks and outlasts both. */
function mergedClose(a: GateRequest, b: GateRequest): GateRequest {
  const start = Math.max(Date.parse(a.requestedAt), Date.parse(b.requestedAt));
  const end = Math.max(requestEnd(a), requestEnd(b));
  const { windowMs: _, ...base } = requestEnd(b) >= requestEnd(a) ? b : a;
  return {
    ...base,
    requestedAt: new Date(start).toISOString(),
    ...(end !== Infinity && { windowMs: end - start }),
  };
}

/** The item listing every registered gate (one sort key per gate name). */
export const GATE_INDEX = 'gates';
/** How long audit records are kept by default (DynamoDB TTL). */
export const AUDIT_RETENTION_MS = 400 * 24 * 3_600_000;

/** One line of a gate's audit trail: a request and what became of it, or a break-glass override. */
export interface GateAuditRecord extends Omit<GateRequest, 'action'> {
  /** `override`: a break-glass override let `revision` through the gate (store/gate-overrides.ts). */
  readonly action: GateAction | 'override';
  readonly gate: string;
  /**
   * `accepted`: it is now the gate's last request; `stale`: a newer request was already stored;
   * `pending`: an approval recorded while the gate waits for more approvers; `refused`: a verified
   * console (runbook) approval the gate function turned down, `refusedBecause` says why.
   */
  readonly outcome: 'accepted' | 'stale' | 'pending' | 'refused';
  /** `refused`: why the request changed nothing. */
  readonly refusedBecause?: string;
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
  return (await readGateRequest(db, name)).request;
}

/** A gate's request item as read, so that it can be replaced only if nobody replaced it meanwhile. */
export interface StoredGateRequest {
  readonly request?: GateRequest;
  /** `requestedAtMs` as stored: a number for any request sluice wrote. */
  readonly requestedAtMs?: unknown;
  /** The token of the write that stored it; undefined when there is no item or it predates tokens. */
  readonly token?: string;
  readonly exists: boolean;
}

export async function readGateRequest(db: TableClient, name: string): Promise<StoredGateRequest> {
  const { Item } = await db.doc.send(
    new GetCommand({ TableName: db.table, Key: { pk: gateKey(name), sk: 'request' }, ConsistentRead: true }),
  );
  if (!Item) return { exists: false };
  return {
    exists: true,
    request: Item.request as GateRequest | undefined,
    requestedAtMs: Item.requestedAtMs,
    ...(typeof Item.token === 'string' && { token: Item.token }),
  };
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
 * already stored (then it is stale), carrying the closes still in effect (withEarlierCloses). A
 * stale close still in effect is carried by the stored request instead (carryingClose), so it
 * holds the gate once that request ends.
 * Either way it is appended to the audit trail. The write is conditional on the item read, so
 * concurrent requests resolve by `requestedAt` and none is lost or drops a close; one that
 * collides with another's transaction (DynamoDB's TransactionConflict) is tried again.
 */
export async function recordGateRequest(
  db: TableClient,
  gate: string,
  request: GateRequest,
  now: Date,
): Promise<'accepted' | 'stale'> {
  return retryOnConflict(`the ${request.action} request by ${request.requestedBy}`, gate, async () => {
    for (let attempt = 1; attempt <= REPLACE_ATTEMPTS; attempt++) {
      const seen = await readGateRequest(db, gate);
      if (supersedes(seen, request, now)) {
        const outcome = await writeGateRequest(db, gate, request, now, seen);
        if (outcome) return outcome;
      } else {
        const carried =
          request.action === 'close' && seen.request && requestProblem(seen.request) === undefined
            ? carryingClose(seen.request, request)
            : undefined;
        if (carried) {
          const outcome = await writeStored(db, gate, carried, request, now, seen);
          if (outcome) return outcome;
          continue;
        }
        await db.doc.send(
          new PutCommand({ TableName: db.table, Item: auditItem(gate, request, 'stale', now) }),
        );
        return 'stale';
      }
    }
    throw new Error(
      `gate '${gate}': the ${request.action} request by ${request.requestedBy} found the stored request replaced ${REPLACE_ATTEMPTS} times while writing; nothing was recorded, try again`,
    );
  });
}

/**
 * A schedule's firing goes to the audit trail only: gate state computes every schedule's firings
 * from its cron, so storing one could only make a lost invocation matter (it would displace the
 * person's request in effect).
 */
export async function auditScheduleFiring(db: TableClient, gate: string, request: GateRequest, now: Date) {
  await db.doc.send(new PutCommand({ TableName: db.table, Item: auditItem(gate, request, 'accepted', now) }));
}

/** A verified request that was turned down goes to the audit trail only, with why: it changes no state. */
export async function auditRefusal(
  db: TableClient,
  gate: string,
  request: GateRequest,
  refusedBecause: string,
  now: Date,
): Promise<void> {
  const item = auditItem(gate, request, 'refused', now);
  await db.doc.send(
    new PutCommand({ TableName: db.table, Item: { ...item, record: { ...item.record, refusedBecause } } }),
  );
}

/** How often a request is tried again when another request replaced the stored one between its read and its write. */
const REPLACE_ATTEMPTS = 10;

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
 * True when `request` may replace what was read: there is nothing stored, or what is stored is
 * older, or it cannot be real (dated in the future, or without a usable time) so that it can
 * never wedge a gate.
 */
export function supersedes(seen: StoredGateRequest, request: GateRequest, now: Date): boolean {
  const stored = seen.requestedAtMs;
  if (typeof stored !== 'number' || !Number.isFinite(stored)) return true;
  return stored < Date.parse(request.requestedAt) || stored > now.getTime() + MAX_FUTURE_MS;
}

/**
 * The write that makes `request` the gate's last request over `seen` (which the caller checked it
 * supersedes), with the closes of `seen` still in effect carried. It fails with
 * ConditionalCheckFailed when the stored request is no longer the one read.
 */
export function putGateRequest(db: TableClient, gate: string, request: GateRequest, seen: StoredGateRequest) {
  return replaceStored(db, gate, withEarlierCloses(request, seen.request), seen);
}

/**
 * `stored` (the request `seen` holds, which outranks `close`) carrying `close` among its earlier
 * closes, or undefined when `close` no longer matters at its time (it ended, or a close stored
 * outlasts it). A close that arrives late still holds the gate once the request after it ends.
 */
export function carryingClose(stored: GateRequest, close: GateRequest): GateRequest | undefined {
  const carried = withEarlierCloses(stored, { ...close, earlierCloses: stored.earlierCloses ?? [] });
  const before = JSON.stringify(stored.earlierCloses ?? []);
  return JSON.stringify(carried.earlierCloses ?? []) === before ? undefined : carried;
}

/** The conditional write of `stored` as the gate's request over `seen`. */
function replaceStored(db: TableClient, gate: string, stored: GateRequest, seen: StoredGateRequest) {
  const token = randomUUID();
  const unchanged = !seen.exists
    ? { ConditionExpression: 'attribute_not_exists(pk)' }
    : seen.token === undefined
      ? { ConditionExpression: 'attribute_exists(pk) AND attribute_not_exists(#token)' }
      : { ConditionExpression: '#token = :token', ExpressionAttributeValues: { ':token': seen.token } };
  return {
    Put: {
      TableName: db.table,
      Item: {
        pk: gateKey(gate),
        sk: 'request',
        request: stored,
        requestedAtMs: Date.parse(stored.requestedAt),
        token,
      },
      ...unchanged,
      ...(seen.exists && { ExpressionAttributeNames: { '#token': 'token' } }),
    },
  };
}

/** Writes the request and its audit record; undefined when the stored request changed since it was read. */
const writeGateRequest = (
  db: TableClient,
  gate: string,
  request: GateRequest,
  now: Date,
  seen: StoredGateRequest,
) => writeStored(db, gate, withEarlierCloses(request, seen.request), request, now, seen);

/** Writes `stored` as the gate's request, and `request`'s audit record; undefined when the stored request changed since it was read. */
async function writeStored(
  db: TableClient,
  gate: string,
  stored: GateRequest,
  request: GateRequest,
  now: Date,
  seen: StoredGateRequest,
): Promise<'accepted' | undefined> {
  try {
    await db.doc.send(
      new TransactWriteCommand({
        TransactItems: [
          replaceStored(db, gate, stored, seen),
          { Put: { TableName: db.table, Item: auditItem(gate, request, 'accepted', now) } },
        ],
      }),
    );
    return 'accepted';
  } catch (error) {
    const conditionFailed =
      error instanceof TransactionCanceledException &&
      error.CancellationReasons?.[0]?.Code === 'ConditionalCheckFailed';
    if (conditionFailed) return undefined;
    throw error;
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
