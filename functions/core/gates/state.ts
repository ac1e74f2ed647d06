import type { Gate, GateAction, GateState } from '../config/index.ts';
import { parseCron } from './cron.ts';

/** Where a request came from, as recorded in the audit trail. */
export type RequestSource = 'schedule' | 'console' | 'cli' | 'api';

/** A request to open or close a gate. */
export interface GateRequest {
  readonly action: GateAction;
  /** ISO 8601. */
  readonly requestedAt: string;
  readonly requestedBy: string;
  readonly reason: string;
  /** How long the request lasts; none = until the next request. Resolved when the request is made. */
  readonly windowMs?: number;
  readonly source: RequestSource;
}

/** A gate's state at one instant, and why. */
export interface GateStatus {
  readonly name: string;
  readonly state: GateState;
  readonly default: GateState;
  /** True while the last request is in effect; false when the state is the default. */
  readonly byRequest: boolean;
  /** When the current state began, if known. */
  readonly since?: string;
  /** When the current request lapses and the gate returns to its default. */
  readonly until?: string;
  readonly lastRequest?: GateRequest;
}

/** The next time a gate's state changes, and what causes it. */
export interface GateChange {
  readonly at: string;
  readonly state: GateState;
  readonly cause: 'window' | 'schedule';
  readonly cron?: string;
}

const stateOf = (action: GateAction): GateState => (action === 'open' ? 'open' : 'closed');
/** How far ahead next-change times are looked for. */
const HORIZON_MS = 400 * 24 * 3_600_000;
const MAX_STEPS = 2_000;

/**
 * The state at `at`: the last request's action while `requestedAt <= at < requestedAt + window`,
 * otherwise the default. Computed, never scheduled, so a missed timer cannot leave a gate stuck.
 */
export function gateStateAt(gate: Gate, request: GateRequest | undefined, at: Date): GateStatus {
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
    };
  }
  return { ...base, state: gate.default, byRequest: false, since: new Date(end).toISOString() };
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
  const crons = gate.schedules.map((schedule) => parseCron(schedule.cron, schedule.timeZone));
  const nextFirings = crons.map((cron) => cron.next(from));
  let current = request;
  let state = gateStateAt(gate, current, from).state;
  let cursor = from;
  for (let step = 0; step < MAX_STEPS && cursor.getTime() - from.getTime() < HORIZON_MS; step++) {
    const windowEnd = windowEndAfter(current, cursor);
    const firing = earliest(nextFirings);
    if (firing === undefined && windowEnd === undefined) return undefined;
    let change: GateChange;
    if (firing !== undefined && (windowEnd === undefined || nextFirings[firing]! <= windowEnd)) {
      cursor = nextFirings[firing]!;
      current = scheduledRequest(gate, firing, cursor);
      nextFirings[firing] = crons[firing]!.next(cursor);
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
    const after = gateStateAt(gate, current, cursor).state;
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

function earliest(times: readonly (Date | undefined)[]): number | undefined {
  let best: number | undefined;
  times.forEach((time, index) => {
    if (time && (best === undefined || time < times[best]!)) best = index;
  });
  return best;
}
