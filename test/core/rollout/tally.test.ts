// A wave's tally as the sum of its members' contributions: each run end changes it by what the
// member's own status changed (once, whatever is repeated), the repair derives it again, and over
// random histories the decisions taken from the tallies keep every rollout promise, checked
// against the full statuses: no member takes the digest before every earlier wave was Ready at
// it for its soak, none while a recorded halt stands, at most maxParallel places taken, and the
// tallies always equal what the statuses add up to.
import { describe, expect, it } from 'vitest';
import type { Rollout } from '../../../functions/core/config/index.ts';
import { outlineOf, placesOf, type MemberPlace } from '../../../functions/core/config/rollout-outline.ts';
import type { RolloutAction, RolloutGeneration } from '../../../functions/core/model/rollout.ts';
import type { BlockingGate, DeliveryStatus } from '../../../functions/core/model/status.ts';
import { rolloutState } from '../../../functions/core/rollout/state.ts';
import { holdsPlace, markFor } from '../../../functions/core/rollout/tallies.ts';
import { afterClaim, tallyState } from '../../../functions/core/rollout/tally-state.ts';
import {
  applyChange,
  contributionOf,
  EMPTY_TALLY,
  NO_CONTRIBUTION,
  tallyChange,
  tallyConsistent,
  tallyOf,
  type TallyChange,
  type WaveTally,
} from '../../../functions/core/rollout/tally.ts';

const D = `sha256:${'a'.repeat(64)}`;
const OLD = `sha256:${'b'.repeat(64)}`;
const T0 = Date.parse('2026-04-01T10:00:00Z');
const at = (minutes: number) => new Date(T0 + minutes * 60_000);
const iso = (minutes: number) => at(minutes).toISOString();

const ROLLOUT: Rollout = {
  name: 'app',
  source: { url: 'oci://r.example/app', semver: '^1', provider: 'generic', insecure: false },
  waves: [
    { patterns: ['canary-*'], deliveries: ['canary-a', 'canary-b'], soakMs: 30 * 60_000 },
    {
      patterns: ['eu-*'],
      deliveries: ['eu-1', 'eu-2', 'eu-3', 'eu-4'],
      soakMs: 60 * 60_000,
      gate: 'eu-approval',
    },
    { patterns: ['*'], deliveries: ['us-1', 'us-2', 'us-3'] },
  ],
  supersede: 'wait',
};
const GENERATION: RolloutGeneration = {
  generation: 1,
  digest: D,
  revision: `v1.2.0@${D}`,
  startedAt: iso(0),
  kind: 'rollout',
  startedBy: 'source',
};
const G = { rollout: 'app', generation: 1, startedAt: iso(0), digest: D };
const mark = (wave: number, claimed = false) => markFor('app', GENERATION, wave, claimed);

const ready = (minutes: number, wave = 0, claimed = false): DeliveryStatus => ({
  ready: true,
  reason: 'ReconciliationSucceeded',
  message: 'Applied',
  lastAppliedRevision: `v@${D}`,
  lastAttemptedRevision: `v@${D}`,
  readySince: iso(minutes),
  lastReconcileAt: iso(minutes),
  rolloutMark: mark(wave, claimed),
});
const waiting = (minutes: number, wave = 0): DeliveryStatus => ({
  ready: false,
  reason: 'RolloutWaiting',
  message: 'waits',
  lastAppliedRevision: `v@${OLD}`,
  lastAttemptedRevision: `v@${OLD}`,
  lastReconcileAt: iso(minutes),
  rolloutMark: mark(wave),
});

