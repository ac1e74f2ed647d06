// Two deliveries must not fight over one object: an object labelled by another registered
// delivery is taken over only when the artifact says so.
import type { KubernetesObject } from '@kubernetes/client-node';
import { SluiceError } from '../errors.ts';
import { kindsOf, listOwnedByOthers } from '../kube/apply.ts';
import type { KubeClient } from '../kube/client.ts';
import type { DesiredObject } from '../kube/prepare.ts';
import { describeObject, groupOf, OWNER_LABEL } from '../manifests/objects.ts';

/** `sluice.io/takeover-from: <delivery>` on an object lets this delivery take it over from that one. */
export const TAKEOVER_ANNOTATION = 'sluice.io/takeover-from';

/** An object of this artifact that another registered delivery owns. */
export interface OwnershipConflict {
  readonly object: string;
  readonly origin: string;
  readonly owner: string;
}

/**
 * The desired objects that are live under another delivery's owner label, where that delivery is
 * registered and the object does not name it in `sluice.io/takeover-from`. Objects of a delivery
 * that is no longer registered (a renamed or removed one) are taken over without asking. Only
 * objects not already ours are looked up, so a steady-state run lists nothing more. Deferred
 * objects are looked up too (a kind in a version not served yet, in a version that is); a kind
 * not served at all lists nothing here, so deferred objects are checked again once the
 * definitions stage is applied (`applyStaged`'s `checkDeferred`).
 */
export async function ownershipConflicts(
  kube: KubeClient,
  desired: readonly DesiredObject[],
  ours: ReadonlyMap<string, KubernetesObject>,
  deliveryName: string,
  isRegistered: (delivery: string) => Promise<boolean>,
): Promise<OwnershipConflict[]> {
  const unknown = desired.filter((d) => !ours.has(d.entry.id));
  if (unknown.length === 0) return [];
  const kinds = await Promise.all(
    kindsOf(unknown).map(async (ref) => ({ ...ref, apiVersion: await lookupVersion(kube, ref) })),
  );
  const others = await listOwnedByOthers({ kube, owner: deliveryName, kinds });
  const conflicts: OwnershipConflict[] = [];
  const registered = new Map<string, Promise<boolean>>();
  for (const d of unknown) {
    const owner = others.get(d.entry.id)?.metadata?.labels?.[OWNER_LABEL];
    if (!owner || d.object.metadata?.annotations?.[TAKEOVER_ANNOTATION] === owner) continue;
    if (!registered.has(owner)) registered.set(owner, isRegistered(owner));
    if (await registered.get(owner))
      conflicts.push({ object: describeObject(d.object), origin: d.origin, owner });
  }
  return conflicts.sort((a, b) => a.object.localeCompare(b.object));
}

/**
 * The version to list a kind in: its own, or, when the cluster does not serve that one yet (a CRD
 * of the artifact adds it), another it serves: ids do not depend on the version, so objects
 * stored under another version are found before anything is written.
 */
async function lookupVersion(kube: KubeClient, ref: { apiVersion: string; kind: string }): Promise<string> {
  if (await kube.resource(ref.apiVersion, ref.kind)) return ref.apiVersion;
  const [served] = await kube.servedVersions(groupOf(ref.apiVersion), ref.kind);
  return served ?? ref.apiVersion;
}

/** Fails the run, naming each object and both deliveries, when there is any conflict. */
export function refuseConflicts(conflicts: readonly OwnershipConflict[], deliveryName: string): void {
  if (conflicts.length === 0) return;
  const listed = conflicts.map((c) => `${c.origin}: ${c.object} belongs to delivery '${c.owner}'`);
  throw new SluiceError(
    'OwnershipConflict',
    `delivery '${deliveryName}' declares objects another registered delivery owns; nothing was applied: ` +
      `${listed.join('; ')}. Remove them from one of the two artifacts, or annotate them ` +
      `${TAKEOVER_ANNOTATION}: <owner> in this one to take them over`,
  );
}
