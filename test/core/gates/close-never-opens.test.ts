// A close can never open a gate (DynamoDB Local): a short close, or an approved open exception,
// made during a freeze hands back to whatever still holds the gate closed when its window ends —
// the schedule's close for its own window, or an earlier, longer close request — never to the
// default.
import { describe, expect, it } from 'vitest';
import { parseGateEvent } from '../../../functions/core/gates/event.ts';
import { gateStatus, handleGateEvent } from '../../../functions/core/gates/requests.ts';
import { engineDeps } from '../../support/deliveries.ts';
import { inProcessGateDeps, manualClock, registerGate } from '../../support/gates.ts';
import { testbed, uniqueName } from '../../support/testbed.ts';

testbed();

const HOUR = 3_600_000;

/** No-Deploy-Friday: open by default, closed for 24 h from 00:00 every Friday (Berlin). */
async function noDeployFriday(start: string) {
  const clock = manualClock(start);
  const deps = { ...engineDeps(), clock };
  const gate = uniqueName('ndf');
  await registerGate(deps, {
    name: gate,
    default: 'open',
    window: '24h',
    schedules: [{ cron: '0 0 ? * FRI *', timeZone: 'Europe/Berlin', action: 'close' }],
  });
  const gateDeps = inProcessGateDeps(deps);
  const send = (fields: Record<string, unknown>) =>
    handleGateEvent(parseGateEvent({ gate, source: 'cli', ...fields }), gateDeps);
  const state = async () => (await gateStatus(gate, gateDeps)).status;
  return { clock, gate, gateDeps, send, state };
}

// Friday 2026-11-27, 10:00 in Berlin (09:00 UTC): the freeze runs until Saturday 00:00 Berlin.
const FRIDAY_10 = '2026-11-27T09:00:00Z';
const FREEZE_ENDS = '2026-11-27T23:00:00.000Z';

describe('a close can never open a gate', () => {
  it('a 1-second close during a cron freeze expires into the freeze, not into the default', async () => {
    const { clock, gateDeps, send, state } = await noDeployFriday(FRIDAY_10);
    expect((await state()).state).toBe('closed');
    const closed = await send({ action: 'close', window: '1s', requestedBy: 'close-only' });
    expect(closed.status).toMatchObject({ state: 'closed', until: FREEZE_ENDS });
    clock.advance(2_000);
    expect(await state()).toMatchObject({ state: 'closed', until: FREEZE_ENDS });
    // No catch-up reconcile is arranged for the moment the 1-second close ends.
    expect(gateDeps.timers.map((timer) => timer.at)).toEqual([FREEZE_ENDS]);
    clock.set(FREEZE_ENDS);
    expect((await state()).state).toBe('open');
  });

  it('an approved one-hour exception during a cron freeze ends in the freeze', async () => {
    const { clock, send, state } = await noDeployFriday(FRIDAY_10);
    const opened = await send({ action: 'open', window: '1h', requestedBy: 'sre', reason: 'hotfix' });
    expect(opened.status.state).toBe('open');
    clock.advance(HOUR - 1_000);
    expect((await state()).state).toBe('open');
    clock.advance(2_000);
    expect(await state()).toMatchObject({ state: 'closed', until: FREEZE_ENDS });
  });

  it('a shorter close cannot end a longer close request early', async () => {
    const { clock, send, state } = await noDeployFriday('2026-11-23T09:00:00Z'); // a Monday
    await send({ action: 'close', window: '72h', requestedBy: 'admin', reason: 'incident' });
    clock.advance(HOUR);
    expect((await send({ action: 'close', window: '1s', requestedBy: 'close-only' })).outcome).toBe(
      'accepted',
    );
    clock.advance(2_000);
    expect(await state()).toMatchObject({ state: 'closed', until: '2026-11-26T09:00:00.000Z' });
    clock.set('2026-11-26T09:00:00Z');
    expect((await state()).state).toBe('open');
  });

  it('an approved exception over a close request lets releases through for its hour only', async () => {
    const { clock, send, state } = await noDeployFriday('2026-11-23T09:00:00Z');
    await send({ action: 'close', window: '72h', requestedBy: 'admin', reason: 'incident' });
    clock.advance(HOUR);
    expect((await send({ action: 'open', window: '1h', requestedBy: 'sre' })).status.state).toBe('open');
    clock.advance(HOUR + 1_000);
    expect(await state()).toMatchObject({ state: 'closed', until: '2026-11-26T09:00:00.000Z' });
  });

  it("an open for the gate's own window over a longer close: the close resumes when that window ends", async () => {
    const { clock, send, state } = await noDeployFriday('2026-11-23T09:00:00Z');
    await send({ action: 'close', window: '72h', requestedBy: 'admin' });
    clock.advance(HOUR);
    // The gate's own window (24 h) applies to a request that names none.
    const opened = await send({ action: 'open', requestedBy: 'admin', reason: 'incident over' });
    expect(opened.status).toMatchObject({ state: 'open', until: '2026-11-24T10:00:00.000Z' });
    clock.set('2026-11-24T10:00:01Z');
    expect((await state()).state).toBe('closed');
  });
});
