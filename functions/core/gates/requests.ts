import type { Clock } from '../clock.ts';
import type { Gate } from '../config/index.ts';
import { deliveriesUsingGate } from '../store/delivery-lookups.ts';
import {
  addApproval,
  clearPendingApprovals,
  getPendingApprovals,
  type ApprovalRule,
  type PendingApprovals,
} from '../store/gate-approvals.ts';
import {
  auditScheduleFiring,
  getGate,
  getGateRequest,
  listGateNames,
  recordGateRequest,
  type GateRequest,
} from '../store/gates.ts';
import type { TableClient } from '../store/table-client.ts';
import { admitRequest } from './admission.ts';
import { alarmHoldsText } from '../alarms/alarms.ts';
import type { AlarmHold } from '../model/status.ts';
import { approverKey, mayBeOnePerson } from '../access/approver-key.ts';
import { claimedCaller, type Caller } from '../access/caller.ts';
import type { ClosedPeriod } from '../calendars/closed-periods.ts';
import { readGateConditions, type GateConditionReaders } from './conditions.ts';
import { skippedScheduleWarnings } from '../config/skipped-schedules.ts';
import { holidaySetReport, type HolidaySetReport } from '../calendars/holidays.ts';
import { effectiveGateState, type EffectiveGateState } from './effective-state.ts';
import { GateEventError, type GateEvent } from './event.ts';
import { describeGate, requestAuthors } from './messages.ts';
import { activeOverrides, type GateOverride } from '../store/gate-overrides.ts';
import type { GateOverrideEvent } from './override.ts';
import type { CallerIdentityService } from '../access/proof.ts';
import type { SignerRules } from '../access/signers.ts';
import { gateStateAt, lastClosedAt, nextChange, type GateChange, type GateStatus } from './state.ts';

/** Arranges for the deliveries waiting on a gate to reconcile when its window ends and it reopens. */
export interface WindowTimer {
  reopenAt(gate: string, at: Date): Promise<void>;
}

/**
 * What handling a gate request reaches outside itself (and the readers of what closes a gate
 * besides its requests: alarms, Change Calendars).
 */
export interface GateDeps extends GateConditionReaders {
  readonly db: TableClient;
  readonly clock: Clock;
  /** Reconciles the named deliveries now: asynchronous invocations of the reconcile function in AWS. */
  readonly reconcileNow?: (deliveries: readonly string[]) => Promise<void>;
  readonly windowTimer?: WindowTimer;
  /** Publishes `Gate Opened` / `Gate Closed` when a request changes the state (EventBridge in AWS). */
  /** And `Gate Override` when a break-glass override is made (override-request.ts). */
  readonly publish?: (
    detailType: 'Gate Opened' | 'Gate Closed' | 'Gate Override',
    detail: GateChangedEvent | GateOverrideEvent,
  ) => Promise<void>;
  readonly log?: (message: string) => void;
  /** Verifies the proofs that signed requests carry (STS in AWS). */
  readonly sts?: CallerIdentityService;
  /** Who may act through which entry, and the accounts trusted (the construct's grants); none: no signer may act. */
  readonly signers?: SignerRules;
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
  /**
   * `stale`: a request at the same time or later was already stored; this one changed nothing.
   * `pending`: an approval was recorded; the gate waits for more approvers.
   * `refused`: a verified console (runbook) approval was turned down (audited; the message says why).
   */
  readonly outcome: 'accepted' | 'stale' | 'pending' | 'status' | 'refused';
  readonly status: GateStatus;
  readonly nextChange?: GateChange;
  /** Approvals gathered so far when the gate needs more than one approver. */
  readonly pendingApprovals?: PendingApprovals;
  /** Deliveries asked to reconcile because the gate opened. */
  readonly reconciling: readonly string[];
  /** The alarms closing the gate now, whatever its requests say. */
  readonly closedByAlarms?: readonly AlarmHold[];
  /** The state a delivery meets now (alarms, freezes, calendars included) and its cause. */
  readonly effective?: EffectiveGateState;
  readonly message: string;
}

/** `gate closed by alarm 'x' (in ALARM since …); by its requests: ` when alarms close it. */
const alarmClause = (holds: readonly AlarmHold[] | undefined): string =>
  holds?.length ? `closed by ${alarmHoldsText(holds)}; by its requests: ` : '';

async function registeredGate(db: TableClient, name: string): Promise<Gate> {
  const gate = await getGate(db, name);
  if (gate) return gate;
  const known = await listGateNames(db);
  throw new GateEventError(
    `gate '${name}' is not registered (${known.length > 0 ? `registered gates: ${known.join(', ')}` : 'no gates are registered'})`,
  );
}

