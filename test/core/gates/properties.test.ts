// Property tests of the gate request path (fast-check): gate state against an independent oracle
// that walks wall-clock time in each time zone (DST gaps skipped, repeated hours firing once), a
// lost or late invocation changing no decision, next-change times that are really the next
// change, and no stored or sent request, however malformed, that breaks evaluation.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MAX_WINDOW_MS } from '../../../functions/core/config/defaults.ts';
import { parseGate, type Gate } from '../../../functions/core/config/index.ts';
import { GateEventError, parseGateEvent } from '../../../functions/core/gates/event.ts';
import {
  effectiveRequest,
  gateStateAt,
  nextChange,
  scheduledRequest,
} from '../../../functions/core/gates/state.ts';
import { withEarlierCloses, type GateRequest } from '../../../functions/core/store/gates.ts';

const MINUTE = 60_000;
const STEP = 15 * MINUTE; // every time zone's offset is a multiple of 15 minutes
const DAY = 24 * 3_600_000;
/** Time zones and the days of 2026 on which their clocks change: wall-clock times vanish or repeat. */
const ZONES: Record<string, readonly string[]> = {
  UTC: ['2026-03-29'],
  'Europe/Berlin': ['2026-03-29', '2026-10-25'],
  'America/New_York': ['2026-03-08', '2026-11-01'],
  'America/Santiago': ['2026-04-05', '2026-09-06'], // changes at midnight
  'Australia/Lord_Howe': ['2026-04-05', '2026-10-04'], // a 30-minute shift
  'Asia/Kathmandu': ['2026-06-01'], // +05:45, no DST
  'Pacific/Chatham': ['2026-04-05', '2026-09-27'], // +12:45 / +13:45
};
const DAYS = ['SUN', 'MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT'] as const;

interface ScheduleShape {
  readonly minute: 0 | 15 | 30 | 45;
  readonly hour: number;
  /** undefined: every day. */
  readonly day?: (typeof DAYS)[number];
  readonly action: 'open' | 'close';
  readonly windowMinutes?: number;
}

/** The instants on `day` (± a day) at which the zone's UTC offset changes, found by reading wall clocks. */
function clockChanges(timeZone: string, day: string): number[] {
  const local = wallClock(timeZone);
  const offsetAt = (t: number) => {
    const [date, time] = local(t).key.split(' ');
    return Date.parse(`${date}T${time}:00Z`) - t;
  };
  const changes: number[] = [];
  const start = Date.parse(`${day}T00:00:00Z`) - DAY;
  for (let t = start; t < start + 3 * DAY; t += STEP)
    if (offsetAt(t + STEP) !== offsetAt(t)) changes.push(t + STEP);
  return changes.length > 0 ? changes : [Date.parse(`${day}T12:00:00Z`)];
}

/** The wall-clock hours around an instant: where a schedule meets a gap or a repeated hour. */
function hoursAround(timeZone: string, instant: number): number[] {
  const local = wallClock(timeZone);
  const hours = new Set<number>();
  for (let t = instant - 3 * 3_600_000; t <= instant + 3 * 3_600_000; t += STEP) hours.add(local(t).hour);
  return [...hours];
}

const scheduleShape = (hours: readonly number[]): fc.Arbitrary<ScheduleShape> =>
  fc.record(
    {
      minute: fc.constantFrom(0 as const, 15 as const, 30 as const, 45 as const),
      hour: fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...hours) }, fc.integer({ min: 0, max: 23 })),
      day: fc.option(fc.constantFrom(...DAYS), { nil: undefined, freq: 3 }),
      action: fc.constantFrom('open' as const, 'close' as const),
      windowMinutes: fc.option(
        fc.oneof(
          { weight: 3, arbitrary: fc.integer({ min: 15, max: 240 }) },
          fc.integer({ min: 15, max: 3 * 24 * 60 }),
        ),
        { nil: undefined, freq: 5 },
      ),
    },
    { requiredKeys: ['minute', 'hour', 'action'] },
  );

