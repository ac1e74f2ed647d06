import { median } from '../stats.ts';

/** What one side spent on one measurement. */
export interface Sample {
  readonly ms: number;
  readonly requests: number;
  readonly writes: number;
  /** kube-apiserver + etcd CPU seconds. */
  readonly serverCpu: number;
  /** The client's CPU seconds: this process (and DynamoDB Local) for sluice, the two controllers for Flux. */
  readonly clientCpu: number;
}

/** One case measured in pairs: sample i of each side were taken one right after the other. */
export interface PairedCase {
  readonly name: string;
  readonly sluice: readonly Sample[];
  readonly flux: readonly Sample[];
  /** Flux's workers in this case: `--concurrent`, or undefined for the controllers' defaults. */
  readonly fluxWorkers?: string;
}

/** How many times faster sluice was in each pair (Flux's time over sluice's). */
export const pairRatios = (c: PairedCase): number[] => c.sluice.map((s, i) => c.flux[i]!.ms / s.ms);

/** The ratio of the medians. */
export const medianRatio = (c: PairedCase): number =>
  median(c.flux.map((s) => s.ms)) / median(c.sluice.map((s) => s.ms));

/** A target holds only on the median and in at least 4 of 5 pairs (80 %). */
export function holds(c: PairedCase, atLeast: number): { holds: boolean; pairsHeld: number } {
  const pairsHeld = pairRatios(c).filter((ratio) => ratio > atLeast).length;
  return {
    holds: medianRatio(c) > atLeast && pairsHeld >= Math.ceil(0.8 * c.sluice.length),
    pairsHeld,
  };
}

/**
 * Runs `first` then `second` in pair `index`'s order: sluice first in even pairs, Flux first in odd
 * ones, so neither side always meets the other's leftovers (caches, compaction, a busy etcd).
 */
export async function inAlternatingOrder(
  index: number,
  sluice: () => Promise<Sample>,
  flux: () => Promise<Sample>,
): Promise<{ sluice: Sample; flux: Sample }> {
  if (index % 2 === 0) {
    const s = await sluice();
    return { sluice: s, flux: await flux() };
  }
  const f = await flux();
  return { sluice: await sluice(), flux: f };
}