describe('a wave tally', () => {
  it('counts a member becoming Ready once; writing the same status again changes nothing', () => {
    const before = contributionOf(waiting(1), G);
    const after = contributionOf(ready(2), G);
    const change = tallyChange(before, after)!;
    expect(change).toMatchObject({ done: 1, started: 1, applied: 1, readySince: iso(2) });
    const once = applyChange(EMPTY_TALLY, 'canary-a', change);
    expect(once).toMatchObject({ done: 1, started: 1, lastReady: iso(2) });
    // The repeated run end: its status as stored is already the Ready one.
    expect(tallyChange(after, contributionOf(ready(2), G))).toBeUndefined();
    // A later run that finds it still Ready (same readySince) changes nothing either.
    expect(tallyChange(after, contributionOf({ ...ready(2), lastReconcileAt: iso(9) }, G))).toBeUndefined();
  });

  it('a status marked for another generation, or not marked, adds nothing', () => {
    expect(contributionOf({ ...ready(1), rolloutMark: undefined }, G)).toEqual(NO_CONTRIBUTION);
    expect(contributionOf(ready(1), { ...G, generation: 2 })).toEqual(NO_CONTRIBUTION);
    expect(contributionOf(ready(1), { ...G, startedAt: iso(5) })).toEqual(NO_CONTRIBUTION);
  });

  it('keeps a failure by name until the member recovers, and the latest readySince', () => {
    const failed: DeliveryStatus = {
      ...waiting(3),
      reason: 'HealthCheckFailed',
      message: 'Deployment/web not ready',
      lastAttemptedRevision: `v@${D}`,
    };
    let tally = applyChange(EMPTY_TALLY, 'eu-1', tallyChange(NO_CONTRIBUTION, contributionOf(failed, G)));
    expect(tally.failures).toEqual({
      'eu-1': { at: iso(3), why: 'HealthCheckFailed: Deployment/web not ready' },
    });
    tally = applyChange(tally, 'eu-1', tallyChange(contributionOf(failed, G), contributionOf(ready(7), G)));
    expect(tally).toMatchObject({ done: 1, failures: {}, lastReady: iso(7) });
    tally = applyChange(tally, 'eu-2', tallyChange(NO_CONTRIBUTION, contributionOf(ready(5), G)));
    expect(tally.lastReady).toBe(iso(7));
  });

  it('cannot be the sum of its wave when a count is out of range', () => {
    expect(tallyConsistent({ ...EMPTY_TALLY, done: 1, started: 1, applied: 1, lastReady: iso(0) }, 2)).toBe(
      true,
    );
    expect(tallyConsistent({ ...EMPTY_TALLY, done: 3, started: 3, applied: 3, lastReady: iso(0) }, 2)).toBe(
      false,
    );
    expect(tallyConsistent({ ...EMPTY_TALLY, open: -1 }, 2)).toBe(false);
    expect(tallyConsistent({ ...EMPTY_TALLY, done: 1, started: 0, applied: 1, lastReady: iso(0) }, 2)).toBe(
      false,
    );
  });
});

