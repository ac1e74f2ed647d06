import { MAX_WINDOW_MS } from '../config/defaults.ts';
import { formatDuration, type Gate, type GateAction, type GateState } from '../config/index.ts';
import { parseCron, type CronSchedule } from '../config/cron.ts';
import type { GateRequest } from '../store/gates.ts';

/** A gate's state at one instant, and why. */
export interface GateStatus {
  readonly name: string;
  readonly state: GateState;
  readonly default: GateState;
  /** True while a request (recorded, or a schedule's latest firing) is in effect; false at the default. */
  readonly byRequest: boolean;
  /** When the current state began, if known. */
  readonly since?: string;
  /** When the current request lapses and the gate returns to its default. */
  readonly until?: string;
  /** The request in effect or last in effect: the later of the recorded one and each schedule's latest firing. */
  readonly lastRequest?: GateRequest;
  /** The only revision the gate is open for, when the open request in effect names one. */
  readonly revision?: string;
  /** Why the stored request cannot be evaluated; the gate counts as closed until a new request replaces it. */
  readonly problem?: string;
}

const stateOf = (action: GateAction): GateState => (action === 'open' ? 'open' : 'closed');
/** How far ahead next-change times are looked for, and how far back a schedule's latest firing. */
const HORIZON_MS = 400 * 24 * 3_600_000;
const MAX_STEPS = 2_000;
const REVISION = /^(?:[A-Za-z0-9_][A-Za-z0-9._-]{0,127}@)?sha256:[a-f0-9]{64}$/;

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
  if (raw.revision !== undefined && (typeof raw.revision !== 'string' || !REVISION.test(raw.revision)))
    return `its revision ${JSON.stringify(raw.revision)} is not <tag>@sha256:<hex>`;
  return undefined;
}

/** True when `revision` has the shape a pinned approval names: `<tag>@sha256:<64 hex>` or `sha256:<64 hex>`. */
export const isPinnableRevision = (revision: string): boolean => REVISION.test(revision);

/** The digest part of a revision, which is what an approval is pinned to (tags move). */
export const digestOf = (revision: string): string => revision.slice(revision.lastIndexOf('sha256:'));

/**
 * The state at `at`. The request in effect is the later of the recorded request and each
 * schedule's latest firing at or before `at` (computed from the cron, so a lost invocation
 * changes nothing): its action while `requestedAt <= at < requestedAt + window`, else the default.
 * A recorded request that cannot be evaluated closes the gate, and the status says why.
 */
export function gateStateAt(gate: Gate, recorded: GateRequest | undefined, at: Date): GateStatus {
  const problem = recorded && requestProblem(recorded);
  if (problem) {
    return {
      name: gate.name,
      default: gate.default,
      lastRequest: recorded,
      state: 'closed',
      byRequest: false,
      problem: `the stored ${String(recorded.action)} request by ${String(recorded.requestedBy)} cannot be evaluated: ${problem}; the gate counts as closed until a new request replaces it`,
    };
  }
  return requestStateAt(gate, effectiveRequest(gate, recorded, at), at);
}

/**
 * The later of the recorded request and each schedule's latest firing, at `at`. Of two made at
 * the same instant, a close outranks an open (a closed gate holds), whatever the schedules' order.
 */
export function effectiveRequest(
  gate: Gate,
  recorded: GateRequest | undefined,
  at: Date,
): GateRequest | undefined {
  let latest = recorded && Date.parse(recorded.requestedAt) <= at.getTime() ? recorded : undefined;
  const notBefore = new Date(at.getTime() - HORIZON_MS);
  gate.schedules.forEach((schedule, index) => {
    const fired = cronOf(schedule.cron, schedule.timeZone).previous(at, notBefore);
    if (fired && (!latest || outranks(fired.getTime(), schedule.action, latest)))
      latest = scheduledRequest(gate, index, fired);
  });
  return latest;
}

function outranks(time: number, action: GateAction, other: GateRequest): boolean {
  const otherTime = Date.parse(other.requestedAt);
  return time > otherTime || (time === otherTime && action === 'close' && other.action !== 'close');
}

/** The state `request` alone gives the gate at `at`. */
function requestStateAt(gate: Gate, request: GateRequest | undefined, at: Date): GateStatus {
  const base = { name: gate.name, default: gate.default, lastRequest: request };
  if (!request) return { ...base, state: gate.default, byRequest: false };
  const start = Date.parse(request.requestedAt);
  const end = request.windowMs === undefined ? undefined : start + request.windowMs;
  const t = at.getTime();
  if (t < start) return { ...base, state: gate.default, byRequest: false };
  if (end === undefined || t < end) {
    return {
      ...base,
      state: stateOf(request.action),
      byRequest: true,
      since: request.requestedAt,
      ...(end !== undefined && { until: new Date(end).toISOString() }),
      ...(request.action === 'open' && request.revision !== undefined && { revision: request.revision }),
    };
  }
  return { ...base, state: gate.default, byRequest: false, since: new Date(end).toISOString() };
}

