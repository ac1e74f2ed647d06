import type { KubernetesObject } from '@kubernetes/client-node';
import { poll, type Clock } from '../clock.ts';
import { SluiceError } from '../errors.ts';
import { describeObject } from '../manifests/objects.ts';
import { statusCodeOf, type KubeClient } from './client.ts';
import { assessHealth } from './health.ts';
import { assessByExprs, type HealthCheckExprs } from './health-exprs.ts';
import { forEachBounded } from '../pacer.ts';
import { APPLY_CONCURRENCY } from './pool.ts';

const POLL_MS = 250;

interface Condition {
  readonly type: string;
  readonly status: string;
}

interface CrdSpec {
  readonly group?: string;
  readonly names?: { readonly kind?: string };
  readonly versions?: readonly { readonly name: string; readonly served?: boolean }[];
}

/** The `apiVersion`s under which a CRD serves its kind, e.g. `example.com/v1`. */
type KindOf = { readonly apiVersion: string; readonly kind: string };

function servedVersions(crd: KubernetesObject): KindOf[] {
  const spec = (crd as { spec?: CrdSpec }).spec;
  const kind = spec?.names?.kind;
  if (!spec?.group || !kind) return [];
  return (spec.versions ?? [])
    .filter((v) => v.served !== false)
    .map((v) => ({ apiVersion: `${spec.group}/${v.name}`, kind }));
}

/** How long a wait may take, on whose clock (as fluxcd/pkg ssa's WaitOptions). */
export interface WaitOptions {
  readonly clock: Clock;
  readonly timeoutMs: number;
}

/**
 * Waits until each CRD reports Established=True and discovery lists its kinds, so the next stage
 * can address them. Discovery lags Established by a moment on a busy API server.
 */
export async function waitForCrdsEstablished(
  kube: KubeClient,
  crds: readonly KubernetesObject[],
  { clock, timeoutMs }: WaitOptions,
): Promise<void> {
  let next = 0;
  let established = false;
  const ready = await poll({
    clock,
    every: POLL_MS,
    timeout: timeoutMs,
    until: async () => {
      for (; next < crds.length; next++) {
        const live = (await kube.get(crds[next]!)) as { status?: { conditions?: Condition[] } } | undefined;
        established =
          live?.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True') ?? false;
        if (!established || !(await allServed(kube, crds[next]!))) return false;
      }
      return true;
    },
  });
  if (!ready) {
    const what = established ? 'served by discovery' : 'Established';
    throw new SluiceError(
      'ApplyFailed',
      `${describeObject(crds[next]!)} was not ${what} within ${timeoutMs / 1000}s`,
    );
  }
}

async function allServed(kube: KubeClient, crd: KubernetesObject): Promise<boolean> {
  for (const { apiVersion, kind } of servedVersions(crd)) {
    if (!(await kube.resource(apiVersion, kind)) || !(await storageReady(kube, { apiVersion, kind })))
      return false;
  }
  return true;
}

/** Matches no object: a list with it only asks whether the kind's storage answers. */
const NO_OBJECT = 'sluice.io/storage-probe=none';

/**
 * Whether the kind's objects can be listed: for a moment after Established the API server answers
 * 429 "storage is (re)initializing", and the ownership check lists them right after this wait.
 * A list it may not make (403) cannot tell, and counts as ready.
 */
async function storageReady(kube: KubeClient, { apiVersion, kind }: KindOf): Promise<boolean> {
  try {
    await kube.list(apiVersion, kind, NO_OBJECT);
    return true;
  } catch (error) {
    const code = statusCodeOf(error);
    if (code === 429) return false;
    if (code === 403) return true;
    throw error;
  }
}

/**
 * Polls the applied objects until every one is Current (kstatus rules, or the delivery's
 * `healthCheckExprs` for the kinds they name), failing fast when one is Failed and with
 * HealthCheckFailed naming the laggards when `timeoutMs` runs out.
 */
export async function waitForHealthy(
  kube: KubeClient,
  objects: readonly KubernetesObject[],
  { clock, timeoutMs, exprs = new Map() }: WaitOptions & { readonly exprs?: HealthCheckExprs },
): Promise<void> {
  let pending = [...objects];
  let waiting: string[] = [];
  const healthy = await poll({
    clock,
    every: POLL_MS * 4,
    timeout: timeoutMs,
    until: async () => {
      const lives = new Map<KubernetesObject, KubernetesObject | undefined>();
      await forEachBounded(pending, APPLY_CONCURRENCY, async (object) => {
        lives.set(object, await kube.get(object));
      });
      waiting = [];
      const still: KubernetesObject[] = [];
      for (const object of pending) {
        const live = lives.get(object);
        if (!live) {
          waiting.push(`${describeObject(object)}: not found`);
          still.push(object);
          continue;
        }
        const health = assessByExprs(live, exprs) ?? assessHealth(live);
        if (health.status === 'Failed') throw new SluiceError('HealthCheckFailed', health.message);
        if (health.status !== 'Current') {
          waiting.push(health.message);
          still.push(object);
        }
      }
      pending = still;
      return still.length === 0;
    },
  });
  if (!healthy) {
    throw new SluiceError(
      'HealthCheckFailed',
      `timed out after ${timeoutMs / 1000}s waiting for: ${waiting.slice(0, 5).join('; ')}`,
    );
  }
}