interface GateShape {
  readonly default: 'open' | 'closed';
  readonly timeZone: string;
  readonly schedules: readonly ScheduleShape[];
}

/**
 * A gate and a time in 2026: most often a gate whose schedules fire at the wall-clock hours around
 * one of its zone's clock changes, and a time from just before that change to six hours after it.
 */
const CHANGES = Object.entries(ZONES).flatMap(([timeZone, days]) =>
  days
    .flatMap((day) => clockChanges(timeZone, day))
    .map((change) => ({ timeZone, change, hours: hoursAround(timeZone, change) })),
);
const gateAndInstant: fc.Arbitrary<[GateShape, Date]> = fc
  .constantFrom(...CHANGES)
  .chain(({ timeZone, change, hours }) =>
    fc.tuple(
      fc.record({
        default: fc.constantFrom('open' as const, 'closed' as const),
        timeZone: fc.constant(timeZone),
        schedules: fc.oneof(
          { weight: 4, arbitrary: fc.array(scheduleShape(hours), { minLength: 1, maxLength: 2 }) },
          // Two schedules firing at the same instant with opposite actions.
          scheduleShape(hours).map((one) => [
            one,
            { ...one, action: one.action === 'open' ? 'close' : 'open' } as const,
          ]),
        ),
      }),
      fc.oneof(
        {
          weight: 4,
          arbitrary: fc
            .integer({ min: -2 * 3_600_000, max: 6 * 3_600_000 })
            .map((offset) => new Date(change + offset)),
        },
        {
          weight: 1,
          arbitrary: fc.date({
            min: new Date('2026-01-08T00:00:00Z'),
            max: new Date('2026-12-20T00:00:00Z'),
            noInvalidDate: true,
          }),
        },
      ),
    ),
  );

const cronOf = (s: ScheduleShape) =>
  s.day ? `${s.minute} ${s.hour} ? * ${s.day} *` : `${s.minute} ${s.hour} * * ? *`;

function buildGate(shape: GateShape): Gate {
  return parseGate({
    name: 'prop',
    default: shape.default,
    schedules: shape.schedules.map((s) => ({
      cron: cronOf(s),
      timeZone: shape.timeZone,
      action: s.action,
      ...(s.windowMinutes !== undefined && { window: `${s.windowMinutes}m` }),
    })),
  });
}

// --- The oracle: wall-clock time read with Intl, 15 minutes at a time, written without croner. ---

function wallClock(timeZone: string) {
  const format = new Intl.DateTimeFormat('en-US', {
    timeZone,
    hourCycle: 'h23',
    weekday: 'short',
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
  });
  return (at: number) => {
    const parts = Object.fromEntries(format.formatToParts(new Date(at)).map((p) => [p.type, p.value]));
    return {
      key: `${parts.year}-${parts.month}-${parts.day} ${parts.hour}:${parts.minute}`,
      weekday: parts.weekday!.toUpperCase(),
      hour: Number(parts.hour),
      minute: Number(parts.minute),
    };
  };
}

/** Firings at or before `at` within `lookBackMs`, newest first: [instant, schedule index]. */
function oracleFirings(shape: GateShape, at: number, lookBackMs: number): [number, number][] {
  const local = wallClock(shape.timeZone);
  const firings: [number, number][] = [];
  for (let t = Math.floor(at / STEP) * STEP; t >= at - lookBackMs; t -= STEP) {
    const here = local(t);
    shape.schedules.forEach((s, index) => {
      if (here.minute !== s.minute || here.hour !== s.hour) return;
      if (s.day && here.weekday !== s.day) return;
      // A wall-clock time that occurred shortly before (clocks went back) fires only the first time.
      for (let back = STEP; back <= 2 * 3_600_000; back += STEP) if (local(t - back).key === here.key) return;
      firings.push([t, index]);
    });
  }
  return firings;
}

/**
 * The state the oracle gives: of the firings and the recorded request (and the earlier closes it
 * carries) whose windows cover the instant, the latest decides; none: the default.
 */
