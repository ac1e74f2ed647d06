// Reconciles as the CLI runs them, in this process: the runs one asks for (deliveries that waited
// on it, rollout members whose turn came, keepers of objects) run here too, one after another.
import { randomUUID } from 'node:crypto';
import { reconcileDepsFromEnvironment } from '../../functions/core/environment.ts';
import type { ReconcileDeps } from '../../functions/core/reconcile/deps.ts';
import { reconcile } from '../../functions/core/reconcile/reconcile.ts';

/**
 * Dependencies for runs in this process whose follow-ups run here as well (deployed, the reconcile
 * function invokes itself for them), each logged as `<label>: <outcome>: <message>`.
 */
export function localReconcileDeps(
  log: (message: string) => void,
  label: (delivery: string) => string = (delivery) => delivery,
): ReconcileDeps {
  const deps: ReconcileDeps = {
    ...reconcileDepsFromEnvironment({ runId: `cli-${randomUUID()}`, log }),
    reconcileNow: async (deliveries) => {
      for (const delivery of deliveries) {
        const result = await reconcile(delivery, { ...deps, runId: `cli-${randomUUID()}` });
        log(`${label(delivery)}: ${result.outcome}: ${result.message}`);
      }
    },
  };
  return deps;
}
