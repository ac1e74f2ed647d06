import type { Gate, GateAction, GateState } from '../config/index.ts';
import { parseCron, type CronSchedule } from '../config/cron.ts';
import { MAX_WINDOW_MS } from '../config/defaults.ts';
import { addLocalDays } from '../config/zoned-time.ts';
import {
  nextPeriodBoundary,
  periodCovering,
  periodsEnd,
  type ClosedPeriod,
  type ClosedPeriodCause,
} from '../calendars/closed-periods.ts';
import { covers, PINNABLE_REVISION, requestEnd, requestProblem, type GateRequest } from '../store/gates.ts';

/** A gate's state at one instant, and why. */
export interface GateStatus {
  readonly name: string;
  readonly state: GateState;
  readonly default: GateState;
  /** True while a request (recorded, or a schedule's firing) decides; false at the default. */
  readonly byRequest: boolean;
  /** When the current state began, if known. */
  readonly since?: string;
  /** When the requests made so far stop holding the gate in this state (a schedule may fire sooner). */
  readonly until?: string;
  /** The request that decides, or, at the default, the latest one made. */
  readonly lastRequest?: GateRequest;
  /** The only revision the gate is open for, when the open request in effect names one. */
  readonly revision?: string;
  /** The only deliveries the gate is open for, when the open request in effect names them. */
  readonly deliveries?: readonly string[];
  /** Why the stored request cannot be evaluated; the gate counts as closed until a new request replaces it. */
  readonly problem?: string;
  /** The freeze, calendar event or change calendar holding the gate closed, whatever its requests say. */
  readonly closedBy?: { readonly cause: ClosedPeriodCause; readonly reason: string };
}

const stateOf = (action: GateAction): GateState => (action === 'open' ? 'open' : 'closed');
/** How far ahead next-change times are looked for, and how far back a schedule's latest firing. */
const HORIZON_MS = 400 * 24 * 3_600_000;
const MAX_STEPS = 2_000;

/** True when `revision` has the shape a pinned approval names: `<tag>@sha256:<64 hex>` or `sha256:<64 hex>`. */
export const isPinnableRevision = (revision: string): boolean => PINNABLE_REVISION.test(revision);

/** The digest part of a revision, which is what an approval is pinned to (tags move). */
export const digestOf = (revision: string): string => revision.slice(revision.lastIndexOf('sha256:'));

/**
 * The state at `at`: the action of the latest request whose window covers `at`, of the recorded
 * request, the earlier closes it carries, and each schedule's latest firing at or before `at` (computed
 * from the cron, so a lost invocation changes nothing); when none covers it, the default. So an
 * expired request hands back to the schedules, and a close never ends another close early. A
 * recorded request that cannot be evaluated closes the gate, and the status says why. While a
 * closed period (a freeze, a calendar event, a CLOSED change calendar) covers `at`, the gate is
 * closed whatever the requests say: an approved open request does not lift it. The start of a
 * freeze or calendar event is a close: an open request made before it (not a schedule's firing,
 * which its cron makes again) does not open the gate after it, as a later close request forgets it.
 */
export function gateStateAt(
  gate: Gate,
  recorded: GateRequest | undefined,
  at: Date,
  periods: readonly ClosedPeriod[] = [],
): GateStatus {
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
  const status = statusOf(gate, candidatesAt(gate, recorded, at, periods), at.getTime());
  const period = periodCovering(periods, at.getTime());
  if (period) return heldByPeriod(gate, recorded, status, period, periods);
  return status.state === 'open' ? openUntilPeriod(status, periods, at.getTime()) : status;
}

/** An open `status` ends at the next closed period's start, if that comes before its `until`. */
function openUntilPeriod(status: GateStatus, periods: readonly ClosedPeriod[], at: number): GateStatus {
  let next = Infinity;
  for (const period of periods) if (period.start > at && period.start < next) next = period.start;
  if (next === Infinity || (status.until !== undefined && Date.parse(status.until) <= next)) return status;
  return { ...status, until: new Date(next).toISOString() };
}

/** `status` (the requests') while `period` holds the gate closed: until the periods end, if it is open then. */
function heldByPeriod(
  gate: Gate,
  recorded: GateRequest | undefined,
  status: GateStatus,
  period: ClosedPeriod,
  periods: readonly ClosedPeriod[],
): GateStatus {
  const { revision: _, deliveries: __, until: ___, ...rest } = status;
  const end = periodsEnd(periods, period.start);
  const opens =
    Number.isFinite(end) && gateStateAt(gate, recorded, new Date(end), periods).state === 'open'
      ? { until: new Date(end).toISOString() }
      : {};
  return {
    ...rest,
    state: 'closed',
    byRequest: false,
    since: new Date(period.start).toISOString(),
    ...opens,
    closedBy: { cause: period.cause, reason: period.reason },
  };
}

/** The request that decides at `at` (see gateStateAt); undefined when the gate is at its default. */
export function effectiveRequest(
  gate: Gate,
  recorded: GateRequest | undefined,
  at: Date,
): GateRequest | undefined {
  return deciding(candidatesAt(gate, recorded, at), at.getTime());
}