function oracleState(shape: GateShape, gate: Gate, at: number, recorded?: GateRequest) {
  const candidates = oracleFirings(shape, at, 9 * DAY).map(([time, index]) => ({
    time,
    action: shape.schedules[index]!.action,
    windowMs: gate.schedules[index]!.windowMs ?? gate.windowMs,
  }));
  for (const request of recorded ? [recorded, ...(recorded.earlierCloses ?? [])] : [])
    candidates.push({
      time: Date.parse(request.requestedAt),
      action: request.action,
      windowMs: request.windowMs,
    });
  const inEffect = candidates.filter(
    (c) => c.time <= at && (c.windowMs === undefined || at < c.time + c.windowMs),
  );
  // At the same instant, a close outranks an open: a closed gate holds.
  const rank = (c: { action: string }) => (c.action === 'close' ? 0 : 1);
  inEffect.sort((a, b) => b.time - a.time || rank(a) - rank(b));
  const latest = inEffect[0];
  if (!latest) return gate.default;
  return latest.action === 'open' ? 'open' : 'closed';
}

const runs = (numRuns: number) => ({ numRuns, seed: 20261124 });
/** Some hundred runs take seconds on an idle machine and minutes on a loaded one: wait for them. */
const PROPERTY_TIMEOUT_MS = 600_000;

describe('gate state: properties', { timeout: PROPERTY_TIMEOUT_MS }, () => {
  it('matches the wall-clock oracle in every time zone, across DST gaps and repeated hours, with no invocation', () => {
    fc.assert(
      fc.property(gateAndInstant, ([shape, at]) => {
        const gate = buildGate(shape);
        expect(gateStateAt(gate, undefined, at).state).toBe(oracleState(shape, gate, at.getTime()));
      }),
      runs(300),
    );
  });

  it('recording the invocation, late or on time, changes no decision', () => {
    fc.assert(
      fc.property(gateAndInstant, ([shape, at]) => {
        const gate = buildGate(shape);
        const latest = effectiveRequest(gate, undefined, at);
        fc.pre(latest !== undefined);
        const index = Number(latest.requestedBy.split('/').at(-1));
        const recorded = scheduledRequest(gate, index, new Date(latest.requestedAt));
        expect(gateStateAt(gate, recorded, at)).toEqual(gateStateAt(gate, undefined, at));
      }),
      runs(200),
    );
  });

  it('a recorded request and the schedules: the latest in effect decides, as the oracle says', () => {
    const manual = fc.record({
      action: fc.constantFrom('open' as const, 'close' as const),
      agoMs: fc.integer({ min: 0, max: 8 * DAY }),
      windowMs: fc.option(fc.integer({ min: MINUTE, max: 5 * DAY }), { nil: undefined }),
    });
    fc.assert(
      fc.property(gateAndInstant, manual, ([shape, at], m) => {
        const gate = buildGate(shape);
        const recorded: GateRequest = {
          action: m.action,
          requestedAt: new Date(at.getTime() - m.agoMs).toISOString(),
          requestedBy: 'alice',
          reason: '',
          source: 'cli',
          ...(m.windowMs !== undefined && { windowMs: m.windowMs }),
        };
        expect(gateStateAt(gate, recorded, at).state).toBe(oracleState(shape, gate, at.getTime(), recorded));
      }),
      runs(300),
    );
  });

  it('the next change is the next change: nothing changes before it, and the state after it is the one named', () => {
    fc.assert(
      fc.property(
        gateAndInstant,
        fc.option(fc.integer({ min: MINUTE, max: 2 * DAY })),
        ([shape, from], w) => {
          const gate = buildGate(shape);
          const recorded: GateRequest | undefined =
            w === null
              ? undefined
              : {
                  action: 'open',
                  requestedAt: from.toISOString(),
                  requestedBy: 'bob',
                  reason: '',
                  source: 'cli',
                  windowMs: w,
                };
          const change = nextChange(gate, recorded, from);
          const before = gateStateAt(gate, recorded, from).state;
          const end = change ? Date.parse(change.at) : from.getTime() + 8 * DAY;
          if (change) {
            expect(end).toBeGreaterThan(from.getTime());
            expect(gateStateAt(gate, recorded, new Date(end)).state).toBe(change.state);
            expect(change.state).not.toBe(before);
          }
          for (let t = from.getTime() + STEP - (from.getTime() % STEP); t < end; t += STEP)
            expect(gateStateAt(gate, recorded, new Date(t)).state).toBe(before);
        },
      ),
      runs(120),
    );
  });
});

