// Process entry for one reconcile in a process of its own, so a test can freeze it (SIGSTOP) as a
// paused Lambda would be: `node --import tsx reconcile-main.ts <delivery> <kubeconfig> <leaseTtlMs>`,
// with the components' environment. Prints the run's result as JSON on stdout.
import { KubeConfig } from '@kubernetes/client-node';
import { reconcileDepsFromEnvironment } from '../../functions/core/environment.ts';
import { reconcile } from '../../functions/core/reconcile/reconcile.ts';

const [delivery, kubeconfig, ttl] = process.argv.slice(2);
if (!delivery || !kubeconfig || !ttl)
  throw new Error('usage: reconcile-main.ts <delivery> <kubeconfig> <leaseTtlMs>');
const kubeConfig = new KubeConfig();
kubeConfig.loadFromFile(kubeconfig);
const result = await reconcile(delivery, {
  ...reconcileDepsFromEnvironment({ runId: `process-${process.pid}` }),
  connect: async () => kubeConfig,
  leaseTtlMs: Number(ttl),
});
process.stdout.write(`${JSON.stringify(result)}\n`);
