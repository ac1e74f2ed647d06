import type { Delivery } from '../config/index.ts';
import { getSpec, listSpecNames, putSpec, removeSpec, type SpecKind } from './specs.ts';
import { DELIVERY_INDEX, deliveryKey, type TableClient } from './table-client.ts';

const DELIVERIES: SpecKind = { key: deliveryKey, index: DELIVERY_INDEX };

/** Writes a delivery's spec (as registered by the CDK app or `sluice register`). */
export const putDelivery = (db: TableClient, delivery: Delivery, registeredAt: Date): Promise<void> =>
  putSpec(db, DELIVERIES, delivery, registeredAt);

/** A delivery's spec; one stored before `dependsOn` existed depends on nothing. */
export async function getDelivery(db: TableClient, name: string): Promise<Delivery | undefined> {
  const spec = await getSpec<Omit<Delivery, 'dependsOn'> & Partial<Pick<Delivery, 'dependsOn'>>>(
    db,
    DELIVERIES,
    name,
  );
  return spec && { ...spec, dependsOn: spec.dependsOn ?? [] };
}

export const listDeliveryNames = (db: TableClient): Promise<string[]> => listSpecNames(db, DELIVERIES);

/** Removes a delivery's spec and every item under it (status, inventory, events). */
export const removeDelivery = (db: TableClient, name: string): Promise<void> =>
  removeSpec(db, DELIVERIES, name);

/** Every registered delivery's spec. */
export async function listDeliveries(db: TableClient): Promise<Delivery[]> {
  const specs = await Promise.all((await listDeliveryNames(db)).map((name) => getDelivery(db, name)));
  return specs.filter((spec): spec is Delivery => spec !== undefined);
}

/** The deliveries that reference a gate (in `gates`, or as the approval gate of their pruneLimit). */
export async function deliveriesUsingGate(db: TableClient, gate: string): Promise<string[]> {
  return (await listDeliveries(db))
    .filter((delivery) => delivery.gates.some((ref) => ref.name === gate) || delivery.pruneLimitGate === gate)
    .map((delivery) => delivery.name);
}