/** How `gate` counts approvals at `now`: those made before it last closed (a freeze included) no longer count. */
const approvalRule = (gate: Gate, now: Date, periods: readonly ClosedPeriod[]): ApprovalRule => ({
  required: gate.approvers,
  keyOf: (principal) => approverKey(principal, gate),
  sameApprover: (a, b) => mayBeOnePerson(a, b, gate),
  lastClosedAt: (recorded) => lastClosedAt(gate, recorded, now, periods),
});

/** What `sluice gates` shows of one gate. */
export interface GateReport {
  /** The state a delivery meets now, alarms included, and what decides it. */
  readonly effective: EffectiveGateState;
  /** The state its requests, schedules, default, freezes, calendars and Change Calendars give (alarms aside). */
  readonly status: GateStatus;
  readonly nextChange?: GateChange;
  readonly pendingApprovals?: PendingApprovals;
  /** The alarms closing the gate now, whatever `status` says (gates with `alarms`). */
  readonly closedByAlarms?: readonly AlarmHold[];
  /** Break-glass overrides in force (they let one revision each through; the state above is the gate's own). */
  readonly overrides?: readonly GateOverride[];
  /** The gate's holiday set and the version of the library's data its dates come from. */
  readonly holidays?: HolidaySetReport;
  /** Schedules naming local times clocks skip in the next two years (Scheduler does not fire them then). */
  readonly warnings?: readonly string[];
}

/**
 * A gate's state now, its last request, its next change (across freezes and calendars), the
 * approvals it is gathering, the alarms closing it and the break-glass overrides in force.
 */
export async function gateStatus(
  name: string,
  deps: Pick<GateDeps, 'db' | 'clock' | keyof GateConditionReaders>,
): Promise<GateReport> {
  const gate = await registeredGate(deps.db, name);
  const request = await getGateRequest(deps.db, name);
  const now = deps.clock.now();
  const { periods, alarms: closedByAlarms } = await readGateConditions(gate, now, deps);
  const pendingApprovals =
    gate.approvers > 1
      ? await getPendingApprovals(deps.db, name, now, lastClosedAt(gate, request, now, periods))
      : undefined;
  const overrides = await activeOverrides(deps.db, name, now);
  const status = gateStateAt(gate, request, now, periods);
  const holidays = gate.holidays && (await holidaySetReport(gate.holidays));
  const warnings = skippedScheduleWarnings(gate, now);
  return {
    effective: effectiveGateState(status, closedByAlarms),
    status,
    nextChange: nextChange(gate, request, now, undefined, periods),
    ...(pendingApprovals && { pendingApprovals }),
    ...(closedByAlarms.length > 0 && { closedByAlarms }),
    ...(overrides.length > 0 && { overrides }),
    ...(holidays && { holidays }),
    ...(warnings.length > 0 && { warnings }),
  };
}

/**
 * Handles one gate event: `status` reads; `open`/`close` records the request (conditionally, so
 * the later request wins), audits it, and when the gate opens reconciles every delivery that
 * uses it. The request's time is this side's clock (a schedule's: a real firing of its cron);
 * its author is `caller`, verified when it came through the gate's function URL.
 */
