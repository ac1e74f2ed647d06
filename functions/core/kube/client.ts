import type { KubeConfig, KubernetesObject } from '@kubernetes/client-node';
import { ApiException } from './client-node.ts';
import type { ClusterSession } from './cluster-sessions.ts';
import { Discovery, type ServedKind, type ServedResource } from './discovery.ts';
import { KubeTransport } from './transport.ts';

/** The field manager every sluice write uses. */
export const FIELD_MANAGER = 'sluice';

/** Objects per list page, as kubectl pages them. */
const LIST_PAGE = 500;

export interface ResourceInfo {
  readonly namespaced: boolean;
}

/** HTTP status of a Kubernetes API error, or undefined for other errors. */
export function statusCodeOf(error: unknown): number | undefined {
  return error instanceof ApiException ? error.code : undefined;
}

/** The API server's own message (`Status.message`) instead of client-node's dump of the response. */
export function apiErrorMessage(error: unknown, withoutValues = false): string {
  if (withoutValues) return valuelessMessage(error);
  if (error instanceof ApiException) {
    const body = error.body as unknown;
    const parsed = typeof body === 'string' ? safeJson(body) : body;
    const message = (parsed as { message?: string } | undefined)?.message;
    return message ?? `HTTP ${error.code}`;
  }
  return error instanceof Error ? error.message : String(error);
}

interface StatusBody {
  readonly reason?: unknown;
  readonly details?: { readonly causes?: readonly { readonly reason?: unknown; readonly field?: unknown }[] };
}

/**
 * What the API server said about an object holding decrypted values, without its message (which
 * may quote them): the HTTP code, the Status reason and each cause's reason and field.
 */
function valuelessMessage(error: unknown): string {
  const withheld = 'its message is withheld, as the object holds decrypted values';
  if (!(error instanceof ApiException)) return `the request failed (${withheld})`;
  const body = error.body as unknown;
  const status = (typeof body === 'string' ? safeJson(body) : body) as StatusBody | undefined;
  const word = (value: unknown) =>
    typeof value === 'string' && /^[\w.[\]-]{1,200}$/.test(value) ? value : '?';
  const causes = (status?.details?.causes ?? []).map(
    (cause) => `${word(cause.field)}: ${word(cause.reason)}`,
  );
  const reason = typeof status?.reason === 'string' ? ` ${word(status.reason)}` : '';
  return `the API server refused it: HTTP ${error.code}${reason}${causes.length > 0 ? ` (${causes.join(', ')})` : ''}; ${withheld}`;
}

/**
 * Whether `error` is the API server saying that the object `name` does not exist (a Status
 * NotFound naming it), not that the resource or group version is not served (404 without a name).
 */
export function isObjectNotFound(error: unknown, name: string | undefined): boolean {
  if (!(error instanceof ApiException) || error.code !== 404) return false;
  const status = error.body as { reason?: string; details?: { name?: string } } | undefined;
  return status?.reason === 'NotFound' && status.details?.name === name;
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return { message: text };
  }
}

interface ObjectList {
  readonly items?: KubernetesObject[];
  readonly metadata?: { readonly continue?: string };
}

/**
 * One delivery's objects in one cluster: the client, and the delivery named by the owner label
 * (OWNER_LABEL) its objects carry. The kube/ functions that work on a delivery's objects take it.
 */
/**
 * Kinds this run has already listed cluster-wide with the owner's label selector, by
 * `<apiVersion>/<kind>`, before any write to the cluster: what those lists found.
 */
export type OwnedLists = Map<string, readonly KubernetesObject[]>;

export interface OwnerScope {
  readonly kube: KubeClient;
  /** The delivery whose owner label the objects carry. */
  readonly owner: string;
}

/**
 * The Kubernetes API as the engine uses it: discovery, server-side apply, list, get, delete.
 * Requests go over kept-alive connections, discovery is learned once per client (see Discovery),
 * and objects travel as plain JSON both ways, exactly as written and as the server answers.
 */
export class KubeClient {
  private readonly transport: KubeTransport;
  private readonly discovery: Discovery;

  /**
   * @param beforeWrite awaited before every apply (not dry-run) and delete: a run's lease check,
   * so a run that lost its lease sends no further write.
   * @param session connections and discovery shared with earlier clients of the same cluster
   * (ClusterSessions); without one, this client learns and connects on its own.
   */
  constructor(
    kubeConfig: KubeConfig,
    private readonly beforeWrite: () => Promise<void> = async () => undefined,
    session?: ClusterSession,
  ) {
    this.transport = new KubeTransport(kubeConfig, session?.connections);
    this.discovery = new Discovery(this.transport, session?.discovery);
  }

