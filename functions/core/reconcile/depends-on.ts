import type { Delivery } from '../config/index.ts';
import { getDelivery } from '../store/deliveries.ts';
import { deliveriesDependingOn } from '../store/delivery-lookups.ts';
import { getStatus, type DeliveryStatus } from '../store/status.ts';
import type { TableClient } from '../store/table-client.ts';

/** A dependency that is not ready yet, and why. */
export interface UnreadyDependency {
  readonly name: string;
  readonly why: string;
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

/** The deliveries `delivery` depends on that are not ready, in `dependsOn` order. */
export async function unreadyDependencies(delivery: Delivery, db: TableClient): Promise<UnreadyDependency[]> {
  const unready: UnreadyDependency[] = [];
  for (const name of delivery.dependsOn) {
    const why = (await getDelivery(db, name)) ? notReadyBecause(await getStatus(db, name)) : 'not registered';
    if (why) unready.push({ name, why });
  }
  return unready;
}

/** `waiting for dependency 'infra' (Failed: …)`, one clause per dependency. */
export function dependencyMessage(unready: readonly UnreadyDependency[]): string {
  return unready.map(({ name, why }) => `waiting for dependency '${name}' (${why})`).join('; ');
}

/** The deliveries depending on `name` whose last run was held waiting for a dependency. */
export async function waitingDependents(name: string, db: TableClient): Promise<string[]> {
  const waiting: string[] = [];
  for (const dependent of await deliveriesDependingOn(db, name)) {
    if ((await getStatus(db, dependent))?.reason === 'DependencyNotReady') waiting.push(dependent);
  }
  return waiting;
}
