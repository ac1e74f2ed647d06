// A rollout's state computed from its records: waves in order, soaks, gates, maxParallel, halts
// found and recorded, resumes and rollbacks; and, over random histories, no wave is ever skipped.
import { describe, expect, it } from 'vitest';
import type { Rollout } from '../../../functions/core/config/index.ts';
import type { RolloutAction, RolloutGeneration } from '../../../functions/core/model/rollout.ts';
import type { BlockingGate, DeliveryStatus } from '../../../functions/core/model/status.ts';
import {
  memberTurn,
  rolloutState,
  rolloutSummary,
  wakesAtSoakEnd,
  type RolloutInputs,
} from '../../../functions/core/rollout/state.ts';

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
    { patterns: ['eu-*'], deliveries: ['eu-1', 'eu-2', 'eu-3'], soakMs: 60 * 60_000, gate: 'eu-approval' },
    { patterns: ['*'], deliveries: ['us-1', 'us-2'] },
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
  previous: { digest: OLD, revision: `v1.1.0@${OLD}` },
};

const ready = (minutes: number, digest = D): DeliveryStatus => ({
  ready: true,
  reason: 'ReconciliationSucceeded',
  message: 'Applied',
  lastAppliedRevision: `v@${digest}`,
  lastAttemptedRevision: `v@${digest}`,
  readySince: iso(minutes),
  lastReconcileAt: iso(minutes),
});
const failed = (minutes: number): DeliveryStatus => ({
  ready: false,
  reason: 'HealthCheckFailed',
  message: 'Deployment/web not ready',
  lastAppliedRevision: `v@${OLD}`,
  lastAttemptedRevision: `v@${D}`,
  lastReconcileAt: iso(minutes),
});
const ALARMED: BlockingGate = {
  name: 'eu-approval',
  blocks: 'all',
  closedByAlarms: [{ alarm: 'errors', state: 'ALARM', why: 'in ALARM since then' }],
};

function inputs(
  overrides: Partial<Omit<RolloutInputs, 'statuses'>> & { statuses?: Record<string, DeliveryStatus> },
): RolloutInputs {
  const { statuses, ...rest } = overrides;
  return {
    rollout: ROLLOUT,
    generation: GENERATION,
    statuses: new Map(Object.entries(statuses ?? {})),
    waveGates: new Map(),
    actions: [],
    now: at(0),
    ...rest,
  };
}

const taking = (state: ReturnType<typeof rolloutState>) => [...state.mayTake].sort();

