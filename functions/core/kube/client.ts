import {
  ApiException,
  KubernetesObjectApi,
  PatchStrategy,
  type KubeConfig,
  type KubernetesObject,
} from '@kubernetes/client-node';

/** The field manager every sluice write uses. */
export const FIELD_MANAGER = 'sluice';

export interface ResourceInfo {
  readonly namespaced: boolean;
}

/** HTTP status of a Kubernetes API error, or undefined for other errors. */
export function statusCodeOf(error: unknown): number | undefined {
  return error instanceof ApiException ? error.code : undefined;
}

/** The API server's own message (`Status.message`) instead of client-node's dump of the response. */
export function apiErrorMessage(error: unknown): string {
  if (error instanceof ApiException) {
    const body = error.body as unknown;
    const parsed = typeof body === 'string' ? safeJson(body) : body;
    const message = (parsed as { message?: string } | undefined)?.message;
    return message ?? `HTTP ${error.code}`;
  }
  return error instanceof Error ? error.message : String(error);
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return { message: text };
  }
}

/** client-node's generic object API with its (cached) discovery made callable. */
class ObjectApi extends KubernetesObjectApi {
  discover(apiVersion: string, kind: string) {
    return this.resource(apiVersion, kind);
  }
}

/** The Kubernetes API as the engine uses it: discovery, server-side apply, list, get, delete. */
export class KubeClient {
  private readonly api: ObjectApi;

  constructor(kubeConfig: KubeConfig) {
    this.api = kubeConfig.makeApiClient(ObjectApi);
  }

  /** Whether the API server serves `kind` in `apiVersion`, and if it is namespaced; undefined if not served. */
  async resource(apiVersion: string, kind: string): Promise<ResourceInfo | undefined> {
    try {
      const found = await this.api.discover(apiVersion, kind);
      return found ? { namespaced: found.namespaced } : undefined;
    } catch (error) {
      if (statusCodeOf(error) === 404 || /HTTP-Code: 404/.test(String(error))) return undefined;
      throw error;
    }
  }

  /** Server-side apply under the sluice field manager, taking ownership of conflicting fields. */
  apply<T extends KubernetesObject>(object: T, options: { dryRun?: boolean } = {}): Promise<T> {
    return this.api.patch(
      object,
      undefined,
      options.dryRun ? 'All' : undefined,
      FIELD_MANAGER,
      true,
      PatchStrategy.ServerSideApply,
    );
  }

  async get(object: KubernetesObject): Promise<KubernetesObject | undefined> {
    try {
      return await this.api.read({
        apiVersion: object.apiVersion!,
        kind: object.kind!,
        metadata: { name: object.metadata!.name!, namespace: object.metadata?.namespace },
      });
    } catch (error) {
      if (statusCodeOf(error) === 404) return undefined;
      throw error;
    }
  }

  /** Every object of a kind, in all namespaces, matching `labelSelector`; paginated. */
  async list(apiVersion: string, kind: string, labelSelector: string): Promise<KubernetesObject[]> {
    const items: KubernetesObject[] = [];
    let continueToken: string | undefined;
    do {
      const page = await this.api.list(
        apiVersion,
        kind,
        undefined,
        undefined,
        undefined,
        undefined,
        undefined,
        labelSelector,
        500,
        continueToken,
      );
      for (const item of page.items) items.push({ ...item, apiVersion, kind });
      continueToken = page.metadata?._continue || undefined;
    } while (continueToken);
    return items;
  }

  /** Deletes with background propagation; an object already gone counts as deleted. */
  async delete(object: KubernetesObject): Promise<void> {
    try {
      await this.api.delete(object, undefined, undefined, undefined, undefined, 'Background');
    } catch (error) {
      if (statusCodeOf(error) !== 404) throw error;
    }
  }
}
