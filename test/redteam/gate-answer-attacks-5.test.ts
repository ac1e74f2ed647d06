// Red team 5: the open/close answer reports the effective state. Held attacks: it does not claim
// open while a freeze holds the gate, names the freeze (not a request) as the cause, and says
// nothing of another gate's freeze.
import { describe, expect, it } from 'vitest';
import { handleGateEvent, type GateDeps } from '../../functions/core/gates/requests.ts';
import { engineDeps } from '../support/deliveries.ts';
import { manualClock, registerGate } from '../support/gates.ts';
import { testbed, uniqueName } from '../support/testbed.ts';

testbed();

const deps = engineDeps();
const clock = manualClock('2026-11-27T12:00:00Z');
const gateDeps: GateDeps = { db: deps.db, clock };
const FREEZE = { from: '2026-11-27T00:00', to: '2026-11-28T00:00', timeZone: 'UTC' };

describe('the open answer reports the effective state', () => {
  it('held: an open recorded during a freeze says the gate stays closed, by the freeze', async () => {
    const gate = uniqueName('frozen');
    await registerGate(deps, { name: gate, default: 'closed', freezes: [{ ...FREEZE, reason: 'year end' }] });
    const answer = await handleGateEvent(
      { gate, action: 'open', source: 'cli', requestedBy: 'alice', reason: 'CHG-1' },
      gateDeps,
    );
    expect(answer.outcome).toBe('accepted');
    expect(answer.effective).toMatchObject({ state: 'closed', cause: 'freeze' });
    expect(answer.message).toMatch(/^recorded: .*; the gate stays closed: .*year end/);
    expect(answer.message).not.toMatch(/stays open/);
  });

  it("held: the answer for one gate says nothing of another gate's freeze", async () => {
    const other = uniqueName('other');
    const gate = uniqueName('plain');
    await registerGate(deps, {
      name: other,
      default: 'closed',
      freezes: [{ ...FREEZE, reason: 'SECRET-merger' }],
    });
    await registerGate(deps, { name: gate, default: 'closed' });
    const answer = await handleGateEvent(
      { gate, action: 'open', source: 'cli', requestedBy: 'alice', reason: 'CHG-2' },
      gateDeps,
    );
    expect(answer.effective).toMatchObject({ state: 'open', cause: 'request' });
    expect(JSON.stringify(answer)).not.toContain('SECRET-merger');
    expect(JSON.stringify(answer)).not.toContain(other);
  });

  it('held: a close recorded during a freeze is reported as closed, and the answer names no open', async () => {
    const gate = uniqueName('frozenclose');
    await registerGate(deps, { name: gate, default: 'open', freezes: [{ ...FREEZE, reason: 'year end' }] });
    const answer = await handleGateEvent(
      { gate, action: 'close', source: 'cli', requestedBy: 'alice', reason: 'incident' },
      gateDeps,
    );
    expect(answer.status.state).toBe('closed');
    expect(answer.effective?.state).toBe('closed');
  });
});