describe('rolloutState', () => {
  it('is idle before a revision was resolved', () => {
    const state = rolloutState(inputs({ generation: undefined }));
    expect(state).toMatchObject({ phase: 'Idle', mayTake: new Set() });
    expect(rolloutSummary(state)).toBe('no revision rolled out yet');
  });

  it('a generation recorded as completed stays complete: a member failing since fails alone, halting nothing', () => {
    const everyone = Object.fromEntries(
      ROLLOUT.waves.flatMap((w) => w.deliveries).map((name) => [name, ready(0)]),
    );
    const state = rolloutState(
      inputs({
        generation: { ...GENERATION, completedAt: iso(200) },
        statuses: { ...everyone, 'eu-2': failed(300) },
        now: at(301),
      }),
    );
    expect(state.phase).toBe('Complete');
    expect(state.halt).toBeUndefined();
    expect(taking(state)).toEqual(ROLLOUT.waves.flatMap((w) => w.deliveries).sort());
    // Its row still says so.
    expect(state.waves[1]!.members.find((m) => m.name === 'eu-2')).toMatchObject({ phase: 'Failed' });
    // Without the record, the same statuses halt it.
    expect(rolloutState(inputs({ statuses: { ...everyone, 'eu-2': failed(300) }, now: at(301) })).phase).toBe(
      'Halted',
    );
  });

  it('a rollback admits every member at once, whatever maxParallel paces a new revision at', () => {
    const state = rolloutState(
      inputs({
        rollout: { ...ROLLOUT, maxParallel: 1 },
        generation: {
          ...GENERATION,
          generation: 2,
          kind: 'rollback',
          digest: OLD,
          revision: `v1.1.0@${OLD}`,
        },
      }),
    );
    expect(taking(state)).toEqual(ROLLOUT.waves.flatMap((w) => w.deliveries).sort());
  });

  it('admits the first wave only; the later ones keep their revision', () => {
    const state = rolloutState(inputs({}));
    expect(state).toMatchObject({ phase: 'Progressing', activeWave: 1 });
    expect(taking(state)).toEqual(['canary-a', 'canary-b']);
    expect(memberTurn(state, 'eu-1')).toEqual({
      take: false,
      halted: false,
      why: `rollout 'app' of v1.2.0@${D}: wave 2 of 3 waits for wave 1 to finish (wave 1 progressing)`,
    });
  });

  it('starts the next wave only when every member has been Ready at the digest for the soak', () => {
    const soaking = rolloutState(
      inputs({ statuses: { 'canary-a': ready(5), 'canary-b': ready(10) }, now: at(39) }),
    );
    expect(soaking).toMatchObject({ activeWave: 1, nextAt: iso(40) });
    // Only the next wave's first maxParallel waiting members are retried when the soak ends.
    expect(['eu-1', 'eu-2', 'eu-3', 'us-1'].filter((m) => wakesAtSoakEnd(soaking, m, 2))).toEqual([
      'eu-1',
      'eu-2',
    ]);
    expect(['eu-1', 'eu-2', 'eu-3', 'us-1'].filter((m) => wakesAtSoakEnd(soaking, m, undefined))).toEqual([
      'eu-1',
      'eu-2',
      'eu-3',
    ]);
    expect(soaking.waves[0]).toMatchObject({ phase: 'Soaking', soakEndsAt: iso(40) });
    expect(taking(soaking)).toEqual(['canary-a', 'canary-b']);
    expect(rolloutSummary(soaking)).toBe(
      `v1.2.0@${D}: wave 1 of 3 soaking (2 of 2 Ready, soaking until ${iso(40)})`,
    );

    const soaked = rolloutState(
      inputs({ statuses: { 'canary-a': ready(5), 'canary-b': ready(10) }, now: at(40) }),
    );
    expect(soaked.activeWave).toBe(2);
    expect(taking(soaked)).toEqual(['canary-a', 'canary-b', 'eu-1', 'eu-2', 'eu-3']);
  });

  it('a member Ready at another digest does not count', () => {
    const state = rolloutState(
      inputs({ statuses: { 'canary-a': ready(0), 'canary-b': ready(0, OLD) }, now: at(100) }),
    );
    expect(state.activeWave).toBe(1);
    expect(state.waves[0]!.members).toEqual([
      { name: 'canary-a', phase: 'Done' },
      { name: 'canary-b', phase: 'Admitted' },
    ]);
  });

  it('admits at most maxParallel members of a wave at once, in config order', () => {
    const rollout = { ...ROLLOUT, maxParallel: 2 };
    const base = { 'canary-a': ready(0), 'canary-b': ready(0) };
    const first = rolloutState(inputs({ rollout, statuses: base, now: at(100) }));
    expect(taking(first)).toEqual(['canary-a', 'canary-b', 'eu-1', 'eu-2']);
    const next = rolloutState(inputs({ rollout, statuses: { ...base, 'eu-1': ready(90) }, now: at(100) }));
    expect(taking(next)).toEqual(['canary-a', 'canary-b', 'eu-1', 'eu-2', 'eu-3']);
  });

  it('holds a wave behind its gate, and halts when an alarm closes it', () => {
    const statuses = { 'canary-a': ready(0), 'canary-b': ready(0) };
    const closed: BlockingGate = { name: 'eu-approval', blocks: 'all', approvesRevisions: true };
    const gated = rolloutState(inputs({ statuses, waveGates: new Map([[1, closed]]), now: at(100) }));
    expect(gated.waves[1]).toMatchObject({ phase: 'Gated', heldBy: closed });
    expect(taking(gated)).toEqual(['canary-a', 'canary-b']);
    expect(memberTurn(gated, 'eu-2')).toMatchObject({
      why: expect.stringContaining("gate 'eu-approval' to open"),
    });

    const alarmed = rolloutState(inputs({ statuses, waveGates: new Map([[1, ALARMED]]), now: at(100) }));
    expect(alarmed).toMatchObject({
      phase: 'Halted',
      halt: {
        wave: 2,
        recorded: false,
        why: "wave 2's gate 'eu-approval' is closed by alarm 'errors' (in ALARM since then)",
      },
    });
    // A gate of a wave that cannot start yet halts nothing.
    expect(rolloutState(inputs({ waveGates: new Map([[1, ALARMED]]) })).phase).toBe('Progressing');
  });

  it('an alarm before the revision went out holds the wave (no halt); it halts only once a member applied the digest', () => {
    // Generation 1 of a first deploy: no member has the digest, the wave's gate alarm has no data yet.
    const noData: BlockingGate = {
      name: 'eu-approval',
      blocks: 'all',
      closedByAlarms: [{ alarm: 'errors', state: 'INSUFFICIENT_DATA', why: 'has no data yet' }],
    };
    const firstWave = { ...ROLLOUT, waves: [{ ...ROLLOUT.waves[1]!, patterns: ['eu-*'] }] };
    const fresh = rolloutState(inputs({ rollout: firstWave, waveGates: new Map([[0, noData]]) }));
    expect(fresh).toMatchObject({ phase: 'Progressing', waves: [{ phase: 'Gated' }] });
    expect(fresh.halt).toBeUndefined();
    // In ALARM before anyone applied the digest: still a hold, the revision cannot be its cause.
    const firing = rolloutState(inputs({ rollout: firstWave, waveGates: new Map([[0, ALARMED]]) }));
    expect(firing.halt).toBeUndefined();
    expect(memberTurn(firing, 'eu-1')).toMatchObject({ take: false, halted: false });
    // Without data after the canary took it: no verdict, a hold.
    const statuses = { 'canary-a': ready(0), 'canary-b': ready(0) };
    expect(
      rolloutState(inputs({ statuses, waveGates: new Map([[1, noData]]), now: at(100) })).halt,
    ).toBeUndefined();
  });

  it('halts on a member that failed at the digest; the later waves keep their revision', () => {
    const state = rolloutState(
      inputs({ statuses: { 'canary-a': ready(0), 'canary-b': failed(3) }, now: at(100) }),
    );
    expect(state).toMatchObject({
      phase: 'Halted',
      halt: {
        wave: 1,
        delivery: 'canary-b',
        recorded: false,
        why: `delivery 'canary-b' failed at v1.2.0@${D}: HealthCheckFailed: Deployment/web not ready`,
      },
    });
    expect(taking(state)).toEqual(['canary-a']);
    expect(memberTurn(state, 'canary-b')).toMatchObject({ take: false, halted: true });
    expect(rolloutSummary(state)).toMatch(
      /^v1\.2\.0@sha256:a+: halted in wave 1: delivery 'canary-b' failed/,
    );
  });

  it('halts on a member held by an alarm gate in ALARM once the revision went out; before, it holds', () => {
    const held: DeliveryStatus = {
      ready: false,
      reason: 'GateClosed',
      message: 'held',
      lastAttemptedRevision: `v@${D}`,
      blockedBy: [{ ...ALARMED, name: 'health' }],
      lastReconcileAt: iso(1),
    };
    expect(rolloutState(inputs({ statuses: { 'canary-a': held, 'canary-b': ready(0) } })).halt).toMatchObject(
      {
        wave: 1,
        delivery: 'canary-a',
        why: "delivery 'canary-a' is held: gate 'health' closed by alarm 'errors' (in ALARM since then)",
      },
    );
    // No member applied the digest yet (a first deploy): held, not halted.
    const before = rolloutState(inputs({ statuses: { 'canary-a': held } }));
    expect(before.halt).toBeUndefined();
    expect(before.phase).toBe('Progressing');
  });

  it('an alarm hold read before a resume does not halt the rollout again after it', () => {
    const halt: RolloutAction = {
      action: 'halt',
      generation: 1,
      at: iso(2),
      by: 'sluice',
      verified: true,
      reason: 'alarm',
      wave: 1,
      delivery: 'canary-a',
      automatic: true,
      sequence: 1,
    };
    const resume: RolloutAction = {
      action: 'resume',
      generation: 1,
      at: iso(5),
      by: 'arn:aws:iam::1:user/alice',
      verified: true,
      reason: 'alarm is OK',
      sequence: 2,
    };
    const heldAt = (minutes: number): DeliveryStatus => ({
      ready: false,
      reason: 'GateClosed',
      message: 'held',
      lastAttemptedRevision: `v@${D}`,
      blockedBy: [{ ...ALARMED, name: 'health' }],
      lastReconcileAt: iso(minutes),
    });
    const statuses = { 'canary-a': heldAt(3), 'canary-b': ready(0) };
    const resumed = rolloutState(inputs({ statuses, actions: [halt, resume], now: at(6) }));
    expect(resumed.phase).toBe('Progressing');
    expect(resumed.halt).toBeUndefined();
    expect(resumed.actionsSeen).toBe(2);
    // A reading taken after the resume that still finds the alarm firing halts again.
    expect(
      rolloutState(
        inputs({ statuses: { ...statuses, 'canary-a': heldAt(7) }, actions: [halt, resume], now: at(8) }),
      ).halt,
    ).toMatchObject({ recorded: false, delivery: 'canary-a' });
  });

  it('a recorded halt outlasts the failure until a resume; a failure before the resume does not count', () => {
    const halt: RolloutAction = {
      action: 'halt',
      generation: 1,
      at: iso(4),
      by: 'sluice',
      verified: true,
      reason: 'canary-b failed',
      wave: 1,
      delivery: 'canary-b',
      automatic: true,
    };
    const recovered = { 'canary-a': ready(0), 'canary-b': ready(6) };
    const halted = rolloutState(inputs({ statuses: recovered, actions: [halt], now: at(100) }));
    expect(halted).toMatchObject({
      phase: 'Halted',
      halt: { recorded: true, delivery: 'canary-b', by: 'sluice' },
    });
    expect(taking(halted)).toEqual(['canary-a', 'canary-b']);

    const resume: RolloutAction = {
      action: 'resume',
      generation: 1,
      at: iso(7),
      by: 'arn:aws:iam::1:user/alice',
      verified: true,
      reason: 'fixed',
    };
    const stillFailed = { 'canary-a': ready(0), 'canary-b': failed(3) };
    const resumed = rolloutState(inputs({ statuses: stillFailed, actions: [halt, resume], now: at(8) }));
    expect(resumed.phase).toBe('Progressing');
    expect(taking(resumed)).toEqual(['canary-a', 'canary-b']);
    // The same failure, recorded after the resume, halts again.
    expect(
      rolloutState(
        inputs({ statuses: { ...stillFailed, 'canary-b': failed(9) }, actions: [halt, resume], now: at(10) }),
      ).phase,
    ).toBe('Halted');
    // Actions of another generation change nothing.
    expect(
      rolloutState(inputs({ statuses: recovered, actions: [{ ...halt, generation: 0 }], now: at(100) }))
        .phase,
    ).toBe('Progressing');
  });

  it('a rollback is one wave of every member, without soaks or gates', () => {
    const rollback: RolloutGeneration = {
      ...GENERATION,
      generation: 2,
      kind: 'rollback',
      digest: OLD,
      revision: `v1.1.0@${OLD}`,
    };
    const state = rolloutState(
      inputs({
        generation: rollback,
        statuses: { 'canary-a': ready(0, OLD) },
        waveGates: new Map([[1, ALARMED]]),
      }),
    );
    expect(state.waves).toHaveLength(1);
    expect(taking(state)).toEqual(['canary-a', 'canary-b', 'eu-1', 'eu-2', 'eu-3', 'us-1', 'us-2']);
    const done = Object.fromEntries(taking(state).map((name) => [name, ready(1, OLD)]));
    expect(rolloutState(inputs({ generation: rollback, statuses: done, now: at(1) })).phase).toBe('Complete');
  });

  it('is complete when every wave is Ready at the digest and soaked', () => {
    const all = Object.fromEntries(
      ROLLOUT.waves.flatMap((w) => w.deliveries).map((name) => [name, ready(0)]),
    );
    const state = rolloutState(inputs({ statuses: all, now: at(100) }));
    expect(state.phase).toBe('Complete');
    expect(rolloutSummary(state)).toBe(`v1.2.0@${D}: complete, every wave Ready`);
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

describe('rolloutState over random histories', () => {
  it('never lets a member of a wave first take the digest before every earlier wave was Ready at it for its soak', () => {
    let completed = 0;
    for (let seed = 1; seed <= 300; seed++) {
      const next = random(seed);
      const rollout: Rollout = {
        ...ROLLOUT,
        ...(next() < 0.5 && { maxParallel: 1 + Math.floor(next() * 3) }),
      };
      const statuses = new Map<string, DeliveryStatus>();
      const tookAt = new Map<string, number>();
      let minute = 0;
      let gateOpen = next() < 0.5;
      for (let step = 0; step < 80; step++) {
        minute += Math.floor(next() * 20);
        if (next() < 0.1) gateOpen = !gateOpen;
        const state = rolloutState({
          rollout,
          generation: GENERATION,
          statuses,
          waveGates: new Map(gateOpen ? [] : [[1, { name: 'eu-approval', blocks: 'all' } as BlockingGate]]),
          actions: [],
          now: at(minute),
        });
        // The invariant, on the state as computed from the records: whoever takes the digest for
        // the first time (who took it before keeps it) finds every earlier wave soaked.
        for (const name of [...state.mayTake].filter((taker) => !tookAt.has(taker))) {
          const wave = rollout.waves.findIndex((w) => w.deliveries.includes(name));
          for (const earlier of rollout.waves.slice(0, wave)) {
            for (const member of earlier.deliveries) {
              const status = statuses.get(member);
              const soaked =
                status?.ready &&
                Date.parse(status.readySince!) + (earlier.soakMs ?? 0) <= minute * 60_000 + T0;
              if (!soaked)
                throw new Error(
                  `seed ${seed}: ${name} (wave ${wave + 1}) may take the digest before ${member} soaked`,
                );
            }
          }
        }
        if (state.phase === 'Complete') {
          completed++;
          break;
        }
        // A random member reconciles: it takes the digest if it may, and becomes Ready (rarely: goes
        // back to not ready, which the rollout must wait for again).
        const all = rollout.waves.flatMap((w) => w.deliveries);
        const member = all[Math.floor(next() * all.length)]!;
        if (state.mayTake.has(member)) {
          if (!tookAt.has(member)) tookAt.set(member, minute);
          const before = statuses.get(member);
          statuses.set(member, before?.ready ? before : ready(minute));
        }
        if (next() < 0.03) {
          const victim = all[Math.floor(next() * all.length)]!;
          if (statuses.get(victim)?.ready)
            statuses.set(victim, {
              ...ready(minute),
              reason: 'Progressing',
              ready: false,
              readySince: undefined,
            });
        }
        // Progressing members eventually get Ready again.
        for (const [name, status] of statuses)
          if (!status.ready && next() < 0.3) statuses.set(name, ready(minute));
      }
      // Took the digest in wave order.
      const waveOf = (name: string) => rollout.waves.findIndex((w) => w.deliveries.includes(name));
      const order = [...tookAt.entries()].sort((a, b) => a[1] - b[1]).map(([name]) => waveOf(name));
      expect(order, `seed ${seed}`).toEqual([...order].sort((a, b) => a - b));
    }
    // Not vacuous: most histories go through every wave.
    expect(completed).toBeGreaterThan(150);
  });
});
