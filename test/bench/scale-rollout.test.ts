// The rollout phase of `npm run scale`: its waves, the invariants it fails on, its cost of runs.
import { describe, expect, it } from 'vitest';
import { costOfRuns, PRICES, total } from '../../bench/scale/cost.ts';
import { faultyMember, fleetWaves } from '../../bench/scale/fleet.ts';
import {
  aheadOfTheirWave,
  behindTheirWave,
  movedAfterHalt,
  mustHold,
  tookBeforeSoak,
} from '../../bench/scale/rollout-invariants.ts';

const waves = [['canary-01'], ['eu-001', 'eu-002'], ['us-001']];
const MINUTE = 60_000;

describe('the rollout fleet', () => {
  it('1,000 deliveries are waves of 10 canaries, 90 eu-* and 900 others (1 % / 9 % / 90 %); the refused member is half-way through wave 2', () => {
    const fleet = fleetWaves(1000);
    expect(fleet.map((w) => w.length)).toEqual([10, 90, 900]);
    expect(fleet[0]![0]).toBe('canary-01');
    expect(faultyMember(fleet)).toBe('eu-46');
    // 10,000 in the same proportions, named apart so both fleets share the clusters.
    const large = fleetWaves(10000);
    expect(large.map((w) => w.length)).toEqual([100, 900, 9000]);
    expect([large[0]![0], large[2]![8999]]).toEqual(['f10000-canary-001', 'f10000-us-9000']);
    expect(() => fleetWaves(2)).toThrow(/too small for three waves/);
  });
});

describe('rollout invariants', () => {
  it('a member that took the revision before the wave before it soaked breaks the order', () => {
    const ready = new Map([
      ['canary-01', 0],
      ['eu-001', 40 * MINUTE],
      ['eu-002', 41 * MINUTE],
    ]);
    const inOrder = new Map([
      ['eu-001', 30 * MINUTE],
      ['eu-002', 30 * MINUTE],
      ['us-001', 71 * MINUTE],
    ]);
    expect(tookBeforeSoak(waves, inOrder, ready, 30 * MINUTE)).toEqual([]);
    const early = new Map([...inOrder, ['us-001', 70 * MINUTE]]);
    expect(tookBeforeSoak(waves, early, ready, 30 * MINUTE)).toEqual([
      expect.stringMatching(/^us-001 \(wave 3\) took the revision at .* before wave 2 had soaked \(until /),
    ]);
    const unready = new Map([['canary-01', 0]]);
    expect(tookBeforeSoak(waves, inOrder, unready, 0)).toEqual([
      expect.stringContaining(
        'us-001 (wave 3) took the revision at 1970-01-01T01:11:00.000Z, before wave 2 had soaked (not every member Ready)',
      ),
    ]);
  });

  it('names members ahead of or behind their wave, and members that moved after the halt', () => {
    const live = new Map<string, string | undefined>([
      ['canary-01', 'v2'],
      ['eu-001', 'v2'],
      ['eu-002', 'v1'],
      ['us-001', 'v2'],
    ]);
    expect(aheadOfTheirWave(waves, live, 'v2', 2)).toEqual(['us-001 (wave 3) runs v2']);
    expect(behindTheirWave(waves, live, 'v2', 2)).toEqual(['eu-002 (wave 2) runs v1, not v2']);
    const atHalt = new Map([...live, ['us-001', 'v1']]);
    expect(movedAfterHalt(atHalt, live, 'v2')).toEqual(['us-001 took v2 after the halt']);
    expect(() => mustHold('after the halt', ['us-001 took v2 after the halt'])).toThrow(
      'rollout invariant broken (after the halt): us-001 took v2 after the halt',
    );
    expect(() => mustHold('nothing', [])).not.toThrow();
  });
});

describe('cost of runs', () => {
  it('multiplies what the runs used by the list prices', () => {
    const lines = costOfRuns({
      lambdaSeconds: 100,
      memoryGb: 1,
      invocations: 1000,
      readUnits: 2e6,
      writeUnits: 1e4,
      schedules: 50,
    });
    expect(total(lines)).toBeCloseTo(
      100 * PRICES.lambdaGbSecond.usd + 1000 * 0.2e-6 + 2e6 * 0.125e-6 + 1e4 * 0.625e-6 + 50e-6,
      10,
    );
  });
});
