// A random history of one rollout on the real components (kube-apiserver, registry, DynamoDB
// Local): pushes (good and broken), members' runs, follow-ups lost and restored, the clock moved,
// halts, resumes and rollbacks by people, each step drawn from a seed. After every step the
// rollout's promises are checked against what the API server holds (each member's ConfigMap), not
// against what sluice says of itself:
//   wave-order: a member that takes a rollout's revision does so only after every member of the
//     earlier waves was Ready at it and had soaked (a rollback, all at once by design, aside);
//   halt-holds: while a halt recorded for a generation stands (no resume, rollback or newer
//     generation), no member takes that generation's revision;
//   rejected-stays-out: a revision rolled back is never taken again.
import { RolloutActionRefused } from '../../functions/core/reconcile/rollout-actions.ts';
import { applyLocalRolloutAction } from '../../functions/core/reconcile/rollout-actions.ts';
import { reconcile, type ReconcileResult } from '../../functions/core/reconcile/reconcile.ts';
import { getGeneration, getStatuses } from '../../functions/core/store/rollouts.ts';
import { seededRandom } from './kill-scenario.ts';
import { fleet } from './rollouts.ts';
import type { testbed } from './testbed.ts';

const MINUTE = 60_000;
const SOAK_MS = 30 * MINUTE;
const BROKEN = 'kind: [unclosed\n';

export interface RolloutSoakReport {
  readonly seed: number;
  readonly steps: readonly string[];
  /** How many times a member took a revision it did not have (each checked). */
  readonly takes: number;
  readonly violations: readonly string[];
}

type Fleet = Awaited<ReturnType<typeof fleet>>;

/** Each member's ConfigMap value in the cluster now (undefined: none yet). */
async function observe(f: Fleet, members: readonly string[]): Promise<Map<string, string | undefined>> {
  return new Map(await Promise.all(members.map(async (m) => [m, await f.value(m)] as const)));
}

