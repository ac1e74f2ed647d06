// Reading a generation's wave tallies for a member's run, and repairing them: a tally that cannot
// be the sum of its wave (tallyConsistent) is derived again from the members' statuses at once; a
// wave's tally is also derived again once every REPAIR_EVERY_MS of the generation, by the first run
// that claims it, so anything that changed a status without its run-end (a status deleted, a member
// removed from the wave) is counted right again.
import type { RolloutGeneration, RolloutMark } from '../model/rollout.ts';
import type { DeliveryStatus } from '../model/status.ts';
import { putDerivedTally, readTallies, type GenerationKey } from '../store/rollout-tallies.ts';
import { membersBetween, type StoredOutline } from '../store/rollout-members.ts';
import { claimRolloutEvent, getStatuses } from '../store/rollouts.ts';
import type { TableClient } from '../store/table-client.ts';
import { outlineWavesOf } from './tally-state.ts';
import { contributionOf, EMPTY_TALLY, tallyConsistent, tallyOf, type WaveTally } from './tally.ts';

/** How often each wave's tally is derived again from the statuses while a generation is under way. */
export const REPAIR_EVERY_MS = 60 * 60_000;

export const generationKey = (
  rollout: string,
  generation: RolloutGeneration,
): GenerationKey & { digest: string } => ({
  rollout,
  generation: generation.generation,
  startedAt: generation.startedAt,
  digest: generation.digest,
});

/** The mark a member's status carries in `generation` (its wave, whether it holds a place). */
export const markFor = (
  rollout: string,
  generation: RolloutGeneration,
  wave: number,
  claimed: boolean,
): RolloutMark => ({ ...generationKey(rollout, generation), wave, ...(claimed && { claimed: true }) });

/** Whether `status` holds a maxParallel place in `generation`. */
export const holdsPlace = (
  status: DeliveryStatus | undefined,
  rollout: string,
  generation: RolloutGeneration,
) => {
  const mark = status?.rolloutMark;
  return (
    mark?.claimed === true &&
    mark.rollout === rollout &&
    mark.generation === generation.generation &&
    mark.startedAt === generation.startedAt
  );
};

export interface TallyReadDeps {
  readonly db: TableClient;
  readonly log?: (message: string) => void;
}

/**
 * The tallies of the generation's waves (0-based), repaired where needed. One Query, plus the
 * wave's members (paged from their ordered items) and their statuses when that wave's tally is
 * repaired.
 */
export async function readWaveTallies(
  stored: StoredOutline,
  generation: RolloutGeneration,
  deps: TallyReadDeps,
  now: Date,
): Promise<WaveTally[]> {
  const rollout = stored.outline;
  const g = generationKey(rollout.name, generation);
  const waves = outlineWavesOf(rollout, generation);
  // The wave's members in the generation's order (a rollback's one wave is every member).
  let offset = 0;
  const ranges = waves.map((wave) => [offset, (offset += wave.size)] as const);
  const members = (index: number) => membersBetween(deps.db, stored, ranges[index]![0], ranges[index]![1]);
  const storedTallies = await readTallies(deps.db, g);
  const epoch = Math.floor((now.getTime() - Date.parse(generation.startedAt)) / REPAIR_EVERY_MS);
  return Promise.all(
    waves.map(async (wave, index) => {
      const found = storedTallies.get(index);
      const tally = found?.tally ?? EMPTY_TALLY;
      const size = wave.size;
      if (!tallyConsistent(tally, size)) {
        deps.log?.(
          `rollout '${rollout.name}': the tally of wave ${index + 1} cannot be right (${tally.done} Ready, ${tally.started} started, ${tally.open} places of ${size}); derived again from the statuses`,
        );
        return repairWave(deps.db, g, index, await members(index), now);
      }
      const derivedEpoch = found?.derivedAt
        ? Math.floor((Date.parse(found.derivedAt) - Date.parse(generation.startedAt)) / REPAIR_EVERY_MS)
        : 0;
      // Only a wave that may have started: the others hold nothing a repair could find.
      const before = index > 0 ? storedTallies.get(index - 1)?.tally : undefined;
      const reached = found !== undefined || index === 0 || (before?.done ?? 0) >= waves[index - 1]!.size;
      const due = reached && epoch > derivedEpoch;
      if (
        due &&
        (await claimRolloutEvent(deps.db, rollout.name, `${generation.generation}#repair#${index}#${epoch}`))
      )
        return repairWave(deps.db, g, index, await members(index), now);
      return tally;
    }),
  );
}

/** The tally of a wave derived from its members' statuses, and written (derived again if a change came in meanwhile). */
export async function repairWave(
  db: TableClient,
  g: GenerationKey & { readonly digest: string },
  wave: number,
  members: readonly string[],
  now: Date,
): Promise<WaveTally> {
  for (let attempt = 0; ; attempt++) {
    const seen = (await readTallies(db, g)).get(wave);
    const statuses = await getStatuses(db, members);
    const tally = tallyOf(new Map(members.map((name) => [name, contributionOf(statuses.get(name), g)])));
    if (await putDerivedTally(db, g, wave, tally, seen?.seq, now)) return tally;
    if (attempt >= 5) return tally;
  }
}