export async function handleGateEvent(
  event: GateEvent,
  deps: GateDeps,
  caller: Caller = claimedCaller(event.requestedBy, event.source),
): Promise<GateRequestResult> {
  const gate = await registeredGate(deps.db, event.gate);
  const now = deps.clock.now();
  if (event.action === 'status') {
    const {
      status,
      effective,
      nextChange: next,
      pendingApprovals,
      closedByAlarms,
    } = await gateStatus(event.gate, deps);
    return {
      gate: gate.name,
      action: 'status',
      outcome: 'status',
      status,
      nextChange: next,
      ...(pendingApprovals && { pendingApprovals }),
      ...(closedByAlarms && { closedByAlarms }),
      effective,
      reconciling: [],
      message: `${alarmClause(closedByAlarms)}${describeGate(status, next, pendingApprovals, gate.approvers)}`,
    };
  }
  const request = await admitRequest(gate, event, caller, deps.db, now);

  const { periods, alarms: closedByAlarms } = await readGateConditions(gate, now, deps);
  const stored = await getGateRequest(deps.db, gate.name);
  const before = gateStateAt(gate, stored, now, periods);
  let outcome: GateRequestResult['outcome'];
  let pendingApprovals: PendingApprovals | undefined;
  if (request.source === 'schedule') {
    await auditScheduleFiring(deps.db, gate.name, request, now);
    outcome = 'accepted';
  } else if (request.action === 'open' && gate.approvers > 1) {
    const approval = await addApproval(deps.db, gate.name, request, approvalRule(gate, now, periods), now);
    outcome = approval.outcome;
    if (approval.outcome === 'pending') pendingApprovals = approval.pending;
  } else {
    outcome = await recordGateRequest(deps.db, gate.name, request, now);
    if (request.action === 'close' && gate.approvers > 1) await clearPendingApprovals(deps.db, gate.name);
  }
  const after = await getGateRequest(deps.db, gate.name);
  const status = gateStateAt(gate, after, now, periods);
  const next = nextChange(gate, after, now, undefined, periods);

  // A schedule's firing counts from its cron even before it is recorded, so its arrival (not a
  // state change) is what starts the catch-up reconciles; so does a new revision being approved.
  const opened =
    status.state === 'open' &&
    (before.state === 'closed' ||
      before.revision !== status.revision ||
      String(before.deliveries) !== String(status.deliveries) ||
      (request.source === 'schedule' && outcome === 'accepted'));
  let reconciling: string[] = [];
  if (opened) {
    const using = await deliveriesUsingGate(deps.db, gate.name);
    reconciling = status.deliveries ? using.filter((name) => status.deliveries!.includes(name)) : using;
    if (reconciling.length > 0) await deps.reconcileNow?.(reconciling);
  }
  // A window, freeze or calendar event that ends reopens the gate with no invocation of its own:
  // a timer catches up then. (A schedule that opens it invokes the gate function itself.)
  if (outcome === 'accepted' && status.state === 'closed') {
    const reopens = nextChange(gate, after, now, 'open', periods);
    if (reopens && reopens.cause !== 'schedule')
      await deps.windowTimer?.reopenAt(gate.name, new Date(reopens.at)).catch((error: unknown) => {
        throw new Error(
          `gate '${gate.name}': the ${request.action} request was recorded, but the schedule that reconciles the waiting deliveries when it ends was not created (the delivery interval is the backstop): ${(error as Error).message}`,
          { cause: error },
        );
      });
  }

  if (before.state !== status.state && after) {
    const detail = { gate: gate.name, state: status.state, request: after, until: status.until, reconciling };
    await deps
      .publish?.(status.state === 'open' ? 'Gate Opened' : 'Gate Closed', detail)
      .catch((error: unknown) => deps.log?.(`could not publish the gate event: ${String(error)}`));
  }

  const prefix =
    outcome === 'stale'
      ? `request ignored: a request made at or after ${request.requestedAt} is already stored (${after?.action} by ${after ? requestAuthors(after) : '-'} at ${after?.requestedAt}). `
      : '';
  const catchUp = reconciling.length > 0 ? `; reconciling ${reconciling.join(', ')}` : '';
  const effective = effectiveGateState(status, closedByAlarms);
  const described =
    effective.state === stateByRequests(gate, after, now).state
      ? describeGate(status, next, pendingApprovals, gate.approvers)
      : heldAnyway(gate, after, now, pendingApprovals, effective);
  const message = `${prefix}${described}${catchUp}`;
  deps.log?.(message);
  return {
    gate: gate.name,
    action: event.action,
    outcome,
    status,
    nextChange: next,
    ...(pendingApprovals && { pendingApprovals }),
    ...(closedByAlarms.length > 0 && { closedByAlarms }),
    effective,
    reconciling,
    message,
  };
}

/** The gate's state as its requests, schedules and default give it, without alarms, freezes or calendars. */
const stateByRequests = (gate: Gate, recorded: GateRequest | undefined, now: Date): GateStatus =>
  gateStateAt(gate, recorded, now);

/**
 * A request recorded while an alarm, a freeze, a calendar event or a CLOSED Change Calendar holds
 * the gate closed anyway: what was recorded, then the state a delivery meets and why, e.g.
 * `recorded: gate 'shop-healthy' is open until … (open by alice: CHG-1); the gate stays closed:
 * alarm 'shop-5xx' in ALARM since …`.
 */
function heldAnyway(
  gate: Gate,
  recorded: GateRequest | undefined,
  now: Date,
  pendingApprovals: PendingApprovals | undefined,
  effective: EffectiveGateState,
): string {
  const requested = describeGate(
    stateByRequests(gate, recorded, now),
    nextChange(gate, recorded, now),
    pendingApprovals,
    gate.approvers,
  );
  return `recorded: ${requested}; the gate stays ${effective.state}: ${effective.why}`;
}