/**
 * The latest start, at or before `at`, of a freeze or calendar event (ms; -Infinity if none):
 * those close the gate at a known instant. A Change Calendar's start is not known (it is read as
 * a state at each evaluation), so it is not counted.
 */
function lastPeriodStart(periods: readonly ClosedPeriod[], at: number): number {
  let latest = -Infinity;
  for (const period of periods)
    if (period.cause !== 'change-calendar' && period.start <= at && period.start > latest)
      latest = period.start;
  return latest;
}

/**
 * When the gate was last asked to close, as of `at` (ms; -Infinity if never): the latest of the
 * recorded request and the closes it carries, and each close schedule's latest firing. Approvals
 * gathered before it no longer count: whoever approved did so before the freeze.
 */
export function lastClosedAt(
  gate: Gate,
  recorded: GateRequest | undefined,
  at: Date,
  periods: readonly ClosedPeriod[] = [],
): number {
  const closes = candidatesAt(gate, recorded, at).filter((request) => request.action === 'close');
  return Math.max(
    lastPeriodStart(periods, at.getTime()),
    ...closes.map((close) => Date.parse(close.requestedAt)),
  );
}

/**
 * The recorded request, the earlier closes it carries, and each schedule's latest firing at or
 * before `at`; without the open requests made at or before the last freeze or calendar event
 * that started by `at` (its start closed the gate after them).
 */
function candidatesAt(
  gate: Gate,
  recorded: GateRequest | undefined,
  at: Date,
  periods: readonly ClosedPeriod[] = [],
): GateRequest[] {
  const notBefore = new Date(at.getTime() - HORIZON_MS);
  const firings = gate.schedules.flatMap((schedule, index) => {
    const fired = cronOf(schedule.cron, schedule.timeZone).previous(at, notBefore);
    return fired ? [scheduledRequest(gate, index, fired)] : [];
  });
  const closedAt = lastPeriodStart(periods, at.getTime());
  return [...recordedCandidates(recorded).filter((made) => madeAfterClose(made, closedAt)), ...firings];
}

/** False for an open request made at or before `closedAt` (a freeze's start closed the gate after it). */
const madeAfterClose = (request: GateRequest, closedAt: number): boolean =>
  request.action !== 'open' || Date.parse(request.requestedAt) > closedAt;

const recordedCandidates = (recorded: GateRequest | undefined): GateRequest[] =>
  recorded ? [recorded, ...(recorded.earlierCloses ?? [])] : [];

/** Of the candidates covering `at`, the latest; of two made at the same instant, a close (a closed gate holds). */
function deciding(candidates: readonly GateRequest[], at: number): GateRequest | undefined {
  let best: GateRequest | undefined;
  for (const candidate of candidates)
    if (covers(candidate, at) && (!best || outranks(candidate, best))) best = candidate;
  return best;
}

function outranks(request: GateRequest, other: GateRequest): boolean {
  const time = Date.parse(request.requestedAt);
  const otherTime = Date.parse(other.requestedAt);
  return time > otherTime || (time === otherTime && request.action === 'close' && other.action !== 'close');
}

const stateAt = (gate: Gate, candidates: readonly GateRequest[], at: number): GateState => {
  const decider = deciding(candidates, at);
  return decider ? stateOf(decider.action) : gate.default;
};

/** The status the candidates give at `at`. */
function statusOf(gate: Gate, candidates: readonly GateRequest[], at: number): GateStatus {
  const base = { name: gate.name, default: gate.default };
  const decider = deciding(candidates, at);
  const state = decider ? stateOf(decider.action) : gate.default;
  const lapses = candidates
    .map(requestEnd)
    .filter((end) => end > at && end !== Infinity)
    .sort((a, b) => a - b)
    .find((end) => stateAt(gate, candidates, end) !== state);
  const until = lapses === undefined ? {} : { until: new Date(lapses).toISOString() };
  if (decider) {
    return {
      ...base,
      lastRequest: decider,
      state,
      byRequest: true,
      since: decider.requestedAt,
      ...until,
      ...(decider.action === 'open' && decider.revision !== undefined && { revision: decider.revision }),
      ...(decider.action === 'open' &&
        decider.deliveries !== undefined && { deliveries: decider.deliveries }),
    };
  }
  const made = candidates.filter((candidate) => Date.parse(candidate.requestedAt) <= at);
  const latest = made.reduce<GateRequest | undefined>((a, b) => (!a || outranks(b, a) ? b : a), undefined);
  const lapsed = Math.max(...made.map(requestEnd));
  return {
    ...base,
    ...(latest && { lastRequest: latest }),
    state,
    byRequest: false,
    ...(Number.isFinite(lapsed) && { since: new Date(lapsed).toISOString() }),
    ...until,
  };
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
  const windowMs =
    schedule.windowDays !== undefined
      ? Math.min(
          addLocalDays(firedAt.getTime(), schedule.windowDays, schedule.timeZone) - firedAt.getTime(),
          MAX_WINDOW_MS,
        )
      : (schedule.windowMs ?? gate.windowMs);
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
  readonly cause: 'window' | 'schedule' | ClosedPeriodCause;
  readonly cron?: string;
  /** The freeze, calendar event or change calendar that starts or ends then. */
  readonly reason?: string;
}

