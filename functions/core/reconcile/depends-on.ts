import type { Delivery, DeliveryDependency } from '../config/index.ts';
import { getDelivery } from '../store/deliveries.ts';
import { deliveriesDependingOn } from '../store/delivery-lookups.ts';
import { getStatus, type DeliveryStatus } from '../store/status.ts';
import type { TableClient } from '../store/table-client.ts';
import { soakingBecause } from './soak.ts';

/** A dependency that is not ready yet, and why. */
export interface UnreadyDependency {
  readonly name: string;
  readonly why: string;
  /** Set while the dependency is Ready but still soaking: when its soak ends. */
  readonly soakEndsAt?: string;
}

/** Why a dependency's status does not count as ready (Flux: Ready, at the revision it last attempted). */
function notReadyBecause(status: DeliveryStatus | undefined): string | undefined {
  if (!status) return 'not reconciled yet';
  if (!status.ready) return `${status.reason}: ${status.message}`;
  if (status.lastAttemptedRevision !== status.lastAppliedRevision)
    return `revision ${status.lastAttemptedRevision ?? '?'} not applied yet`;
  return undefined;
}

/** Whether a delivery with this status counts as ready for the deliveries depending on it. */
export function isUpToDate(status: DeliveryStatus | undefined): boolean {
  return notReadyBecause(status) === undefined;
}

/**
 * The deliveries `delivery` depends on that are not ready at `now`, in `dependsOn` order: not
 * Ready at the revision they last attempted, or (with a `soak`) Ready there for less than the soak.
 */
export async function unreadyDependencies(
  delivery: Delivery,
  db: TableClient,
  now: Date,
): Promise<UnreadyDependency[]> {
  const unready: UnreadyDependency[] = [];
  for (const dependency of delivery.dependsOn) {
    const waiting = await waitingOn(dependency, db, now);
    if (waiting) unready.push(waiting);
  }
  return unready;
}

async function waitingOn(
  dependency: DeliveryDependency,
  db: TableClient,
  now: Date,
): Promise<UnreadyDependency | undefined> {
  const { name } = dependency;
  if (!(await getDelivery(db, name))) return { name, why: 'not registered' };
  const status = await getStatus(db, name);
  const why = notReadyBecause(status);
  if (why) return { name, why };
  const soaking = soakingBecause(dependency, status!, now);
  return soaking && { name, ...soaking };
}

/** `waiting for dependency 'infra' (Failed: …)`, one clause per dependency. */
export function dependencyMessage(unready: readonly UnreadyDependency[]): string {
  return unready.map(({ name, why }) => `waiting for dependency '${name}' (${why})`).join('; ');
}

/** When the last of the soaking dependencies ends its soak, if all that hold the run are soaking. */
export function soakEnd(unready: readonly UnreadyDependency[]): Date | undefined {
  if (unready.length === 0 || unready.some((dependency) => dependency.soakEndsAt === undefined))
    return undefined;
  return new Date(Math.max(...unready.map((dependency) => Date.parse(dependency.soakEndsAt!))));
}

/** The deliveries depending on `name` whose last run was held waiting for a dependency. */
export async function waitingDependents(name: string, db: TableClient): Promise<string[]> {
  const waiting: string[] = [];
  for (const dependent of await deliveriesDependingOn(db, name)) {
    if ((await getStatus(db, dependent))?.reason === 'DependencyNotReady') waiting.push(dependent);
  }
  return waiting;
}
