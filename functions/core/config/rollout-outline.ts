// A rollout as a member's run needs it: its spec with a count per wave instead of the wave's member
// list, so what a run reads does not grow with the fleet. Each member's place (its wave and its
// position in the wave's order) is an item of its own, and the member list is kept in order, to be
// paged a few at a time (store/rollout-members.ts). Plain values only.
import { createHash } from 'node:crypto';
import type { Rollout, RolloutWave } from './types.ts';

/** A wave without its members: how many it has. */
export interface WaveOutline extends Omit<RolloutWave, 'deliveries'> {
  readonly size: number;
}

/** A rollout's spec without its member lists. */
export interface RolloutOutline extends Omit<Rollout, 'waves'> {
  readonly waves: readonly WaveOutline[];
  /**
   * Names the member items of this membership (places and the ordered list): written before the
   * spec that names it, so a run that reads the spec finds the places it names.
   */
  readonly layout: string;
}

/** A member's place: its wave (0-based) and its position in the wave's order (0-based). */
export interface MemberPlace {
  readonly wave: number;
  readonly position: number;
}

/** The layout of a rollout's membership: the same members in the same waves and order, the same layout. */
export function layoutOf(rollout: Pick<Rollout, 'waves'>): string {
  const hash = createHash('sha256');
  for (const wave of rollout.waves) hash.update(`${wave.deliveries.join(',')};`);
  return hash.digest('hex').slice(0, 16);
}

export function outlineOf(rollout: Rollout): RolloutOutline {
  return {
    ...rollout,
    waves: rollout.waves.map(({ deliveries, ...wave }) => ({ ...wave, size: deliveries.length })),
    layout: layoutOf(rollout),
  };
}

/** Every member's place, by name. */
export function placesOf(rollout: Pick<Rollout, 'waves'>): Map<string, MemberPlace> {
  return new Map(
    rollout.waves.flatMap((wave, index) =>
      wave.deliveries.map((name, position): [string, MemberPlace] => [name, { wave: index, position }]),
    ),
  );
}

/** Where wave `wave` starts in the order of every member (the waves one after the other). */
export const waveOffset = (outline: Pick<RolloutOutline, 'waves'>, wave: number): number =>
  outline.waves.slice(0, wave).reduce((sum, w) => sum + w.size, 0);

/** Every member of the rollout, across its waves. */
export const memberCount = (outline: Pick<RolloutOutline, 'waves'>): number => waveOffset(outline, Infinity);