/** Runs `steps` random steps of one rollout (waves of 1, 2 and 2 members, both earlier waves soaking 30m). */
export async function runRolloutSoak(
  bed: ReturnType<typeof testbed>,
  seed: number,
  steps = 30,
): Promise<RolloutSoakReport> {
  const random = seededRandom(seed);
  const chance = (p: number) => random() < p;
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
  // Scheduler's one-time retries (a failure's retryInterval, a soak's end): they fire when the clock passes them.
  const retries: { delivery: string; at: number }[] = [];
  const f = await fleet(bed, {
    waves: [1, 2, 2],
    soaks: ['30m', '30m'],
    maxParallel: chance(0.5) ? 1 : 2,
    supersede: chance(0.5) ? 'wait' : 'restart',
    deps: {
      retryTimer: {
        retryAt: async (delivery, at) => {
          retries.push({ delivery, at: at.getTime() });
          return at;
        },
      },
    },
  });
  const waveOf = new Map(f.waves.flatMap((wave, index) => wave.map((m) => [m, index] as const)));
  const members = f.waves.flat();
  // Every value pushed is new, so a value names one push (and its digest).
  const digestOf = new Map<string, string>([['v1', await digestNow(f)]]);
  const log: string[] = [];
  const violations: string[] = [];
  let before = await observe(f, members);
  let pushes = 1;
  // The generation halted, as the soak knows it (its own halts; a run failing at the revision), not as sluice says.
  let halted: number | undefined;
  const results: ReconcileResult[] = [];
  const run = async (member: string) => {
    const result = await reconcile(member, f.deps);
    results.push(result);
    return result;
  };
  const rejected = new Set<string>();
  let takes = 0;

  for (let step = 0; step < steps; step++) {
    const roll = random();
    let acted: 'resume' | 'rollback' | undefined;
    const [followedBefore, caughtUpBefore] = [f.followed.length, f.gateDeps.reconciled.length];
    if (roll < 0.12) {
      const value = `v${++pushes}`;
      const broken = chance(0.25);
      digestOf.set(value, await f.push(value, broken ? BROKEN : undefined));
      log.push(`push ${value}${broken ? ' (broken)' : ''}`);
    } else if (roll < 0.6) {
      const member = pick(members);
      const result = await run(member);
      log.push(`run ${member}: ${result.outcome} ${result.reason}`);
    } else if (roll < 0.8) {
      const minutes = 5 + Math.floor(random() * 35);
      f.clock.advance(minutes * MINUTE);
      const due = retries.filter((retry) => retry.at <= f.clock.now().getTime()).sort((a, b) => a.at - b.at);
      retries.splice(0, retries.length, ...retries.filter((retry) => !due.includes(retry)));
      const fired: string[] = [];
      for (const { delivery } of due) fired.push(`${delivery}: ${(await run(delivery)).reason}`);
      log.push(`+${minutes}m${fired.length > 0 ? `, retries fired: ${fired.join(', ')}` : ''}`);
    } else if (roll < 0.88) {
      const lose = chance(0.5);
      f.loseEvents(lose);
      log.push(lose ? 'follow-ups lost' : 'follow-ups run');
    } else {
      const action = pick(['halt', 'resume', 'rollback'] as const);
      try {
        await applyLocalRolloutAction(
          { rollout: f.name, action, reason: `soak ${step}` },
          'soak',
          f.gateDeps,
        );
        if (action === 'halt') halted = (await getGeneration(f.deps.db, f.name))?.generation;
        else acted = action;
        log.push(action);
      } catch (error) {
        if (!(error instanceof RolloutActionRefused)) throw error;
        log.push(`${action} refused`);
      }
    }

    const now = f.clock.now().getTime();
    const generation = await getGeneration(f.deps.db, f.name);
    if (acted) halted = undefined;
    const ran = [
      ...results.splice(0),
      ...f.followed.slice(followedBefore),
      ...f.gateDeps.reconciled.slice(caughtUpBefore),
    ];
    const failedAtIt = ran.some(
      (result) => result.outcome === 'Failed' && generation && result.revision?.endsWith(generation.digest),
    );
    for (const digest of generation?.rejected ?? []) rejected.add(digest);
    const after = await observe(f, members);
    const statuses = await getStatuses(f.deps.db, members);
    for (const member of members) {
      const value = after.get(member);
      if (value === undefined || value === before.get(member)) continue;
      takes++;
      const digest = digestOf.get(value);
      const where = `seed ${seed}, step ${step + 1} (${log.at(-1)}): ${member} took ${value}`;
      if (digest && rejected.has(digest) && generation?.digest !== digest)
        violations.push(`rejected-stays-out: ${where}, a revision rolled back`);
      if (generation?.kind === 'rollback' && generation.digest === digest) continue;
      if (halted === generation?.generation && generation?.digest === digest)
        violations.push(`halt-holds: ${where} while its generation was halted`);
      for (const earlier of members.filter((m) => waveOf.get(m)! < waveOf.get(member)!)) {
        const status = statuses.get(earlier);
        const readyAt = status?.ready && digest && status.lastAppliedRevision?.endsWith(digest);
        const soakedAt = status?.readySince ? Date.parse(status.readySince) + SOAK_MS : Infinity;
        if (!readyAt || soakedAt > now)
          violations.push(
            `wave-order: ${where} before ${earlier} (wave ${waveOf.get(earlier)! + 1}) was Ready at it and soaked`,
          );
      }
    }
    if (failedAtIt && !acted) halted = generation?.generation;
    before = after;
    if (violations.length > 0) break;
  }
  return { seed, steps: log, takes, violations };
}

/** The digest the rollout's source resolves to now (v1, pushed by the fleet). */
async function digestNow(f: Fleet): Promise<string> {
  // The first run of the canary starts generation 1 at v1; it takes it (wave 1 has no one before it).
  await reconcile(f.waves[0]![0]!, f.deps);
  return (await getGeneration(f.deps.db, f.name))!.digest;
}