/** True when the gate lets `revision` through at this status: open, and not pinned to another revision. */
export function openFor(status: GateStatus, revision: string | undefined): boolean {
  if (status.state !== 'open') return false;
  if (status.revision === undefined) return true;
  return revision !== undefined && digestOf(revision) === digestOf(status.revision);
}

const crons = new Map<string, CronSchedule>();
function cronOf(expression: string, timeZone: string): CronSchedule {
  const key = `${expression}\u0000${timeZone}`;
  let cron = crons.get(key);
  if (!cron) crons.set(key, (cron = parseCron(expression, timeZone)));
  return cron;
}

/** The request a schedule sends when it fires. */
export function scheduledRequest(gate: Gate, index: number, firedAt: Date): GateRequest {
  const schedule = gate.schedules[index]!;
  const windowMs = schedule.windowMs ?? gate.windowMs;
  return {
    action: schedule.action,
    requestedAt: firedAt.toISOString(),
    requestedBy: `schedule/${gate.name}/${index}`,
    reason: `schedule "${schedule.cron}" (${schedule.timeZone})`,
    source: 'schedule',
    ...(windowMs !== undefined && { windowMs }),
  };
}

/** The next time a gate's state changes, and what causes it. */
export interface GateChange {
  readonly at: string;
  readonly state: GateState;
  readonly cause: 'window' | 'schedule';
  readonly cron?: string;
}

/**
 * The next change of state after `from`, found by playing the gate forward: the current
 * request's window ending, and each schedule firing (a firing is a new request).
 */
export function nextChange(
  gate: Gate,
  request: GateRequest | undefined,
  from: Date,
  wanted?: GateState,
): GateChange | undefined {
  const status = gateStateAt(gate, request, from);
  if (status.problem) return undefined;
  const crons = gate.schedules.map((schedule) => cronOf(schedule.cron, schedule.timeZone));
  const nextFirings = crons.map((cron) => cron.next(from));
  let current = effectiveRequest(gate, request, from);
  let state = status.state;
  let cursor = from;
  for (let step = 0; step < MAX_STEPS && cursor.getTime() - from.getTime() < HORIZON_MS; step++) {
    const windowEnd = windowEndAfter(current, cursor);
    const firing = earliest(nextFirings, gate);
    if (firing === undefined && windowEnd === undefined) return undefined;
    let change: GateChange;
    if (firing !== undefined && (windowEnd === undefined || nextFirings[firing]! <= windowEnd)) {
      cursor = nextFirings[firing]!;
      current = scheduledRequest(gate, firing, cursor);
      // Every schedule firing at this instant has fired; the one that ranks highest decides.
      nextFirings.forEach((time, index) => {
        if (time?.getTime() === cursor.getTime()) nextFirings[index] = crons[index]!.next(cursor);
      });
      change = {
        at: cursor.toISOString(),
        state: stateOf(current.action),
        cause: 'schedule',
        cron: gate.schedules[firing]!.cron,
      };
    } else {
      cursor = windowEnd!;
      change = { at: cursor.toISOString(), state: gate.default, cause: 'window' };
    }
    const after = requestStateAt(gate, current, cursor).state;
    if (after !== state && (wanted === undefined || after === wanted)) return { ...change, state: after };
    state = after;
  }
  return undefined;
}

/** When a closed gate next opens (window end or scheduled open), if it is known to. */
export function nextOpening(gate: Gate, request: GateRequest | undefined, from: Date): string | undefined {
  return nextChange(gate, request, from, 'open')?.at;
}

function windowEndAfter(request: GateRequest | undefined, cursor: Date): Date | undefined {
  if (!request || request.windowMs === undefined) return undefined;
  const end = Date.parse(request.requestedAt) + request.windowMs;
  return end > cursor.getTime() ? new Date(end) : undefined;
}

/** The schedule firing first; of several at the same instant, a close one. */
function earliest(times: readonly (Date | undefined)[], gate: Gate): number | undefined {
  let best: number | undefined;
  times.forEach((time, index) => {
    if (!time) return;
    const bestTime = best === undefined ? undefined : times[best]!.getTime();
    if (
      bestTime === undefined ||
      time.getTime() < bestTime ||
      (time.getTime() === bestTime && gate.schedules[index]!.action === 'close')
    )
      best = index;
  });
  return best;
}