/**
 * The next change of state after `from`, closed periods counted: the gate is closed while one
 * covers it, else as its requests and schedules say (requestsChange). Either changes only at a
 * change of the other or at a period's boundary, so those are the instants played through.
 */
export function nextChange(
  gate: Gate,
  request: GateRequest | undefined,
  from: Date,
  wanted?: GateState,
  periods: readonly ClosedPeriod[] = [],
): GateChange | undefined {
  if (periods.length === 0) return requestsChange(gate, request, from, wanted);
  const status = gateStateAt(gate, request, from, periods);
  if (status.problem) return undefined;
  const start = from.getTime();
  let state = status.state;
  let cursor = start;
  // The requests' own changes, without the open requests a freeze or event started since closed.
  const byRequestsFrom = (at: Date) =>
    requestsChange(gate, request, at, undefined, lastPeriodStart(periods, at.getTime()));
  let byRequests = byRequestsFrom(from);
  for (let step = 0; step < MAX_STEPS && cursor - start < HORIZON_MS; step++) {
    const requestsAt = byRequests ? Date.parse(byRequests.at) : Infinity;
    const boundary = nextPeriodBoundary(periods, cursor);
    cursor = Math.min(requestsAt, boundary);
    if (cursor === Infinity) return undefined;
    const at = new Date(cursor);
    const after = gateStateAt(gate, request, at, periods);
    if (after.state !== state && (wanted === undefined || after.state === wanted)) {
      const period = cursor === boundary ? periodAt(periods, cursor) : undefined;
      return period
        ? { at: at.toISOString(), state: after.state, cause: period.cause, reason: period.reason }
        : { ...byRequests!, state: after.state };
    }
    state = after.state;
    if (cursor >= requestsAt || cursor === boundary) byRequests = byRequestsFrom(at);
  }
  return undefined;
}

/** A period starting or ending at `at`. */
const periodAt = (periods: readonly ClosedPeriod[], at: number): ClosedPeriod | undefined =>
  periods.find((period) => period.start === at) ?? periods.find((period) => period.end === at);

/**
 * The next change of state after `from` by requests and schedules alone, found by playing the
 * gate forward over the instants where anything can change: each schedule firing (a new request)
 * and each window ending. Open requests made at or before `closedAt` (a freeze's start) are left out.
 */
function requestsChange(
  gate: Gate,
  request: GateRequest | undefined,
  from: Date,
  wanted?: GateState,
  closedAt = -Infinity,
): GateChange | undefined {
  if (request && requestProblem(request)) return undefined;
  const crons = gate.schedules.map((schedule) => cronOf(schedule.cron, schedule.timeZone));
  const nextFirings = crons.map((cron) => cron.next(from));
  const notBefore = new Date(from.getTime() - HORIZON_MS);
  const latestFirings = crons.map((cron, index) => {
    const fired = cron.previous(from, notBefore);
    return fired ? scheduledRequest(gate, index, fired) : undefined;
  });
  const recorded = recordedCandidates(request).filter((made) => madeAfterClose(made, closedAt));
  let state = stateAt(gate, [...recorded, ...latestFirings.filter((f) => f !== undefined)], from.getTime());
  let cursor = from.getTime();
  for (let step = 0; step < MAX_STEPS && cursor - from.getTime() < HORIZON_MS; step++) {
    const candidates = [...recorded, ...latestFirings.filter((firing) => firing !== undefined)];
    const windowEnd = Math.min(...candidates.map(requestEnd).filter((end) => end > cursor));
    const firing = earliest(nextFirings, gate);
    const firingAt = firing === undefined ? Infinity : nextFirings[firing]!.getTime();
    if (firingAt === Infinity && windowEnd === Infinity) return undefined;
    let change: GateChange;
    if (firingAt <= windowEnd) {
      cursor = firingAt;
      // Every schedule firing at this instant has fired; the one that ranks highest decides.
      nextFirings.forEach((time, index) => {
        if (time?.getTime() !== cursor) return;
        latestFirings[index] = scheduledRequest(gate, index, time);
        nextFirings[index] = crons[index]!.next(time);
      });
      change = {
        at: new Date(cursor).toISOString(),
        state,
        cause: 'schedule',
        cron: gate.schedules[firing!]!.cron,
      };
    } else {
      cursor = windowEnd;
      change = { at: new Date(cursor).toISOString(), state, cause: 'window' };
    }
    const after = stateAt(gate, [...recorded, ...latestFirings.filter((f) => f !== undefined)], cursor);
    if (after !== state && (wanted === undefined || after === wanted)) return { ...change, state: after };
    state = after;
  }
  return undefined;
}

/** When a closed gate next opens (window end, scheduled open, end of a closed period), if it is known to. */
export function nextOpening(
  gate: Gate,
  request: GateRequest | undefined,
  from: Date,
  periods: readonly ClosedPeriod[] = [],
): string | undefined {
  return nextChange(gate, request, from, 'open', periods)?.at;
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
