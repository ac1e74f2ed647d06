import type { KubernetesObject } from '@kubernetes/client-node';
import { SluiceError } from '../errors.ts';
import { describeObject } from '../manifests/objects.ts';
import type { KubeClient } from './client.ts';
import { assessHealth } from './health.ts';
import { APPLY_CONCURRENCY, forEachBounded } from './pool.ts';

const POLL_MS = 250;

interface Condition {
  readonly type: string;
  readonly status: string;
}

/** Waits until each CRD reports Established=True, so its kind is served before the next stage. */
export async function waitForCrdsEstablished(
  kube: KubeClient,
  crds: readonly KubernetesObject[],
  timeoutMs: number,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (const crd of crds) {
    for (;;) {
      const live = (await kube.get(crd)) as { status?: { conditions?: Condition[] } } | undefined;
      if (live?.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True')) break;
      if (Date.now() > deadline) {
        throw new SluiceError(
          'ApplyFailed',
          `${describeObject(crd)} was not Established within ${timeoutMs / 1000}s`,
        );
      }
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    }
  }
}

/**
 * Polls the applied objects until every one is Current (kstatus rules), failing fast when one
 * is Failed and with HealthCheckFailed naming the laggards when `timeoutMs` runs out.
 */
export async function waitForHealthy(
  kube: KubeClient,
  objects: readonly KubernetesObject[],
  timeoutMs: number,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let pending = [...objects];
  for (;;) {
    const lives = new Map<KubernetesObject, KubernetesObject | undefined>();
    await forEachBounded(pending, APPLY_CONCURRENCY, async (object) => {
      lives.set(object, await kube.get(object));
    });
    const waiting: string[] = [];
    const still: KubernetesObject[] = [];
    for (const object of pending) {
      const live = lives.get(object);
      if (!live) {
        waiting.push(`${describeObject(object)}: not found`);
        still.push(object);
        continue;
      }
      const health = assessHealth(live);
      if (health.status === 'Failed') throw new SluiceError('HealthCheckFailed', health.message);
      if (health.status === 'InProgress') {
        waiting.push(health.message);
        still.push(object);
      }
    }
    if (still.length === 0) return;
    if (Date.now() > deadline) {
      throw new SluiceError(
        'HealthCheckFailed',
        `timed out after ${timeoutMs / 1000}s waiting for: ${waiting.slice(0, 5).join('; ')}`,
      );
    }
    pending = still;
    await new Promise((resolve) => setTimeout(resolve, POLL_MS * 4));
  }
}
