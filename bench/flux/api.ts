import { KubeConfig, Watch } from '@kubernetes/client-node';
import { KubeTransport } from '../../functions/core/kube/transport.ts';
import type { Components } from '../../dev/components.ts';

/** The Flux kinds the bench creates, triggers and watches. */
export const FLUX_KINDS = {
  OCIRepository: { group: 'source.toolkit.fluxcd.io', version: 'v1', plural: 'ocirepositories' },
  Kustomization: { group: 'kustomize.toolkit.fluxcd.io', version: 'v1', plural: 'kustomizations' },
} as const;
export type FluxKind = keyof typeof FLUX_KINDS;

const pathOf = (kind: FluxKind, namespace: string, name?: string) => {
  const { group, version, plural } = FLUX_KINDS[kind];
  return `/apis/${group}/${version}/namespaces/${namespace}/${plural}${name ? `/${name}` : ''}`;
};

/** A Flux object as the bench reads its status. */
export interface FluxObject {
  readonly kind?: string;
  readonly metadata: { readonly name: string; readonly annotations?: Record<string, string> };
  readonly status?: {
    readonly lastAppliedRevision?: string;
    readonly lastHandledReconcileAt?: string;
    readonly artifact?: { readonly revision?: string };
    readonly conditions?: readonly { type: string; status: string; reason?: string; message?: string }[];
  };
}

/**
 * The bench's own client for Flux's objects: one kept-alive connection pool, no kubectl process, so
 * nothing but Flux's controllers costs time inside a measurement.
 */
export class FluxApi {
  private readonly transport: KubeTransport;
  private readonly kubeConfig = new KubeConfig();

  constructor(
    components: Components,
    private readonly namespace: string,
  ) {
    this.kubeConfig.loadFromFile(components.kube.kubeconfig);
    this.transport = new KubeTransport(this.kubeConfig);
  }

  /** Creates or updates `objects` (server-side apply, field manager `bench`). */
  async apply(objects: readonly (FluxObject & { kind: FluxKind })[]): Promise<void> {
    await Promise.all(
      objects.map((object) =>
        this.transport.request({
          method: 'PATCH',
          path: pathOf(object.kind, this.namespace, object.metadata.name),
          query: { fieldManager: 'bench', force: true },
          contentType: 'application/apply-patch+yaml',
          body: object,
        }),
      ),
    );
  }

  /**
   * Asks `kind`/`names` to reconcile now, as `flux reconcile` does: the
   * `reconcile.fluxcd.io/requestedAt` annotation, which the object echoes as `lastHandledReconcileAt`.
   */
  async requestReconcile(kind: FluxKind, names: readonly string[], at: string): Promise<void> {
    const body = { metadata: { annotations: { 'reconcile.fluxcd.io/requestedAt': at } } };
    await Promise.all(
      names.map((name) =>
        this.transport.request({
          method: 'PATCH',
          path: pathOf(kind, this.namespace, name),
          contentType: 'application/merge-patch+json',
          body,
        }),
      ),
    );
  }

  /**
   * A watch of every object of `kind` in the namespace: the latest state of each, and waits on them.
   * A watch the API server ends (a timeout, 429 under load) is started again, as an informer does;
   * each start lists every object again.
   */
  async watch(kind: FluxKind): Promise<FluxWatch> {
    const latest = new Map<string, FluxObject>();
    const waiters = new Set<() => void>();
    const wakeAll = () => {
      for (const wake of waiters) wake();
    };
    let failure: Error | undefined;
    let failuresInARow = 0;
    let stopped = false;
    let controller: AbortController | undefined;
    const start = async (): Promise<void> => {
      try {
        controller = await new Watch(this.kubeConfig).watch(
          pathOf(kind, this.namespace),
          {},
          (phase: string, object: FluxObject) => {
            failuresInARow = 0;
            if (phase === 'DELETED') latest.delete(object.metadata.name);
            else latest.set(object.metadata.name, object);
            wakeAll();
          },
          (error: unknown) => restart(error),
        );
      } catch (error) {
        restart(error);
      }
    };
    const restart = (error: unknown) => {
      if (stopped) return;
      if (error && ++failuresInARow > 50) {
        failure = error instanceof Error ? error : new Error(String(error));
        wakeAll();
        return;
      }
      setTimeout(() => void start(), error ? 200 : 0);
    };
    await start();
    return {
      latest: (name) => latest.get(name),
      async until(names, satisfied, timeoutMs = 600_000) {
        const deadline = Date.now() + timeoutMs;
        for (;;) {
          if (failure)
            throw new Error(`the watch of Flux ${kind}s failed 50 times in a row: ${failure.message}`);
          const waiting = names.filter((name) => {
            const object = latest.get(name);
            return !object || !satisfied(object);
          });
          if (waiting.length === 0) return;
          const left = deadline - Date.now();
          if (left <= 0)
            throw new Error(
              `Flux ${kind}s not there after ${timeoutMs / 1000}s: ${waiting.slice(0, 5).join(', ')}${waiting.length > 5 ? ` and ${waiting.length - 5} more` : ''}; ${waiting[0]}: ${JSON.stringify(latest.get(waiting[0]!)?.status?.conditions ?? 'not seen')}`,
            );
          await new Promise<void>((resolve) => {
            const timer = setTimeout(wake, left);
            function wake() {
              clearTimeout(timer);
              waiters.delete(wake);
              resolve();
            }
            waiters.add(wake);
          });
        }
      },
      stop: () => {
        stopped = true;
        controller?.abort();
      },
    };
  }

  close(): void {
    this.transport.close();
  }
}

/** The latest state of a kind's objects, as a watch delivers them. */
export interface FluxWatch {
  latest(name: string): FluxObject | undefined;
  /** Resolves once every named object satisfies `satisfied`; fails naming the laggards after the timeout. */
  until(
    names: readonly string[],
    satisfied: (object: FluxObject) => boolean,
    timeoutMs?: number,
  ): Promise<void>;
  stop(): void;
}

const isReady = (object: FluxObject) =>
  object.status?.conditions?.find((c) => c.type === 'Ready')?.status === 'True';

/** A Kustomization Ready at a revision ending in `digest`. */
export const readyAt = (digest: string) => (object: FluxObject) =>
  isReady(object) && (object.status?.lastAppliedRevision?.endsWith(digest) ?? false);

/** An object Ready that has handled the reconcile requested at `at`. */
export const handled = (at: string) => (object: FluxObject) =>
  isReady(object) && object.status?.lastHandledReconcileAt === at;