describe('a sequence of requests: properties', { timeout: PROPERTY_TIMEOUT_MS }, () => {
  const made = fc.array(
    fc.record({
      action: fc.constantFrom('open' as const, 'close' as const),
      afterMs: fc.integer({ min: 1000, max: 2 * DAY }),
      windowMs: fc.option(fc.integer({ min: MINUTE, max: 4 * DAY }), { nil: undefined, freq: 4 }),
    }),
    { minLength: 1, maxLength: 5 },
  );

  /** The requests as made, from `start`, and what the table holds after each (each stored over the one before). */
  function record(
    steps: readonly { action: 'open' | 'close'; afterMs: number; windowMs?: number }[],
    start: number,
  ) {
    const requests: GateRequest[] = [];
    let stored: GateRequest | undefined;
    let t = start;
    for (const step of steps) {
      t += step.afterMs;
      const request: GateRequest = {
        action: step.action,
        requestedAt: new Date(t).toISOString(),
        requestedBy: `person-${requests.length}`,
        reason: '',
        source: 'cli',
        ...(step.windowMs !== undefined && { windowMs: step.windowMs }),
      };
      requests.push(request);
      stored = withEarlierCloses(request, stored);
    }
    return { requests, stored: stored!, last: t };
  }

  it('the latest request in effect decides: the last one made, every earlier close (a close lasts its window), the schedules', () => {
    fc.assert(
      fc.property(
        gateAndInstant,
        made,
        fc.integer({ min: 0, max: 5 * DAY }),
        ([shape, start], steps, laterMs) => {
          const gate = buildGate(shape);
          const { requests, stored, last } = record(steps, start.getTime() - 6 * DAY);
          const at = last + laterMs;
          const earlierCloses = requests.slice(0, -1).filter((r) => r.action === 'close');
          const model = oracleState(shape, gate, at, { ...requests.at(-1)!, earlierCloses });
          expect(gateStateAt(gate, stored, new Date(at)).state).toBe(model);
        },
      ),
      runs(300),
    );
  });

  it('a close request never opens the gate, at any instant after it is made', () => {
    fc.assert(
      fc.property(
        gateAndInstant,
        made,
        fc.option(fc.integer({ min: 1000, max: 4 * DAY }), { nil: undefined }),
        fc.array(fc.integer({ min: 0, max: 6 * DAY }), { minLength: 1, maxLength: 6 }),
        ([shape, start], steps, closeWindowMs, probes) => {
          const gate = buildGate(shape);
          const { stored: before, last } = record(steps, start.getTime() - 6 * DAY);
          const close: GateRequest = {
            action: 'close',
            requestedAt: new Date(last + 1000).toISOString(),
            requestedBy: 'close-only',
            reason: '',
            source: 'cli',
            ...(closeWindowMs !== undefined && { windowMs: closeWindowMs }),
          };
          const after = withEarlierCloses(close, before);
          for (const probe of probes) {
            const at = new Date(last + 1000 + probe);
            if (gateStateAt(gate, before, at).state === 'closed')
              expect(gateStateAt(gate, after, at).state, at.toISOString()).toBe('closed');
          }
        },
      ),
      runs(300),
    );
  });

  it('the next change agrees with the state sampled every 15 minutes until it', () => {
    fc.assert(
      fc.property(gateAndInstant, made, ([shape, start], steps) => {
        const gate = buildGate(shape);
        const { stored, last } = record(steps, start.getTime() - 2 * DAY);
        const from = new Date(Math.max(last, start.getTime()));
        const change = nextChange(gate, stored, from);
        const before = gateStateAt(gate, stored, from).state;
        const end = change ? Date.parse(change.at) : from.getTime() + 8 * DAY;
        if (change) expect(gateStateAt(gate, stored, new Date(end)).state).toBe(change.state);
        for (let t = from.getTime() + STEP - (from.getTime() % STEP); t < end; t += STEP)
          expect(gateStateAt(gate, stored, new Date(t)).state).toBe(before);
      }),
      runs(120),
    );
  });
});

