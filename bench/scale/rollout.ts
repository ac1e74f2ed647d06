// The rollout phase: a fleet of deliveries of one artifact in one rollout of three waves. v1 goes
// through the waves (the members' first revision), then v2, whose wave 2 has a member that its
// cluster refuses: the rollout must halt there, and no later member may move.
import { getGeneration, getStatuses } from '../../functions/core/store/rollouts.ts';
import { readRolloutState } from '../../functions/core/reconcile/rollout-target.ts';
import { rolloutSummary } from '../../functions/core/rollout/state.ts';
import type { ReconcileDeps } from '../../functions/core/reconcile/deps.ts';
import type { ReconcileResult } from '../../functions/core/reconcile/outcomes.ts';
import type { ReconcileTrigger } from '../../functions/core/reconcile/triggers.ts';
import type { Components } from '../../dev/components.ts';
import type { LocalCluster } from '../../dev/clusters.ts';
import {
  faultyMember,
  fleetNames,
  fleetPushEvent,
  fleetWaves,
  freezeImage,
  liveVersions,
  pushFleet,
  registerFleet,
  type FleetVersion,
} from './fleet.ts';
import {
  aheadOfTheirWave,
  behindTheirWave,
  movedAfterHalt,
  mustHold,
  tookBeforeSoak,
} from './rollout-invariants.ts';
import type { SimClock } from './sim-clock.ts';
import type { Phase } from './simulate.ts';

/** What the rollout phase uses of the simulation: its table, clock, Lambda stand-in and phase meter. */
export interface Harness {
  readonly deps: ReconcileDeps;
  readonly components: Components;
  readonly clusters: readonly LocalCluster[];
  readonly clock: SimClock;
  readonly clusterConcurrency: number;
  readonly say: (line: string) => void;
  invoke(event: ReconcileTrigger): void;
  phase(work: () => Promise<void> | void): Promise<Phase>;
  /** Told of every run's result, with the clock's time when the run started. */
  onResult(listener: (result: ReconcileResult, startedAt: number) => void): void;
}

export interface RolloutStep {
  readonly revision: FleetVersion;
  /** `wave` (the members whose turn came), `soak` (an interval run of every member during a soak), `halted` (every member runs after the halt). */
  readonly kind: 'wave' | 'soak' | 'halted';
  readonly wave: number;
  readonly phase: Phase;
  /** Members running the step's revision on their API servers after it. */
  readonly atRevision: number;
}

export interface RolloutRun {
  /** The rollout's name (`fleet` for 1,000 members, `fleet-<n>` for another size). */
  readonly rollout?: string;
  readonly members: number;
  readonly waveSizes: readonly number[];
  readonly maxParallel: number;
  readonly soakMinutes: number;
  readonly faulty: string;
  readonly steps: readonly RolloutStep[];
  /** `sluice rollout status`'s summary once halted. */
  readonly haltSummary: string;
  /** Members of wave 2 and 3 still on v1 after the halt, read from their API servers. */
  readonly keptV1: { readonly wave2: number; readonly wave3: number };
  /** The invariants checked, each held (the run throws otherwise). */
  readonly checks: readonly string[];
  /** From registering the fleet to the last step, ms (absent from runs recorded before it). */
  readonly wallMs?: number;
  /** Stopped after its first steps (SLUICE_SCALE_ROLLOUT_STOP_AFTER): no halt, no v2. */
  readonly partial?: boolean;
}

const MINUTE = 60_000;
const INTERVAL_MS = 5 * MINUTE;