describe('tallyState', () => {
  const tallies = (statuses: Record<string, DeliveryStatus>): WaveTally[] =>
    ROLLOUT.waves.map((wave) =>
      tallyOf(new Map(wave.deliveries.map((name) => [name, contributionOf(statuses[name], G)]))),
    );
  const state = (
    statuses: Record<string, DeliveryStatus>,
    member: string,
    overrides: {
      rollout?: Rollout;
      now?: number;
      actions?: RolloutAction[];
      gates?: Map<number, BlockingGate>;
    } = {},
  ) =>
    tallyState({
      rollout: outlineOf(overrides.rollout ?? ROLLOUT),
      generation: GENERATION,
      tallies: tallies(statuses),
      waveGates: overrides.gates ?? new Map(),
      actions: overrides.actions ?? [],
      now: at(overrides.now ?? 0),
      member: {
        name: member,
        status: statuses[member],
        claimed: holdsPlace(statuses[member], 'app', GENERATION),
        place: placesOf(overrides.rollout ?? ROLLOUT).get(member),
      },
    });

  it('lets the first wave take, holds the next until the soak ends', () => {
    expect(state({}, 'canary-a').turn).toBe('take');
    expect(state({}, 'eu-1').turn).toBe('wait');
    const canaries = { 'canary-a': ready(5), 'canary-b': ready(10) };
    const soaking = state(canaries, 'eu-1', { now: 39 });
    expect(soaking.turn).toBe('wait');
    expect(soaking.state).toMatchObject({ activeWave: 1, nextAt: iso(40) });
    expect(state(canaries, 'eu-1', { now: 40 }).turn).toBe('take');
  });

  it('asks for a place under maxParallel, and none is left once maxParallel are taken', () => {
    const rollout = { ...ROLLOUT, maxParallel: 1 };
    const canaries = { 'canary-a': ready(0), 'canary-b': ready(0) };
    const first = state(canaries, 'eu-1', { rollout, now: 100 });
    expect(first.turn).toBe('claim');
    expect(afterClaim(first, 'eu-1').state.mayTake).toEqual(new Set(['eu-1']));
    const taken = { ...canaries, 'eu-1': { ...waiting(100, 1), rolloutMark: mark(1, true) } };
    expect(state(taken, 'eu-1', { rollout, now: 100 }).turn).toBe('take');
    expect(state(taken, 'eu-2', { rollout, now: 100 }).turn).toBe('wait');
    // Ready at the digest, it gives its place back.
    const done = { ...canaries, 'eu-1': ready(101, 1, true) };
    expect(state(done, 'eu-2', { rollout, now: 101 }).turn).toBe('claim');
  });

  it('halts on a failure recorded after the last resume, not on one before it', () => {
    const failed: DeliveryStatus = {
      ...waiting(3),
      reason: 'HealthCheckFailed',
      message: 'not ready',
      lastAttemptedRevision: `v@${D}`,
    };
    const halted = state({ 'canary-a': failed }, 'canary-b', { now: 4 });
    expect(halted.state.halt).toMatchObject({ wave: 1, delivery: 'canary-a', recorded: false });
    expect(halted.turn).toBe('wait');
    const resume: RolloutAction = {
      action: 'resume',
      generation: 1,
      at: iso(5),
      by: 'me',
      verified: true,
      reason: 'ok',
      sequence: 1,
    };
    expect(
      state({ 'canary-a': failed }, 'canary-b', { now: 6, actions: [resume] }).state.halt,
    ).toBeUndefined();
  });
});

/** A small deterministic generator (mulberry32), so a failing history can be replayed by its seed. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** JSON with the keys of every object sorted (the failures are a map by name). */
const canonical = (value: unknown): string =>
  JSON.stringify(value, (_, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => a.localeCompare(b)))
      : v,
  );

/**
 * A fault planted for the checks to catch: a repeated run end that counts its change twice, or a
 * member's place read in the wrong wave (us-3, of wave 3, as if it were the second of wave 2).
 */
type Fault = 'none' | 'repeat-counts-twice' | 'wrong-wave';

interface HistoryReport {
  readonly violations: string[];
  readonly completed: boolean;
  readonly repeated: number;
  readonly lost: number;
  readonly repaired: number;
  readonly claims: number;
}

/**
 * One random history: members run in random order (each run's end changes its wave's tally as the
 * transaction does), some runs are lost (nothing written), some run ends are written twice, members
 * fail, recover, regress; halts are recorded and resumed; the wave gate opens and closes; tallies
 * are lost or corrupted and repaired (at once when inconsistent, else on the slow cadence). After
 * every step the promises are checked against the statuses.
 */