describe('malformed requests: properties', { timeout: PROPERTY_TIMEOUT_MS }, () => {
  const storedGarbage = fc.record({
    action: fc.oneof(fc.constantFrom('open', 'close'), fc.anything()),
    requestedAt: fc.oneof(
      fc.date({ noInvalidDate: true }).map((d) => d.toISOString()),
      fc.string(),
      fc.anything(),
    ),
    requestedBy: fc.anything(),
    windowMs: fc.oneof(
      fc.constant(undefined),
      fc.integer(),
      fc.double(),
      fc.constantFrom(Number.MAX_VALUE, -1, 0, Infinity, NaN, 1e20, MAX_WINDOW_MS + 1),
    ),
    revision: fc.oneof(fc.constant(undefined), fc.string(), fc.anything()),
  });

  it('no stored request, however malformed, makes evaluation throw; one that cannot be evaluated counts as closed', () => {
    fc.assert(
      fc.property(gateAndInstant, storedGarbage, ([shape, at], stored) => {
        const gate = buildGate(shape);
        const request = stored as unknown as GateRequest;
        const status = gateStateAt(gate, request, at);
        if (status.problem) expect(status.state).toBe('closed');
        expect(() => nextChange(gate, request, at)).not.toThrow();
      }),
      runs(300),
    );
  });

  const durationText = fc.oneof(
    fc
      .tuple(
        fc.oneof(fc.nat(), fc.bigInt({ min: 0n, max: 10n ** 30n })),
        fc.constantFrom('', 'ms', 's', 'm', 'h', 'd', 'w', 'y', 'x'),
      )
      .map(([n, unit]) => `${n}${unit}`),
    fc.string(),
    fc.constantFrom('99999999d', '366d', '367d', '8784h', '8785h', '1e400h', '-1h', '0s', '1h30m'),
  );

  it('an event is refused with a GateEventError naming the field, or accepted with a window of at most a year', () => {
    const raw = fc.oneof(
      fc.record(
        {
          gate: fc.oneof(fc.constant('sre'), fc.anything()),
          action: fc.oneof(fc.constantFrom('open', 'close', 'status'), fc.anything()),
          window: fc.oneof(durationText, fc.anything()),
          reason: fc.anything(),
          revision: fc.oneof(fc.constant(`1.0.0@sha256:${'a'.repeat(64)}`), fc.string()),
          requestedAt: fc.oneof(
            fc.date().map((d) => (Number.isNaN(d.getTime()) ? 'x' : d.toISOString())),
            fc.string(),
          ),
          source: fc.oneof(fc.constantFrom('schedule', 'console', 'cli', 'api', 'url'), fc.string()),
        },
        { requiredKeys: [] },
      ),
      fc.anything(),
    );
    fc.assert(
      fc.property(raw, fc.boolean(), (event, signed) => {
        let parsed;
        try {
          parsed = parseGateEvent(event, { signed });
        } catch (error) {
          expect(error).toBeInstanceOf(GateEventError);
          expect((error as Error).message.length).toBeGreaterThan(10);
          return;
        }
        if (parsed.windowMs !== undefined) {
          expect(parsed.windowMs).toBeGreaterThan(0);
          expect(parsed.windowMs).toBeLessThanOrEqual(MAX_WINDOW_MS);
        }
        if (parsed.source !== 'schedule') expect(parsed.requestedAt).toBeUndefined();
        if (signed) expect(parsed.source).toBe('url');
      }),
      runs(2000),
    );
  });
});