export async function simulateRollout(
  h: Harness,
  options: {
    readonly members: number;
    readonly maxParallel: number;
    readonly soakMinutes: number;
    /** Stop after this many steps (a fleet too large for the time at hand): the result says it is partial. */
    readonly stopAfter?: number;
  },
): Promise<RolloutRun> {
  const fleet = fleetNames(options.members);
  const waves = fleetWaves(options.members);
  const members = waves.flat();
  const faulty = faultyMember(waves);
  const soakMs = options.soakMinutes * MINUTE;
  const steps: RolloutStep[] = [];
  const checks: string[] = [];
  const { db } = h.deps;

  h.say(
    `rollout: ${members.length} deliveries of ${fleet.repository} in waves of ${waves.map((w) => w.length).join(', ')}`,
  );
  await pushFleet(h.components, 'v1', fleet);
  const rollout = await registerFleet(db, h.components, h.clusters, members, {
    fleet,
    soak: `${options.soakMinutes}m`,
    maxParallel: options.maxParallel,
    clusterConcurrency: h.clusterConcurrency,
  });

  // The first run of each member that took the generation's revision, when it started (clock time).
  let digest = 'none yet';
  const takenAt = new Map<string, number>();
  h.onResult((result, startedAt) => {
    if (result.outcome === 'Succeeded' && result.revision?.endsWith(digest) && !takenAt.has(result.delivery))
      takenAt.set(result.delivery, startedAt);
  });
  const state = () => readRolloutState(rollout, h.deps, h.clock.now());
  const readySince = async () => {
    const statuses = await getStatuses(db, members);
    return new Map(
      [...statuses]
        .filter(([, s]) => s?.ready && s.lastAppliedRevision?.endsWith(digest) && s.readySince)
        .map(([name, s]) => [name, Date.parse(s!.readySince!)]),
    );
  };
  const record = async (version: FleetVersion, kind: RolloutStep['kind'], wave: number, phase: Phase) => {
    const live = await liveVersions(h.clusters, members);
    const atRevision = [...live.values()].filter((v) => v === version).length;
    steps.push({ revision: version, kind, wave, phase, atRevision });
    h.say(
      `${version} ${kind} ${wave}: ${phase.runs} runs in ${(phase.ms / 1000).toFixed(1)} s; ${atRevision} members run ${version}; a run: ${(phase.table.readUnits / phase.runs).toFixed(2)} read units, ${(phase.table.writeUnits / phase.runs).toFixed(2)} write units; ${JSON.stringify(phase.outcomes)}`,
    );
    return live;
  };
  /** The members of the waves through `through` run `version`, none after them; none took it before its wave's turn. */
  const checkWaves = async (
    version: FleetVersion,
    through: number,
    live: Map<string, string | undefined>,
  ) => {
    mustHold(`${version}: no member ahead of its wave`, aheadOfTheirWave(waves, live, version, through));
    const behind = behindTheirWave(waves, live, version, through);
    if (behind.length > 0) {
      // Why they did not move: the rollout's state and the first few members' statuses.
      h.say(`${version}: ${rolloutSummary(await state())}`);
      const stuck = members.filter((name) => behind.some((line) => line.startsWith(`${name} `)));
      for (const [name, status] of await getStatuses(db, stuck.slice(0, 5)))
        h.say(`${name}: ${status?.reason ?? 'never run'}: ${status?.message ?? ''}`);
    }
    mustHold(`${version}: every member of waves 1–${through} at it`, behind);
    mustHold(
      `${version}: no wave before the one before it soaked`,
      tookBeforeSoak(waves, takenAt, await readySince(), soakMs),
    );
  };
  const pushed = async (version: FleetVersion) => {
    takenAt.clear();
    const phase = await h.phase(async () => {
      await pushFleet(h.components, version, fleet);
      h.invoke(fleetPushEvent(fleet));
    });
    digest = (await getGeneration(db, rollout.name))!.digest;
    return phase;
  };
  /** One interval run of every member, a interval into the soak; the first maxParallel of the next wave schedule their retry at its end. */
  const duringSoak = async (version: FleetVersion, wave: number) => {
    h.clock.advance(INTERVAL_MS);
    const phase = await h.phase(() => members.forEach((delivery) => h.invoke({ delivery })));
    return record(version, 'soak', wave, phase);
  };
  /** Moves the clock to the soak's end: the retries scheduled for it fire, and the wave follows. */
  const soakEnds = async (version: FleetVersion, wave: number) => {
    const nextAt = (await state()).nextAt;
    if (!nextAt)
      throw new Error(`${version}: wave ${wave - 1} is not soaking: ${rolloutSummary(await state())}`);
    const phase = await h.phase(() => h.clock.advance(Date.parse(nextAt) - h.clock.now().getTime() + MINUTE));
    return record(version, 'wave', wave, phase);
  };

  // v1: the members' first revision, through the three waves.
  let phase = await pushed('v1');
  const enough = () => options.stopAfter !== undefined && steps.length >= options.stopAfter;
  const partial = (): RolloutRun => ({
    rollout: rollout.name,
    members: members.length,
    waveSizes: waves.map((w) => w.length),
    maxParallel: options.maxParallel,
    soakMinutes: options.soakMinutes,
    faulty,
    steps,
    haltSummary: '',
    keptV1: { wave2: 0, wave3: 0 },
    checks: [
      `the first ${steps.length} steps: after each, exactly the members of the waves so far ran v1 on their API servers, none before the wave before it had soaked`,
    ],
    partial: true,
  });
  await checkWaves('v1', 1, await record('v1', 'wave', 1, phase));
  if (enough()) return partial();
  await checkWaves('v1', 1, await duringSoak('v1', 1));
  if (enough()) return partial();
  await checkWaves('v1', 2, await soakEnds('v1', 2));
  if (enough()) return partial();
  await checkWaves('v1', 2, await duringSoak('v1', 2));
  if (enough()) return partial();
  await checkWaves('v1', 3, await soakEnds('v1', 3));
  if (enough()) return partial();
  const complete = await state();
  if (complete.phase !== 'Complete') throw new Error(`v1 did not complete: ${rolloutSummary(complete)}`);
  checks.push('v1: after each wave, exactly the members of the waves so far ran v1 on their API servers');
  checks.push('v1: no member of a wave took v1 before the wave before it had soaked');

  // v2, with one member of wave 2 whose cluster refuses it.
  const policy = await freezeImage(h.clusters, members, faulty);
  h.say(`${faulty}'s cluster (${policy.cluster}) refuses v2: ValidatingAdmissionPolicy ${policy.policy}`);
  phase = await pushed('v2');
  await checkWaves('v2', 1, await record('v2', 'wave', 1, phase));
  await checkWaves('v2', 1, await duringSoak('v2', 1));
  const atHalt = await soakEnds('v2', 2);
  const halted = await state();
  if (halted.phase !== 'Halted' || halted.halt?.delivery !== faulty || halted.halt.wave !== 2)
    throw new Error(`v2 should have halted in wave 2 at ${faulty}: ${rolloutSummary(halted)}`);
  mustHold('v2: wave 3 keeps v1', aheadOfTheirWave(waves, atHalt, 'v2', 2));
  mustHold(
    'v2: the refused member keeps v1',
    atHalt.get(faulty) === 'v1' ? [] : [`${faulty} runs ${atHalt.get(faulty)}`],
  );
  mustHold(
    'v2: no wave before the one before it soaked',
    tookBeforeSoak(waves, takenAt, await readySince(), soakMs),
  );
  // Every member runs again after the halt (its interval): nobody else takes v2.
  h.clock.advance(INTERVAL_MS);
  const after = await h.phase(() => members.forEach((delivery) => h.invoke({ delivery })));
  const later = await record('v2', 'halted', 2, after);
  mustHold('v2: no member moved after the halt', movedAfterHalt(atHalt, later, 'v2'));
  checks.push(
    `v2: halted in wave 2 naming ${faulty}; wave 3 and the rest of wave 2 kept v1 on their API servers`,
  );
  checks.push('v2: an interval run of every member after the halt moved nobody to v2');
  const keep = (wave: string[]) => wave.filter((name) => later.get(name) === 'v1').length;
  return {
    rollout: rollout.name,
    members: members.length,
    waveSizes: waves.map((w) => w.length),
    maxParallel: options.maxParallel,
    soakMinutes: options.soakMinutes,
    faulty,
    steps,
    haltSummary: rolloutSummary(halted),
    keptV1: { wave2: keep(waves[1]!), wave3: keep(waves[2]!) },
    checks,
  };
}