  /** Whether the API server serves `kind` in `apiVersion`, and if it is namespaced; undefined if not served. */
  async resource(apiVersion: string, kind: string): Promise<ResourceInfo | undefined> {
    const found = await this.discovery.find(apiVersion, kind);
    return found ? { namespaced: found.namespaced } : undefined;
  }

  /** The group versions of `group` (`''` for core) that serve `kind`, preferred first. */
  async servedVersions(group: string, kind: string): Promise<string[]> {
    return this.discovery.servedVersions(group, kind);
  }

  /** Every namespaced kind that supports all of `verbs`, in one version (its group's preferred). */
  async namespacedKinds(verbs: readonly string[]): Promise<ServedKind[]> {
    return this.discovery.namespacedKinds(verbs);
  }

  /** Forgets what discovery learned, so the next request sees the kinds served now (after CRDs changed). */
  forgetDiscovery(): void {
    this.discovery.forget();
  }

  /** Server-side apply under the sluice field manager, taking ownership of conflicting fields. */
  async apply<T extends KubernetesObject>(object: T, options: { dryRun?: boolean } = {}): Promise<T> {
    if (!options.dryRun) await this.beforeWrite();
    return this.transport.request<T>({
      method: 'PATCH',
      path: await this.objectPath(object),
      query: { fieldManager: FIELD_MANAGER, force: true, dryRun: options.dryRun ? 'All' : undefined },
      contentType: 'application/apply-patch+yaml',
      body: object,
    });
  }

  /** The object, or undefined when the API server says it does not exist (see isObjectNotFound). */
  async get(object: KubernetesObject): Promise<KubernetesObject | undefined> {
    try {
      return await this.transport.request<KubernetesObject>({
        method: 'GET',
        path: await this.objectPath(object),
      });
    } catch (error) {
      if (isObjectNotFound(error, object.metadata?.name)) return undefined;
      throw error;
    }
  }

  /** Every object of a kind, in `namespace` or all namespaces, matching `labelSelector`; paginated. */
  async list(
    apiVersion: string,
    kind: string,
    labelSelector: string,
    namespace?: string,
  ): Promise<KubernetesObject[]> {
    const resource = await this.served(apiVersion, kind);
    const path = collectionPath(apiVersion, resource, resource.namespaced ? namespace : undefined);
    const items: KubernetesObject[] = [];
    let continueToken: string | undefined;
    do {
      const page = await this.transport.request<ObjectList>({
        method: 'GET',
        path,
        query: { labelSelector, limit: LIST_PAGE, continue: continueToken },
      });
      for (const item of page.items ?? []) items.push({ ...item, apiVersion, kind });
      continueToken = page.metadata?.continue || undefined;
    } while (continueToken);
    return items;
  }

  /**
   * Deletes with background propagation; an object the API server says does not exist counts as
   * deleted. With `uid`, only that object: one replaced under the same name since fails with 409 Conflict.
   */
  async delete(object: KubernetesObject, options: { uid?: string } = {}): Promise<void> {
    await this.beforeWrite();
    try {
      await this.transport.request({
        method: 'DELETE',
        path: await this.objectPath(object),
        body: {
          apiVersion: 'v1',
          kind: 'DeleteOptions',
          propagationPolicy: 'Background',
          ...(options.uid && { preconditions: { uid: options.uid } }),
        },
      });
    } catch (error) {
      if (!isObjectNotFound(error, object.metadata?.name)) throw error;
    }
  }

  /** Closes the client's kept-alive connections; it stays usable. */
  close(): void {
    this.transport.close();
  }

  private async served(apiVersion: string, kind: string): Promise<ServedResource> {
    const resource = await this.discovery.find(apiVersion, kind);
    if (!resource) throw new Error(`Unrecognized API version and kind: ${apiVersion} ${kind}`);
    return resource;
  }

  private async objectPath(object: KubernetesObject): Promise<string> {
    const apiVersion = object.apiVersion || 'v1';
    const name = object.metadata?.name;
    if (!object.kind) throw new Error('Required spec property kind is not set');
    if (!name) throw new Error('Required spec property name is not set');
    const resource = await this.served(apiVersion, object.kind);
    const namespace = resource.namespaced ? object.metadata?.namespace || 'default' : undefined;
    return `${collectionPath(apiVersion, resource, namespace)}/${encodeURIComponent(name)}`;
  }
}

/** `/api/v1[/namespaces/<ns>]/<resource>` or `/apis/<group>/<version>[/namespaces/<ns>]/<resource>`. */
function collectionPath(apiVersion: string, resource: ServedResource, namespace: string | undefined): string {
  const root = apiVersion.includes('/') ? `/apis/${apiVersion}` : `/api/${apiVersion}`;
  const scope = namespace ? `/namespaces/${encodeURIComponent(namespace)}` : '';
  return `${root}${scope}/${resource.name}`;
}
