import { describe, expect, it } from 'vitest';
import { poll, systemClock, type Clock } from '../../functions/core/clock.ts';

/** A clock whose sleep moves its time at once, recording each wait. */
function fakeClock(): Clock & { readonly slept: number[] } {
  let now = Date.parse('2026-01-01T00:00:00Z');
  const slept: number[] = [];
  return {
    now: () => new Date(now),
    sleep: async (ms) => {
      slept.push(ms);
      now += ms;
    },
    slept,
  };
}

describe('poll', () => {
  it('looks once and does not wait when the first look succeeds', async () => {
    const clock = fakeClock();
    let looks = 0;
    await expect(poll({ clock, every: 100, timeout: 1_000, until: async () => ++looks > 0 })).resolves.toBe(
      true,
    );
    expect(looks).toBe(1);
    expect(clock.slept).toEqual([]);
  });

  it('looks again every `every` ms until a look succeeds', async () => {
    const clock = fakeClock();
    let looks = 0;
    const waits: number[] = [];
    const done = await poll({
      clock,
      every: 250,
      timeout: 10_000,
      until: async () => ++looks === 4,
      waiting: () => waits.push(looks),
    });
    expect(done).toBe(true);
    expect(looks).toBe(4);
    expect(clock.slept).toEqual([250, 250, 250]);
    expect(waits).toEqual([1, 2, 3]);
  });

  it('resolves false after the first failed look past the timeout, and does not wait after it', async () => {
    const clock = fakeClock();
    let looks = 0;
    const done = await poll({
      clock,
      every: 400,
      timeout: 1_000,
      until: async () => {
        looks++;
        return false;
      },
    });
    expect(done).toBe(false);
    // Looks at 0, 400, 800 and 1200 ms: the one at 1200 is past the timeout.
    expect(looks).toBe(4);
    expect(clock.slept).toEqual([400, 400, 400]);
  });

  it('ends with the error a look throws, without looking again', async () => {
    const clock = fakeClock();
    let looks = 0;
    const failure = new Error('the API server said no');
    await expect(
      poll({
        clock,
        every: 100,
        timeout: 1_000,
        until: async () => {
          if (++looks === 2) throw failure;
          return false;
        },
      }),
    ).rejects.toBe(failure);
    expect(looks).toBe(2);
    expect(clock.slept).toEqual([100]);
  });

  it('waits for real on the system clock', async () => {
    const started = Date.now();
    let looks = 0;
    await poll({ clock: systemClock, every: 30, timeout: 5_000, until: async () => ++looks === 2 });
    expect(Date.now() - started).toBeGreaterThanOrEqual(25);
  });
});