function history(seed: number, fault: Fault): HistoryReport {
  const next = random(seed);
  const rollout: Rollout = { ...ROLLOUT, ...(next() < 0.7 && { maxParallel: 1 + Math.floor(next() * 2) }) };
  const waves = rollout.waves;
  const all = waves.flatMap((w) => w.deliveries);
  const waveOf = (name: string) => waves.findIndex((w) => w.deliveries.includes(name));
  // What a member's run reads: the outline (a count per wave) and its own place.
  const outline = outlineOf(rollout);
  const places = placesOf(rollout);
  const placeOf = (name: string): MemberPlace | undefined =>
    fault === 'wrong-wave' && name === 'us-3' ? { wave: 1, position: 1 } : places.get(name);
  const statuses = new Map<string, DeliveryStatus>();
  const tallies: (WaveTally | undefined)[] = waves.map(() => undefined);
  const derivedAt: number[] = waves.map(() => 0);
  // A tally lost on purpose, until the repair derives it again: the checks of that wave wait for it.
  const tallyLost: boolean[] = waves.map(() => false);
  const actions: RolloutAction[] = [];
  const tookAt = new Map<string, number>();
  const violations: string[] = [];
  let minute = 0;
  let gateOpen = next() < 0.5;
  let repeated = 0;
  let lost = 0;
  let repaired = 0;
  let claims = 0;
  const derive = (wave: number) =>
    tallyOf(new Map(waves[wave]!.deliveries.map((name) => [name, contributionOf(statuses.get(name), G)])));
  // The reader (rollout/tallies.ts): an inconsistent tally is derived again at once; every
  // REPAIR minutes one that some change reached is derived again.
  const REPAIR = 60;
  const read = (): WaveTally[] =>
    waves.map((wave, index) => {
      const tally = tallies[index] ?? EMPTY_TALLY;
      const due = Math.floor(minute / REPAIR) > Math.floor(derivedAt[index]! / REPAIR);
      const reached =
        tallies[index] !== undefined ||
        index === 0 ||
        (tallies[index - 1]?.done ?? 0) >= waves[index - 1]!.deliveries.length;
      if (!tallyConsistent(tally, wave.deliveries.length) || (due && reached)) {
        tallies[index] = derive(index);
        derivedAt[index] = minute;
        tallyLost[index] = false;
        repaired++;
      }
      return tallies[index] ?? EMPTY_TALLY;
    });
  const change = (
    name: string,
    before: DeliveryStatus | undefined,
    after: DeliveryStatus,
  ): TallyChange | undefined => tallyChange(contributionOf(before, G), contributionOf(after, G));
  // The tally of the wave the status's mark names (the run's own reading of its place).
  const apply = (name: string, delta: TallyChange | undefined, markWave?: number) => {
    const wave = markWave ?? waveOf(name);
    tallies[wave] = applyChange(tallies[wave] ?? EMPTY_TALLY, name, delta);
  };
  // A run end: the status and its tally change together, the change computed from the status as stored.
  const end = (name: string, status: DeliveryStatus) => {
    const delta = change(name, statuses.get(name), status);
    statuses.set(name, status);
    const markWave = status.rolloutMark?.wave;
    apply(name, delta, markWave);
    if (next() < 0.08) {
      repeated++;
      // Written again (a retried request): the status as stored is already this one.
      apply(
        name,
        fault === 'repeat-counts-twice' ? delta : change(name, statuses.get(name), status),
        markWave,
      );
    }
  };
  let completed = false;

  for (let step = 0; step < 400 && violations.length === 0; step++) {
    minute += Math.floor(next() * 15);
    if (next() < 0.1) gateOpen = !gateOpen;
    const gates = new Map<number, BlockingGate>(
      gateOpen ? [] : [[1, { name: 'eu-approval', blocks: 'all' }]],
    );
    // Faults in the tallies themselves: lost (the slow repair finds it), or impossible (repaired at once).
    if (next() < 0.02) {
      const wave = Math.floor(next() * waves.length);
      if (next() < 0.5) {
        tallies[wave] = undefined;
        tallyLost[wave] = true;
      } else tallies[wave] = { ...(tallies[wave] ?? EMPTY_TALLY), done: -1 };
    }
    const name = all[Math.floor(next() * all.length)]!;
    const status = statuses.get(name);
    const current = read();
    let member = tallyState({
      rollout: outline,
      generation: GENERATION,
      tallies: current,
      waveGates: gates,
      actions,
      now: at(minute),
      member: { name, status, claimed: holdsPlace(status, 'app', GENERATION), place: placeOf(name) },
    });
    const wave = member.wave;
    // The halt it found, recorded (as recordHalt does).
    if (member.state.halt && !member.state.halt.recorded)
      actions.push({
        action: 'halt',
        generation: 1,
        at: iso(minute),
        by: 'sluice',
        verified: true,
        reason: member.state.halt.why,
        wave: member.state.halt.wave,
        sequence: actions.length + 1,
        automatic: true,
      });
    if (member.state.phase === 'Complete') {
      completed = true;
      break;
    }
    const lostRun = next() < 0.05;
    if (member.turn === 'claim') {
      // The place is taken only while fewer than maxParallel are (the conditional write).
      const place = current[wave]!.open < rollout.maxParallel!;
      const open = waves[wave]!.deliveries.filter((other) => {
        const s = statuses.get(other);
        return holdsPlace(s, 'app', GENERATION) && !(s?.ready && s.lastAppliedRevision?.endsWith(D));
      }).length;
      if (place && open >= rollout.maxParallel! && !tallyLost.some(Boolean))
        violations.push(
          `seed ${seed}: ${name} took a place in wave ${wave + 1} with ${open} of ${rollout.maxParallel} taken`,
        );
      if (place) {
        const claimed = { ...(status ?? waiting(minute, wave)), rolloutMark: mark(wave, true) };
        apply(name, change(name, status, claimed), wave);
        statuses.set(name, claimed);
        claims++;
        member = afterClaim(member, name);
      }
    }
    const stored = statuses.get(name);
    const claimed = holdsPlace(stored, 'app', GENERATION);
    if (member.turn === 'take') {
      // The invariants, against the statuses: every earlier wave Ready and soaked; no recorded halt standing.
      if (!tookAt.has(name)) {
        // Against the member's wave in the full rollout, not the place its run read.
        for (const earlier of waves.slice(0, waveOf(name)))
          for (const other of earlier.deliveries) {
            const s = statuses.get(other);
            const soaked =
              s?.ready &&
              s.lastAppliedRevision?.endsWith(D) &&
              Date.parse(s.readySince!) + (earlier.soakMs ?? 0) <= at(minute).getTime();
            if (!soaked)
              violations.push(
                `seed ${seed}: ${name} (wave ${waveOf(name) + 1}) took the digest before ${other} was Ready at it and soaked`,
              );
          }
        const standing = rolloutState({
          rollout,
          generation: GENERATION,
          statuses,
          waveGates: gates,
          actions,
          now: at(minute),
        }).halt;
        if (standing?.recorded && !(stored?.ready && stored.lastAppliedRevision?.endsWith(D)))
          violations.push(
            `seed ${seed}: ${name} took the digest while the halt recorded at ${standing.at} stood`,
          );
        if (!lostRun) tookAt.set(name, minute);
      }
      if (!lostRun) {
        const roll = next();
        const m = mark(wave, claimed);
        if (roll < 0.03)
          end(name, {
            ready: false,
            reason: 'HealthCheckFailed',
            message: 'Deployment/web not ready',
            lastAppliedRevision: stored?.lastAppliedRevision ?? `v@${OLD}`,
            lastAttemptedRevision: `v@${D}`,
            lastReconcileAt: iso(minute),
            rolloutMark: m,
          });
        else if (roll < 0.2)
          end(name, {
            ready: false,
            reason: 'Progressing',
            message: 'rolling out',
            lastAppliedRevision: `v@${D}`,
            lastAttemptedRevision: `v@${D}`,
            lastReconcileAt: iso(minute),
            rolloutMark: m,
          });
        else
          end(name, {
            ...ready(minute, wave, claimed),
            readySince:
              stored?.ready && stored.lastAppliedRevision?.endsWith(D) ? stored.readySince! : iso(minute),
          });
      } else lost++;
    } else if (!lostRun) end(name, { ...waiting(minute, wave), rolloutMark: mark(wave, claimed) });
    else lost++;
    // Members that took the digest and are not Ready yet get Ready at their next run (most of the time).
    for (const [other, status] of statuses)
      if (
        other !== name &&
        !status.ready &&
        status.reason === 'Progressing' &&
        status.lastAppliedRevision?.endsWith(D) &&
        next() < 0.3
      )
        end(other, {
          ...ready(minute, placeOf(other)?.wave ?? waveOf(other), holdsPlace(status, 'app', GENERATION)),
        });
    // A person resumes a halted rollout now and then.
    if (member.state.halt?.recorded && next() < 0.5)
      actions.push({
        action: 'resume',
        generation: 1,
        at: iso(minute + 1),
        by: 'me',
        verified: true,
        reason: 'ok',
        sequence: actions.length + 1,
      });

    // The tallies are what the statuses add up to (lastReady: not earlier), except a lost one until its repair.
    for (const [index] of waves.entries()) {
      if (tallyLost[index]) continue;
      const held = tallies[index] ?? EMPTY_TALLY;
      const derived = derive(index);
      const { lastReady: heldReady, ...heldCounts } = held;
      const { lastReady: derivedReady, ...derivedCounts } = derived;
      if (!tallyConsistent(held, waves[index]!.deliveries.length)) continue;
      if (canonical(heldCounts) !== canonical(derivedCounts))
        violations.push(
          `seed ${seed}, step ${step}: wave ${index + 1}'s tally ${JSON.stringify(heldCounts)} is not the statuses' ${JSON.stringify(derivedCounts)}`,
        );
      else if (derivedReady !== undefined && (heldReady === undefined || heldReady < derivedReady))
        violations.push(
          `seed ${seed}, step ${step}: wave ${index + 1}'s lastReady ${heldReady} is before ${derivedReady}`,
        );
    }
    // The same waves, soaks and halts as the state computed from every status.
    if (!tallyLost.some(Boolean)) {
      const full = rolloutState({
        rollout,
        generation: GENERATION,
        statuses,
        waveGates: gates,
        actions,
        now: at(minute),
      });
      const fromTallies = tallyState({
        rollout: outline,
        generation: GENERATION,
        tallies: read(),
        waveGates: gates,
        actions,
        now: at(minute),
        member: {
          name,
          status: statuses.get(name),
          claimed: holdsPlace(statuses.get(name), 'app', GENERATION),
          place: placeOf(name),
        },
      }).state;
      const view = (s: typeof full) => ({
        phase: s.phase,
        activeWave: s.activeWave,
        nextAt: s.nextAt,
        halt: s.halt?.wave,
      });
      if (JSON.stringify(view(full)) !== JSON.stringify(view(fromTallies)))
        violations.push(
          `seed ${seed}, step ${step}: from the tallies ${JSON.stringify(view(fromTallies))}, from the statuses ${JSON.stringify(view(full))}`,
        );
    }
  }
  return { violations, completed, repeated, lost, repaired, claims };
}

