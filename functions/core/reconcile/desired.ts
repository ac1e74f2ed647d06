// Every run stores what its latest resolved revision desires (store/desired-set.ts): a run that
// applies, from the objects it settled; a held one builds the revision anyway, as `sluice diff`
// does. Removing another delivery on the same cluster falls back on it (shared-objects.ts).
import type { Delivery } from '../config/index.ts';
import type { KubeClient } from '../kube/client.ts';
import { pullResolved, type Resolved } from '../oci/index.ts';
import { desiredSetPut, writeDesiredSet } from '../store/desired-set.ts';
import { LeaseLostError } from '../store/lease.ts';
import type { ReconcileDeps } from './deps.ts';
import { buildRevision, pullRevision, settleRevision } from './plan.ts';
import { clusterClient } from './cluster-client.ts';

/**
 * Stores `ids` as what `revision` desires, under the run's fence: with the run's next fenced write
 * (`deps.pending`: the write-ahead inventory of a run that applies, else the run's end), or at
 * once without it. A run about to apply `required`s it: removing another delivery trusts this set
 * not to miss what this one applies, so a run that cannot store it fails before applying anything
 * (a set too large fails here; the write-ahead carries it, so its failure stops the apply). A held
 * run only logs the failure (the set of an earlier run stays); a lost lease always throws.
 */
export async function rememberDesired(
  delivery: Delivery,
  deps: ReconcileDeps,
  revision: string,
  ids: readonly string[],
  need: 'required' | 'best effort' = 'best effort',
): Promise<void> {
  if (!deps.fence) return;
  try {
    const set = { revision, ids: [...ids], storedAt: deps.clock.now().toISOString() };
    if (deps.pending) deps.pending.keep('desired', desiredSetPut(deps.db, delivery.name, set, deps.fence));
    else await writeDesiredSet(deps.db, delivery.name, set, deps.fence);
  } catch (error) {
    if (error instanceof LeaseLostError || need === 'required') throw error;
    deps.log?.(`could not store what revision ${revision} of '${delivery.name}' desires: ${String(error)}`);
  }
}

/**
 * For a held run: builds the delivery's current revision (`resolved`, when the run resolved it
 * already: exactly that digest is pulled) without applying it, and stores what it desires. A revision that cannot be planned is
 * logged; the stored set of an earlier run stays.
 */
export async function rememberHeldRevision(
  delivery: Delivery,
  deps: ReconcileDeps,
  resolved?: Resolved,
): Promise<void> {
  let kube: KubeClient | undefined;
  let planned: { revision: string; ids: string[] };
  try {
    kube = await clusterClient(delivery, deps);
    const artifact = resolved
      ? await pullResolved(delivery.source, resolved, {
          credentials: deps.registryCredentials(delivery.source),
          limits: deps.limits,
          cache: deps.artifactCache,
        })
      : await pullRevision(delivery, deps);
    const desired = await settleRevision(await buildRevision(delivery, artifact, deps), kube, delivery);
    planned = { revision: artifact.revision, ids: desired.map((d) => d.entry.id) };
  } catch (error) {
    deps.log?.(`could not plan the held revision of '${delivery.name}': ${String(error)}`);
    return;
  } finally {
    kube?.close();
  }
  await rememberDesired(delivery, deps, planned.revision, planned.ids);
}
