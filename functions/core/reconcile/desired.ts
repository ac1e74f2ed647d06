// Every run stores what its latest resolved revision desires (store/desired-set.ts): a run that
// applies, from the objects it settled; a held one builds the revision anyway, as `sluice diff`
// does. Removing another delivery on the same cluster falls back on it (shared-objects.ts).
import type { KubeClient } from '../kube/client.ts';
import { pullResolved, type Resolved } from '../oci/index.ts';
import { desiredSetPut } from '../store/desired-set.ts';
import { LeaseLostError } from '../store/lease.ts';
import type { Run } from './outcomes.ts';
import { buildRevision, pullRevision, settleRevision } from './plan.ts';
import { clusterClient } from './cluster-client.ts';

/** What storing a desired set needs of the run: its delivery, clients, fence and pending writes. */
type RunWrites = Pick<Run, 'delivery' | 'deps' | 'lease' | 'pending'>;

/**
 * Stores `ids` as what `revision` desires, under the run's fence, with the run's next fenced write
 * (`run.pending`: the write-ahead inventory of a run that applies, else the run's end). A run about to apply `required`s it: removing another delivery trusts this set
 * not to miss what this one applies, so a run that cannot store it fails before applying anything
 * (a set too large fails here; the write-ahead carries it, so its failure stops the apply). A held
 * run only logs the failure (the set of an earlier run stays); a lost lease always throws.
 */
export async function rememberDesired(
  run: RunWrites,
  revision: string,
  ids: readonly string[],
  need: 'required' | 'best effort' = 'best effort',
): Promise<void> {
  const { delivery, deps } = run;
  try {
    const set = { revision, ids: [...ids], storedAt: deps.clock.now().toISOString() };
    run.pending.keep('desired', desiredSetPut(deps.db, delivery.name, set, run.lease.fence));
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
export async function rememberHeldRevision(run: RunWrites, resolved?: Resolved): Promise<void> {
  const { delivery, deps } = run;
  let kube: KubeClient | undefined;
  let planned: { revision: string; ids: string[] };
  try {
    kube = await clusterClient(delivery, deps);
    const artifact = resolved
      ? await pullResolved(delivery.source, resolved, {
          credentials: deps.registryCredentials(delivery.source),
          limits: deps.limits,
          cache: deps.artifactCache,
          kmsPublicKeys: deps.kmsPublicKeys,
          notation: deps.notation,
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
  await rememberDesired(run, planned.revision, planned.ids);
}
