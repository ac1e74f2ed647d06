import { ECRClient } from '@aws-sdk/client-ecr';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { systemClock } from '../functions/core/clock.ts';
import { parseDelivery } from '../functions/core/config/index.ts';
import { reconcileDepsFromEnvironment } from '../functions/core/environment.ts';
import { ecrCredentials, pushArtifact } from '../functions/core/oci/index.ts';
import type { ReconcileDeps } from '../functions/core/reconcile/deps.ts';
import { putDelivery } from '../functions/core/store/deliveries.ts';
import type { Components } from '../dev/components.ts';

/** Writes `files` (path → text) under `dir`. */
export function writeFiles(dir: string, files: Record<string, string>): void {
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
}

/** Pushes `files` as a Flux-format artifact to the local registry through the ECR token path. */
export async function pushFiles(
  components: Components,
  repository: string,
  tag: string,
  files: Record<string, string>,
): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-bench-artifact-'));
  try {
    writeFiles(dir, files);
    const pushed = await pushArtifact(dir, `oci://${components.registry.host}/${repository}:${tag}`, {
      credentials: ecrCredentials(new ECRClient({}), systemClock),
    });
    return pushed.digest;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Registers a pruning delivery of `repository:main` for the local cluster (provider aws). */
export async function registerDelivery(
  deps: ReconcileDeps,
  components: Components,
  name: string,
  repository: string,
): Promise<void> {
  const delivery = parseDelivery({
    name,
    source: { url: `oci://${components.registry.host}/${repository}`, tag: 'main', provider: 'aws' },
    cluster: { kubeconfig: components.kube.kubeconfig },
    prune: true,
  });
  await putDelivery(deps.db, delivery, new Date());
}

/**
 * The engine's dependencies as a warm reconcile function's container holds them (connections,
 * discovery and artifacts kept between runs), from the environment the bed set.
 */
export function engineDeps(components: Components): ReconcileDeps {
  return {
    ...reconcileDepsFromEnvironment({
      runId: `bench-${Math.random().toString(36).slice(2)}`,
      cacheArtifacts: true,
    }),
    kubectl: components.kubectl,
  };
}
