// A dependency's soak (`dependsOn: [{ name, soak }]`): Ready at its current revision for that long.
import { formatDuration, type DeliveryDependency } from '../config/index.ts';
import { formatInstant } from '../gates/messages.ts';
import type { DeliveryStatus } from '../store/status.ts';

/**
 * When a Ready dependency's status says it became Ready at its revision: `readySince`, or for a
 * status written before it was kept, its last success (later than the truth, so the soak is never
 * cut short; its next run records readySince).
 */
const readySinceOf = (status: DeliveryStatus): string | undefined =>
  status.readySince ?? status.lastSuccessAt;

/**
 * Why a Ready dependency still holds the run at `now`, and when its soak ends; undefined once it
 * has been Ready at its revision for the soak (or has none).
 */
export function soakingBecause(
  dependency: DeliveryDependency,
  status: DeliveryStatus,
  now: Date,
): { why: string; soakEndsAt: string } | undefined {
  if (dependency.soakMs === undefined) return undefined;
  const since = readySinceOf(status);
  const sinceMs = since === undefined ? now.getTime() : Date.parse(since);
  const ends = sinceMs + dependency.soakMs;
  if (ends <= now.getTime()) return undefined;
  const remaining = Math.ceil((ends - now.getTime()) / 1000) * 1000;
  const soakEndsAt = new Date(ends).toISOString();
  const at = status.lastAppliedRevision ? ` at ${status.lastAppliedRevision}` : '';
  return {
    why: `soaking: Ready${at} since ${since ? formatInstant(since) : 'now'}, ${formatDuration(remaining)} of its ${formatDuration(dependency.soakMs)} soak remain, until ${formatInstant(soakEndsAt)}`,
    soakEndsAt,
  };
}
