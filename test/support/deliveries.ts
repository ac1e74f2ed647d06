import { ECRClient } from '@aws-sdk/client-ecr';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { inject } from 'vitest';
import { systemClock } from '../../functions/core/clock.ts';
import { parseDelivery, type Delivery } from '../../functions/core/config/index.ts';
import { reconcileDepsFromEnvironment } from '../../functions/core/environment.ts';
import { ecrCredentials, pushArtifact, RegistryClient } from '../../functions/core/oci/index.ts';
import type { ReconcileDeps } from '../../functions/core/reconcile/deps.ts';
import { reconcile, type ReconcileResult } from '../../functions/core/reconcile/reconcile.ts';
import { putDelivery } from '../../functions/core/store/deliveries.ts';
import type { ReconcileAnswer } from '../../functions/reconcile/handler.ts';
import type { Components } from '../../dev/components.ts';

/** Writes `files` (path → text) into a temp dir and pushes it as a Flux artifact through the ECR token path. */
export async function pushFiles(
  bed: Components,
  repository: string,
  tag: string,
  files: Record<string, string>,
): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-artifact-'));
  try {
    for (const [path, text] of Object.entries(files)) {
      mkdirSync(dirname(join(dir, path)), { recursive: true });
      writeFileSync(join(dir, path), text);
    }
    const pushed = await pushArtifact(dir, `oci://${bed.registry.host}/${repository}:${tag}`, {
      credentials: ecrCredentials(new ECRClient({}), systemClock),
    });
    return pushed.digest;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A registry client for hand-made (hostile) manifests and blobs. */
export function rawRegistry(bed: Components): RegistryClient {
  return new RegistryClient({
    host: bed.registry.host,
    credentials: ecrCredentials(new ECRClient({}), systemClock),
  });
}

/** Registers a delivery for the local cluster and registry (provider aws: the ECR token path). */
export async function registerDelivery(
  deps: ReconcileDeps,
  bed: Components,
  spec: { name: string; repository: string; tag?: string } & Record<string, unknown>,
): Promise<Delivery> {
  const { repository, tag, ...rest } = spec;
  const delivery = parseDelivery({
    source: { url: `oci://${bed.registry.host}/${repository}`, tag: tag ?? 'main', provider: 'aws' },
    cluster: { kubeconfig: bed.kube.kubeconfig },
    ...rest,
  });
  await putDelivery(deps.db, delivery, new Date());
  return delivery;
}

export function engineDeps(): ReconcileDeps {
  return {
    ...reconcileDepsFromEnvironment({ runId: `test-${Math.random().toString(36).slice(2)}` }),
    kubectl: inject('components').kubectl,
  };
}

export function run(name: string, deps: ReconcileDeps): Promise<ReconcileResult> {
  return reconcile(name, deps);
}

/** The reconcile handler's results when it reconciled the event itself; fails if it fanned out instead. */
export async function reconciledBy(answer: Promise<ReconcileAnswer>): Promise<ReconcileResult[]> {
  const answered = await answer;
  if (!Array.isArray(answered))
    throw new Error(`the handler fanned out to ${answered.invoked.join(', ')} instead of reconciling`);
  return answered;
}
