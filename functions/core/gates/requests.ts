import type { Clock } from '../clock.ts';
import type { Gate } from '../config/index.ts';
import { listDeliveries } from '../store/deliveries.ts';
import { getGate, getGateRequest, listGateNames, recordGateRequest } from '../store/gates.ts';
import type { TableClient } from '../store/table-client.ts';
import { GateEventError, type GateEvent } from './event.ts';
import { describeGate } from './messages.ts';
import { gateStateAt, nextChange, type GateChange, type GateRequest, type GateStatus } from './state.ts';

/** Arranges for the deliveries waiting on a gate to reconcile when its window ends and it reopens. */
export interface WindowTimer {
  reopenAt(gate: string, at: Date): Promise<void>;
}

/** What handling a gate request reaches outside itself. */
export interface GateDeps {
  readonly db: TableClient;
  readonly clock: Clock;
  /** Reconciles the named deliveries now: asynchronous invocations of the reconcile function in AWS. */
  readonly reconcileNow?: (deliveries: readonly string[]) => Promise<void>;
  readonly windowTimer?: WindowTimer;
  /** Publishes `Gate Opened` / `Gate Closed` when a request changes the state (EventBridge in AWS). */
  readonly publish?: (detailType: 'Gate Opened' | 'Gate Closed', detail: GateChangedEvent) => Promise<void>;
  readonly log?: (message: string) => void;
}

export interface GateChangedEvent {
  readonly gate: string;
  readonly state: GateStatus['state'];
  readonly request: GateRequest;
  readonly until?: string;
  readonly reconciling: readonly string[];
}

export interface GateRequestResult {
  readonly gate: string;
  readonly action: GateEvent['action'];
  /** `stale`: a request at the same time or later was already stored; this one changed nothing. */
  readonly outcome: 'accepted' | 'stale' | 'status';
  readonly status: GateStatus;
  readonly nextChange?: GateChange;
  /** Deliveries asked to reconcile because the gate opened. */
  readonly reconciling: readonly string[];
  readonly message: string;
}

/** Requests may come from clocks a little ahead of ours, but not from the future. */
const MAX_CLOCK_SKEW_MS = 5 * 60_000;

async function registeredGate(db: TableClient, name: string): Promise<Gate> {
  const gate = await getGate(db, name);
  if (gate) return gate;
  const known = await listGateNames(db);
  throw new GateEventError(
    `gate '${name}' is not registered (${known.length > 0 ? `registered gates: ${known.join(', ')}` : 'no gates are registered'})`,
  );
}

/** The deliveries that reference a gate (in `gates`, or as the approval gate of their pruneLimit). */
export async function deliveriesUsingGate(db: TableClient, gate: string): Promise<string[]> {
  return (await listDeliveries(db))
    .filter((delivery) => delivery.gates.some((ref) => ref.name === gate) || delivery.pruneLimitGate === gate)
    .map((delivery) => delivery.name);
}

/** A gate's state now, its last request and its next change. */
export async function gateStatus(
  name: string,
  deps: Pick<GateDeps, 'db' | 'clock'>,
): Promise<{ status: GateStatus; nextChange?: GateChange }> {
  const gate = await registeredGate(deps.db, name);
  const request = await getGateRequest(deps.db, name);
  const now = deps.clock.now();
  return { status: gateStateAt(gate, request, now), nextChange: nextChange(gate, request, now) };
}

/**
 * Handles one gate event: `status` reads; `open`/`close` records the request (conditionally, so
 * the later `requestedAt` wins), audits it, and when the gate opens reconciles every delivery
 * that uses it. A request whose window will reopen the gate sets a timer for that moment.
 */
export async function handleGateEvent(event: GateEvent, deps: GateDeps): Promise<GateRequestResult> {
  const gate = await registeredGate(deps.db, event.gate);
  const now = deps.clock.now();
  if (event.action === 'status') {
    const { status, nextChange: next } = await gateStatus(event.gate, deps);
    return {
      gate: gate.name,
      action: 'status',
      outcome: 'status',
      status,
      nextChange: next,
      reconciling: [],
      message: describeGate(status, next),
    };
  }
  if (event.requestedAt && Date.parse(event.requestedAt) > now.getTime() + MAX_CLOCK_SKEW_MS)
    throw new GateEventError(`"requestedAt": ${event.requestedAt} is in the future`);

  const windowMs = event.windowMs ?? gate.windowMs;
  const request: GateRequest = {
    action: event.action,
    requestedAt: event.requestedAt ?? now.toISOString(),
    requestedBy: event.requestedBy ?? `unknown (${event.source})`,
    reason: event.reason ?? '',
    source: event.source,
    ...(windowMs !== undefined && { windowMs }),
  };
  const before = gateStateAt(gate, await getGateRequest(deps.db, gate.name), now);
  const outcome = await recordGateRequest(deps.db, gate.name, request, now);
  const stored = await getGateRequest(deps.db, gate.name);
  const status = gateStateAt(gate, stored, now);
  const next = nextChange(gate, stored, now);

  let reconciling: string[] = [];
  if (before.state === 'closed' && status.state === 'open') {
    reconciling = await deliveriesUsingGate(deps.db, gate.name);
    if (reconciling.length > 0) await deps.reconcileNow?.(reconciling);
  }
  if (outcome === 'accepted' && status.state === 'closed' && status.until) {
    const reopens = gateStateAt(gate, stored, new Date(status.until)).state === 'open';
    if (reopens) await deps.windowTimer?.reopenAt(gate.name, new Date(status.until));
  }

  if (before.state !== status.state && stored) {
    const detail = {
      gate: gate.name,
      state: status.state,
      request: stored,
      until: status.until,
      reconciling,
    };
    await deps
      .publish?.(status.state === 'open' ? 'Gate Opened' : 'Gate Closed', detail)
      .catch((error: unknown) => deps.log?.(`could not publish the gate event: ${String(error)}`));
  }

  const prefix =
    outcome === 'stale'
      ? `request ignored: a request made at or after ${request.requestedAt} is already stored (${stored?.action} by ${stored?.requestedBy} at ${stored?.requestedAt}). `
      : '';
  const catchUp = reconciling.length > 0 ? `; reconciling ${reconciling.join(', ')}` : '';
  const message = `${prefix}${describeGate(status, next)}${catchUp}`;
  deps.log?.(message);
  return { gate: gate.name, action: event.action, outcome, status, nextChange: next, reconciling, message };
}
