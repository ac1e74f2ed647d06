// A property of the request path on DynamoDB Local (fast-check): people's requests (timed by the
// recording side's clock) interleaved with schedule invocations that arrive late, twice or never.
// After every step the recorded gate's state equals a model that knows only the requests and the
// cron, never the invocations: a late or lost invocation changes no decision, a late one never
// overrides a newer request, and no request ends a close early.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseGateEvent } from '../../../functions/core/gates/event.ts';
import { gateStatus, handleGateEvent } from '../../../functions/core/gates/requests.ts';
import { engineDeps } from '../../support/deliveries.ts';
import { inProcessGateDeps, manualClock, registerGate } from '../../support/gates.ts';
import { testbed, uniqueName } from '../../support/testbed.ts';

testbed();

const HOUR = 3_600_000;
const START = Date.parse('2026-03-26T12:00:00Z'); // the Sunday after: Berlin's clocks go forward

type Step =
  | { kind: 'request'; afterMs: number; action: 'open' | 'close'; windowHours?: number }
  | { kind: 'invocation'; afterMs: number; firingsBack: number };

const step: fc.Arbitrary<Step> = fc.oneof(
  fc.record(
    {
      kind: fc.constant('request' as const),
      afterMs: fc.integer({ min: 1000, max: 20 * HOUR }),
      action: fc.constantFrom('open' as const, 'close' as const),
      windowHours: fc.option(fc.integer({ min: 1, max: 30 }), { nil: undefined }),
    },
    { requiredKeys: ['kind', 'afterMs', 'action'] },
  ),
  fc.record({
    kind: fc.constant('invocation' as const),
    afterMs: fc.integer({ min: 1000, max: 20 * HOUR }),
    firingsBack: fc.integer({ min: 0, max: 3 }),
  }),
);

/** Daily closes at 02:30 Berlin time (skipped on the spring-forward day) for 6 hours. */
const CRON = '30 2 * * ? *';
const ZONE = 'Europe/Berlin';

/** The firings of CRON at or before `at`, newest first, from the oracle of wall-clock time. */
function firings(at: number): number[] {
  const format = new Intl.DateTimeFormat('en-GB', {
    timeZone: ZONE,
    hour: '2-digit',
    minute: '2-digit',
    hourCycle: 'h23',
  });
  const result: number[] = [];
  for (let t = Math.floor(at / (15 * 60_000)) * 15 * 60_000; t > at - 5 * 24 * HOUR; t -= 15 * 60_000)
    if (format.format(new Date(t)) === '02:30') result.push(t);
  return result;
}

/**
 * The model: of the last person's request, every earlier close (a close lasts its window) and the
 * cron's firings, the latest whose window covers `at` decides; none: the default (open).
 */
function modelState(
  requests: readonly { at: number; action: 'open' | 'close'; windowMs?: number }[],
  at: number,
) {
  const candidates = [
    ...requests.filter((request, index) => index === requests.length - 1 || request.action === 'close'),
    ...firings(at).map((t) => ({ at: t, action: 'close' as const, windowMs: 6 * HOUR })),
  ]
    .filter((c) => c.at <= at && (c.windowMs === undefined || at < c.at + c.windowMs))
    .sort((a, b) => b.at - a.at);
  const latest = candidates[0];
  if (!latest) return 'open';
  return latest.action === 'open' ? 'open' : 'closed';
}

describe('gate requests on DynamoDB Local: a property', () => {
  it('requests and late, repeated or lost invocations: the state always equals the model of requests and cron', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 8 }), async (steps) => {
        const clock = manualClock(new Date(START).toISOString());
        const deps = { ...engineDeps(), clock };
        const gate = uniqueName('prop-gate');
        await registerGate(deps, {
          name: gate,
          default: 'open',
          schedules: [{ cron: CRON, timeZone: ZONE, action: 'close', window: '6h' }],
        });
        const gateDeps = inProcessGateDeps(deps);
        const requests: { at: number; action: 'open' | 'close'; windowMs?: number }[] = [];
        for (const s of steps) {
          clock.advance(s.afterMs);
          const now = clock.now().getTime();
          if (s.kind === 'request') {
            await handleGateEvent(
              parseGateEvent({
                gate,
                action: s.action,
                source: 'cli',
                ...(s.windowHours !== undefined && { window: `${s.windowHours}h` }),
              }),
              gateDeps,
            );
            requests.push({
              at: now,
              action: s.action,
              ...(s.windowHours !== undefined && { windowMs: s.windowHours * HOUR }),
            });
          } else {
            const firing = firings(now)[s.firingsBack];
            if (firing === undefined) continue;
            await handleGateEvent(
              parseGateEvent({
                gate,
                action: 'close',
                source: 'schedule',
                window: '6h',
                requestedAt: new Date(firing).toISOString(),
              }),
              gateDeps,
            );
          }
          const { status } = await gateStatus(gate, gateDeps);
          expect(status.state, `after ${JSON.stringify(s)} at ${new Date(now).toISOString()}`).toBe(
            modelState(requests, now),
          );
        }
      }),
      { numRuns: 25, seed: 20261124 },
    );
  });
});
