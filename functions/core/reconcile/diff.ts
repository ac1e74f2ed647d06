import type { KubernetesObject } from '@kubernetes/client-node';
import { NotRegisteredError, SluiceError } from '../errors.ts';
import { evaluateGates, verdictFor } from '../gates/evaluate.ts';
import { waitingMessage } from '../gates/messages.ts';
import { isUnchanged, kindsOf, listOwned } from '../kube/apply.ts';
import { findCascade, type CascadeBlocker } from '../kube/cascade.ts';
import { apiErrorMessage } from '../kube/client.ts';
import { forEachBounded } from '../pacer.ts';
import { fieldChanges, withoutSecretValues, type FieldChange } from '../manifests/field-diff.ts';
import { describeEntry, staleEntries } from '../manifests/inventory.ts';
import { describeObject } from '../manifests/objects.ts';
import { getDelivery } from '../store/deliveries.ts';
import { readInventory } from '../store/inventory.ts';
import { getStatus } from '../store/status.ts';
import type { BlockingGate, DeliveryStatus } from '../model/status.ts';
import { dependencyMessage, unreadyDependencies, type UnreadyDependency } from './depends-on.ts';
import { Taint } from '../taint.ts';
import { learnOwnedSecrets } from './owned-secrets.ts';
import { withTaint, type ReconcileDeps } from './deps.ts';
import { ownershipConflicts, type OwnershipConflict } from './ownership.ts';
import { buildRevision, pullRevision, settleRevision } from './plan.ts';
import { clusterClient } from './cluster-client.ts';

/** What a reconcile would do now, found without changing anything. */
export interface DeliveryDiff {
  readonly delivery: string;
  readonly revision: string;
  /** Who signed `revision` (the source has `verify`). */
  readonly signedBy?: DeliveryStatus['lastAppliedSignedBy'];
  /** The applied revision and who signed it, as the last run recorded them. */
  readonly running?: { readonly revision: string; readonly signedBy?: DeliveryStatus['lastAppliedSignedBy'] };
  readonly create: readonly string[];
  readonly change: readonly { readonly object: string; readonly fields: readonly FieldChange[] }[];
  /** Objects a reconcile would delete (`prune: true`), or leave behind (`prune: false`). */
  readonly prune: readonly string[];
  readonly pruneEnabled: boolean;
  /**
   * CRDs and Namespaces among `prune` a reconcile would keep (not delete) because they hold
   * objects it does not delete, each with the first of them.
   */
  readonly kept: readonly CascadeBlocker[];
  readonly unchanged: number;
  /** Closed gates that would hold the run. */
  readonly blockedBy: readonly BlockingGate[];
  /** Dependencies (`dependsOn`) not ready, which would hold the run. */
  readonly waitingFor: readonly UnreadyDependency[];
  /** How the run would be held, by dependencies or gates. */
  readonly blockedMessage?: string;
  /** Objects another registered delivery owns: the run would fail on them (OwnershipConflict). */
  readonly conflicts: readonly OwnershipConflict[];
}

const CONCURRENCY = 8;

/**
 * `sluice diff`: the delivery's artifact (or `revision`) built and compared with the cluster:
 * objects to create, to change (fields from a server-side dry-run), to prune, and the
 * dependencies and gates that would hold the run. Nothing is written to the cluster or the table.
 * A Secret's changed values are named by key, never shown; no value it decrypted is in its result
 * or its error.
 */
export async function diffDelivery(
  name: string,
  deps: ReconcileDeps,
  options: { readonly revision?: string } = {},
): Promise<DeliveryDiff> {
  const taint = new Taint();
  // Whatever it says may quote the API server, which may quote any Secret the delivery owns: the
  // values of those in the cluster are learned before anything is shown.
  try {
    const diff = await diffTainted(name, withTaint(deps, taint), options);
    await taint.learned();
    return taint.scrubValue(diff);
  } catch (error) {
    await taint.learned();
    throw taint.scrubError(error);
  }
}

async function diffTainted(
  name: string,
  deps: ReconcileDeps,
  options: { readonly revision?: string },
): Promise<DeliveryDiff> {
  const delivery = await getDelivery(deps.db, name);
  if (!delivery) throw new NotRegisteredError(name, ' (sluice register -f <config>)');
  if (deps.taint) learnOwnedSecrets(deps.taint, delivery, deps);
  const gates = await evaluateGates(name, delivery.gates, deps.db, deps.clock.now(), deps);
  const waitingFor = await unreadyDependencies(delivery, deps.db, deps.clock.now());

  const artifact = await pullRevision(delivery, deps, options.revision);
  const status = await getStatus(deps.db, name);
  const verdict = verdictFor(gates, artifact.revision);
  const blockedBy = [...verdict.blockAll, ...verdict.blockRevisions];
  const held = [
    ...(waitingFor.length > 0 ? [dependencyMessage(waitingFor)] : []),
    ...(blockedBy.length > 0 ? [waitingMessage(blockedBy, artifact.revision)] : []),
  ].join('; ');
  const manifests = await buildRevision(delivery, artifact, deps);
  const kube = await clusterClient(delivery, deps);
  const desired = await settleRevision(manifests, kube, delivery);
  const inventory = await readInventory(deps.db, name);
  const live = await listOwned({ kube, owner: name, kinds: kindsOf(desired) });
  const conflicts = await ownershipConflicts(
    kube,
    desired,
    live,
    name,
    async (other) => !!(await getDelivery(deps.db, other)),
  );
  const appliedHash = new Map(inventory.map((entry) => [entry.id, entry.h]));

  const create: string[] = [];
  const change: { object: string; fields: FieldChange[] }[] = [];
  const problems: string[] = [];
  let unchanged = 0;
  await forEachBounded(desired, CONCURRENCY, async (d) => {
    const current = live.get(d.entry.id) ?? (await kube.get(d.object));
    if (!current) return void create.push(describeObject(d.object));
    if (isUnchanged(d, current, appliedHash.get(d.entry.id))) return void unchanged++;
    try {
      const result: KubernetesObject = await kube.apply(d.object, { dryRun: true });
      const fields = withoutSecretValues(d.object, fieldChanges(current, result));
      if (fields.length === 0) unchanged++;
      else change.push({ object: describeObject(d.object), fields });
    } catch (error) {
      problems.push(`${d.origin}: ${describeObject(d.object)}: ${apiErrorMessage(error, d.sensitive)}`);
    }
  });
  if (problems.length > 0) throw new SluiceError('ValidationFailed', problems.sort().join('; '));

  const entries = desired.map((d) => d.entry);
  const stale = staleEntries(inventory, entries);
  const { blockers } = delivery.prune
    ? await findCascade({ kube, owner: name, stale, desired: entries })
    : { blockers: [] };
  return {
    delivery: name,
    revision: artifact.revision,
    ...(artifact.signedBy && { signedBy: artifact.signedBy }),
    ...(status?.lastAppliedRevision && {
      running: {
        revision: status.lastAppliedRevision,
        ...(status.lastAppliedSignedBy && { signedBy: status.lastAppliedSignedBy }),
      },
    }),
    create: create.sort(),
    change: change.sort((a, b) => a.object.localeCompare(b.object)),
    prune: stale.map(describeEntry).sort(),
    pruneEnabled: delivery.prune,
    kept: blockers,
    unchanged,
    blockedBy,
    waitingFor,
    ...(held && { blockedMessage: held }),
    conflicts,
  };
}
