import { mkdtempSync } from 'node:fs';
import { join } from 'node:path';
import type { ReconcileDeps } from '../functions/core/reconcile/deps.ts';
import { reconcile, type ReconcileResult } from '../functions/core/reconcile/reconcile.ts';
import type { Components } from '../dev/components.ts';
import { engineDeps, pushFiles, registerDelivery, writeFiles } from './delivery.ts';
import { kubectl } from './kubectl.ts';
import { crdGroup } from './mix.ts';

/** What every benchmark reaches: the components, the engine's dependencies, kubectl's warm cache. */
export interface BenchContext {
  readonly components: Components;
  readonly deps: ReconcileDeps;
  /** kubectl's discovery cache (KUBECACHEDIR), warmed once so kubectl is timed at its best. */
  readonly kubectlCache: string;
  /** A fresh temp dir for a benchmark's files. */
  tempDir(prefix: string): string;
}

export async function benchContext(components: Components, root: string): Promise<BenchContext> {
  const kubectlCache = mkdtempSync(join(root, 'kubectl-cache-'));
  await kubectl(components, ['api-resources'], kubectlCache);
  return {
    components,
    deps: engineDeps(components),
    kubectlCache,
    tempDir: (prefix) => mkdtempSync(join(root, `${prefix}-`)),
  };
}

/** One reconcile through the engine; anything but success stops the bench with the engine's message. */
export async function reconcileOrFail(ctx: BenchContext, name: string): Promise<ReconcileResult> {
  const result = await reconcile(name, ctx.deps);
  if (result.outcome !== 'Succeeded')
    throw new Error(`reconcile of ${name}: ${result.outcome} ${result.reason}: ${result.message}`);
  return result;
}

/** Pushes `files` as `<repository>:main` and registers a pruning delivery of it named `name`. */
export async function deliver(
  ctx: BenchContext,
  name: string,
  repository: string,
  files: Record<string, string>,
): Promise<void> {
  await pushFiles(ctx.components, repository, 'main', files);
  await registerDelivery(ctx.deps, ctx.components, name, repository);
}

/**
 * How a person applies the mix with kubectl: the cluster file (CRD and namespaces), `kubectl wait`
 * until the CRD is Established, then every namespace's file (kubectl cannot map a kind whose CRD is
 * not served yet, so one command over everything fails).
 */
export async function kubectlApplyMix(ctx: BenchContext, files: Record<string, string>, prefix: string) {
  const dir = ctx.tempDir('kubectl-files');
  writeFiles(dir, files);
  const run = (args: string[]) => kubectl(ctx.components, args, ctx.kubectlCache);
  await run(['apply', '--server-side', '-f', join(dir, 'cluster.yaml')]);
  await run(['wait', '--for=condition=Established', '--timeout=60s', `crd/widgets.${crdGroup(prefix)}`]);
  await run(['apply', '--server-side', '-R', '-f', join(dir, 'apps')]);
}