describe('decisions from the tallies over random histories', () => {
  const HISTORIES = 300;

  it('keep every promise against the full statuses, and the tallies stay their sum', () => {
    const reports = Array.from({ length: HISTORIES }, (_, i) => history(i + 1, 'none'));
    expect(reports.flatMap((r) => r.violations)).toEqual([]);
    // Not vacuous: most histories go through every wave, with repeated and lost runs, repairs and places.
    expect(reports.filter((r) => r.completed).length).toBeGreaterThan(HISTORIES / 2);
    expect(reports.filter((r) => r.repeated > 0).length).toBeGreaterThan(HISTORIES / 2);
    expect(reports.filter((r) => r.lost > 0).length).toBeGreaterThan(HISTORIES / 2);
    expect(reports.filter((r) => r.repaired > 0).length).toBeGreaterThan(HISTORIES / 2);
    expect(reports.filter((r) => r.claims > 0).length).toBeGreaterThan(HISTORIES / 2);
  });

  it('catch a planted fault: a repeated run end that counts its change twice', () => {
    const caught = Array.from({ length: HISTORIES }, (_, i) => history(i + 1, 'repeat-counts-twice')).filter(
      (r) => r.violations.length > 0,
    );
    expect(caught.length).toBeGreaterThan(HISTORIES / 4);
  });

  it('catch a planted fault: a member whose place is read in the wrong wave', () => {
    // us-3 takes the digest as the second of wave 2, before wave 2 was Ready and soaked (298 of 300).
    const caught = Array.from({ length: HISTORIES }, (_, i) => history(i + 1, 'wrong-wave')).filter(
      (r) => r.violations.length > 0,
    );
    expect(caught.length).toBeGreaterThan(HISTORIES / 2);
  });
});
