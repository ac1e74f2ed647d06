// Gate state is computed from the spec and the last request; these are pure values.
import { describe, expect, it } from 'vitest';
import { parseGate } from '../../../functions/core/config/index.ts';
import { gateStateAt, nextChange, nextOpening } from '../../../functions/core/gates/state.ts';
import type { GateRequest } from '../../../functions/core/store/gates.ts';

const HOUR = 3_600_000;
const at = (iso: string) => new Date(iso);
const req = (action: 'open' | 'close', requestedAt: string, windowMs?: number): GateRequest => ({
  action,
  requestedAt,
  requestedBy: 'test',
  reason: '',
  source: 'cli',
  ...(windowMs !== undefined && { windowMs }),
});

describe('gateStateAt', () => {
  const gate = parseGate({ name: 'sre', default: 'closed', window: '1h' });

  it('is the default without a request', () => {
    expect(gateStateAt(gate, undefined, at('2026-01-01T00:00:00Z'))).toMatchObject({
      state: 'closed',
      byRequest: false,
    });
  });

  it('follows the request during its window, from requestedAt inclusive to the end exclusive', () => {
    const open = req('open', '2026-01-01T10:00:00.000Z', HOUR);
    expect(gateStateAt(gate, open, at('2026-01-01T09:59:59Z')).state).toBe('closed');
    expect(gateStateAt(gate, open, at('2026-01-01T10:00:00Z'))).toMatchObject({
      state: 'open',
      byRequest: true,
      since: '2026-01-01T10:00:00.000Z',
      until: '2026-01-01T11:00:00.000Z',
    });
    expect(gateStateAt(gate, open, at('2026-01-01T10:59:59.999Z')).state).toBe('open');
    expect(gateStateAt(gate, open, at('2026-01-01T11:00:00Z'))).toMatchObject({
      state: 'closed',
      byRequest: false,
      since: '2026-01-01T11:00:00.000Z',
    });
  });

  it('a request without window lasts until the next one, however long', () => {
    expect(gateStateAt(gate, req('open', '2026-01-01T10:00:00Z'), at('2027-06-01T00:00:00Z')).state).toBe(
      'open',
    );
  });
});

describe('nextChange', () => {
  const friday = parseGate({
    name: 'ndf',
    default: 'open',
    window: '24h',
    schedules: [{ cron: '0 0 ? * FRI *', timeZone: 'Europe/Berlin', action: 'close' }],
  });

  it('is the scheduled close for an open gate, and the window end once it fired', () => {
    expect(nextChange(friday, undefined, at('2026-11-22T12:00:00Z'))).toEqual({
      at: '2026-11-26T23:00:00.000Z',
      state: 'closed',
      cause: 'schedule',
      cron: '0 0 ? * FRI *',
    });
    const fired = req('close', '2026-11-26T23:00:00.000Z', 24 * HOUR);
    expect(nextChange(friday, fired, at('2026-11-27T08:00:00Z'))).toEqual({
      at: '2026-11-27T23:00:00.000Z',
      state: 'open',
      cause: 'window',
    });
  });

  it('a manual close longer than the scheduled window opens at its own end', () => {
    const long = req('close', '2026-11-26T12:00:00.000Z', 72 * HOUR);
    // The Friday schedule fires inside the manual window; its own 24h close ends first, and the
    // manual close still holds until its 72 hours are over.
    expect(nextOpening(friday, long, at('2026-11-26T13:00:00Z'))).toBe('2026-11-29T12:00:00.000Z');
  });

  it('a default-closed gate with an opening schedule opens when the schedule fires', () => {
    const window = parseGate({
      name: 'mw',
      default: 'closed',
      schedules: [{ cron: '0 2 ? * SUN *', timeZone: 'America/New_York', action: 'open', window: '3h' }],
    });
    expect(nextOpening(window, undefined, at('2026-11-22T12:00:00Z'))).toBe('2026-11-29T07:00:00.000Z');
    const opened = req('open', '2026-11-29T07:00:00.000Z', 3 * HOUR);
    expect(nextChange(window, opened, at('2026-11-29T08:00:00Z'))).toMatchObject({
      at: '2026-11-29T10:00:00.000Z',
      state: 'closed',
      cause: 'window',
    });
  });

  it('is unknown for a gate closed until someone opens it', () => {
    const manual = parseGate({ name: 'approval', default: 'closed' });
    expect(nextOpening(manual, undefined, at('2026-11-22T12:00:00Z'))).toBeUndefined();
    expect(
      nextOpening(manual, req('close', '2026-11-22T11:00:00Z'), at('2026-11-22T12:00:00Z')),
    ).toBeUndefined();
  });
});
