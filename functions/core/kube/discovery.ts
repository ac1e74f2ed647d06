import { ApiException } from './client-node.ts';
import type { KubeTransport } from './transport.ts';

/** A kind the API server serves: its resource (plural) name and whether it is namespaced. */
export interface ServedResource {
  readonly name: string;
  readonly namespaced: boolean;
}

/** `group/version` (or `v1` for the core group) → kind → resource. */
type ServedKinds = Map<string, Map<string, ServedResource>>;

interface Snapshot {
  readonly kinds: ServedKinds;
  /** Group versions whose resources the aggregated answer may leave out (freshness Stale). */
  readonly stale: ReadonlySet<string>;
  /** Whether the server answered with aggregated discovery (else: one request per group version). */
  readonly aggregated: boolean;
}

/** Aggregated discovery (GA in Kubernetes 1.30), asked for as kubectl does; plain JSON from older servers. */
const AGGREGATED_ACCEPT = [
  'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList',
  'application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList',
  'application/json',
].join(',');

interface DiscoveryList {
  readonly kind?: string;
  readonly items?: readonly {
    readonly metadata?: { readonly name?: string };
    readonly versions?: readonly {
      readonly version: string;
      readonly freshness?: string;
      readonly resources?: readonly {
        readonly resource: string;
        readonly scope?: string;
        readonly responseKind?: { readonly kind?: string };
      }[];
    }[];
  }[];
}

interface ResourceList {
  readonly resources?: readonly {
    readonly name: string;
    readonly kind: string;
    readonly namespaced: boolean;
  }[];
}

/**
 * What the API server serves, learned once per client: two requests (`/api` and `/apis`, aggregated
 * discovery) instead of one per group version, shared by concurrent callers. A kind not found
 * refreshes the answer once (a CRD applied by this run may have just become Established);
 * concurrent misses share that one refresh.
 */
export class Discovery {
  private snapshot: Promise<Snapshot> | undefined;
  private generation = 0;
  private readonly perVersion = new Map<string, Promise<Map<string, ServedResource> | undefined>>();

  constructor(private readonly transport: KubeTransport) {}

  async find(apiVersion: string, kind: string): Promise<ServedResource | undefined> {
    const seen = this.generation;
    const first = await this.current();
    const hit = await this.lookUp(first, apiVersion, kind);
    if (hit) return hit;
    if (this.generation === seen) this.refresh();
    return this.lookUp(await this.current(), apiVersion, kind, true);
  }

  private current(): Promise<Snapshot> {
    if (!this.snapshot) this.refresh();
    return this.snapshot!;
  }

  private refresh(): void {
    this.generation++;
    this.perVersion.clear();
    const loading = this.load();
    // A failed load is not kept: the next caller tries again.
    loading.catch(() => {
      if (this.snapshot === loading) this.snapshot = undefined;
    });
    this.snapshot = loading;
  }

  private async lookUp(
    snapshot: Snapshot,
    apiVersion: string,
    kind: string,
    afterRefresh = false,
  ): Promise<ServedResource | undefined> {
    const found = snapshot.kinds.get(apiVersion)?.get(kind);
    if (found) return found;
    const askGroupVersion = !snapshot.aggregated || (afterRefresh && snapshot.stale.has(apiVersion));
    if (!askGroupVersion) return undefined;
    let kinds = this.perVersion.get(apiVersion);
    if (!kinds) {
      kinds = this.loadGroupVersion(apiVersion);
      kinds.catch(() => this.perVersion.delete(apiVersion));
      this.perVersion.set(apiVersion, kinds);
    }
    return (await kinds)?.get(kind);
  }

  private async load(): Promise<Snapshot> {
    const [core, groups] = await Promise.all(
      ['/api', '/apis'].map((path) =>
        this.transport.request<DiscoveryList>({ method: 'GET', path, accept: AGGREGATED_ACCEPT }),
      ),
    );
    const aggregated = core?.kind === 'APIGroupDiscoveryList' && groups?.kind === 'APIGroupDiscoveryList';
    const kinds: ServedKinds = new Map();
    const stale = new Set<string>();
    if (!aggregated) return { kinds, stale, aggregated };
    for (const group of [...(core.items ?? []), ...(groups.items ?? [])]) {
      const name = group.metadata?.name ?? '';
      for (const version of group.versions ?? []) {
        const apiVersion = name ? `${name}/${version.version}` : version.version;
        if (version.freshness === 'Stale') stale.add(apiVersion);
        const byKind = new Map<string, ServedResource>();
        for (const resource of version.resources ?? []) {
          const kindName = resource.responseKind?.kind;
          if (kindName && !byKind.has(kindName))
            byKind.set(kindName, { name: resource.resource, namespaced: resource.scope === 'Namespaced' });
        }
        kinds.set(apiVersion, byKind);
      }
    }
    return { kinds, stale, aggregated };
  }

  /** One group version's resources (`GET /apis/<group>/<version>`), for servers without aggregated discovery. */
  private async loadGroupVersion(apiVersion: string): Promise<Map<string, ServedResource> | undefined> {
    const path = apiVersion.includes('/') ? `/apis/${apiVersion}` : `/api/${apiVersion}`;
    try {
      const list = await this.transport.request<ResourceList>({ method: 'GET', path });
      const byKind = new Map<string, ServedResource>();
      for (const resource of list?.resources ?? []) {
        if (!resource.name.includes('/') && !byKind.has(resource.kind))
          byKind.set(resource.kind, { name: resource.name, namespaced: resource.namespaced });
      }
      return byKind;
    } catch (error) {
      if (error instanceof ApiException && error.code === 404) return undefined;
      throw error;
    }
  }
}
