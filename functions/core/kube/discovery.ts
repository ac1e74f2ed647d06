import { ApiException } from './client-node.ts';
import type { KubeTransport } from './transport.ts';

/** A kind the API server serves: its resource (plural) name and whether it is namespaced. */
export interface ServedResource {
  readonly name: string;
  readonly namespaced: boolean;
  /** What may be done with it (`get`, `list`, `delete`, …). */
  readonly verbs: readonly string[];
}

/** A kind served in one group version. */
export interface ServedKind extends ServedResource {
  readonly apiVersion: string;
  readonly kind: string;
}

/** `group/version` (or `v1` for the core group) → kind → resource. */
type ServedKinds = Map<string, Map<string, ServedResource>>;

interface Snapshot {
  readonly kinds: ServedKinds;
  /** Every served group version, each group's in the server's order of preference. */
  readonly groupVersions: readonly string[];
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
        readonly verbs?: readonly string[];
      }[];
    }[];
  }[];
  /** Plain discovery of `/api` (APIVersions). */
  readonly versions?: readonly string[];
  /** Plain discovery of `/apis` (APIGroupList). */
  readonly groups?: readonly {
    readonly versions?: readonly { readonly groupVersion: string }[];
    readonly preferredVersion?: { readonly groupVersion: string };
  }[];
}

interface ResourceList {
  readonly resources?: readonly {
    readonly name: string;
    readonly kind: string;
    readonly namespaced: boolean;
    readonly verbs?: readonly string[];
  }[];
}

/** How long what discovery learned is trusted by later clients of the same cluster (a warm container's next runs). */
export const DISCOVERY_TTL_MS = 30_000;

/**
 * What discovery learned about one cluster, shared by the clients of that cluster (runs in one warm
 * container) for up to `ttlMs`; each client asks through its own transport (its own token).
 */
export class DiscoveryCache {
  snapshot: Promise<Snapshot> | undefined;
  /** When the snapshot was asked for, on `now`'s scale. */
  loadedAt = Number.NEGATIVE_INFINITY;
  generation = 0;
  readonly perVersion = new Map<string, Promise<Map<string, ServedResource> | undefined>>();

  constructor(
    readonly ttlMs = 0,
    readonly now: () => number = () => performance.now(),
  ) {}
}

/**
 * What the API server serves: two requests (`/api` and `/apis`, aggregated discovery) instead of
 * one per group version, shared by concurrent callers and, through a DiscoveryCache, by later
 * clients of the same cluster for a short while. A kind not found refreshes the answer once (a CRD
 * applied by this run may have just become Established); concurrent misses share that one refresh.
 * Questions whose answer guards a deletion (`namespacedKinds`) always use an answer asked for after
 * this client was made.
 */
export class Discovery {
  private readonly createdAt: number;

  constructor(
    private readonly transport: KubeTransport,
    private readonly cache = new DiscoveryCache(),
  ) {
    this.createdAt = cache.now();
  }

  async find(apiVersion: string, kind: string): Promise<ServedResource | undefined> {
    const seen = this.cache.generation;
    const first = await this.current();
    const hit = await this.lookUp(first, apiVersion, kind);
    if (hit) return hit;
    if (this.cache.generation === seen) this.refresh();
    return this.lookUp(await this.current(), apiVersion, kind, true);
  }

  /** The group versions of `group` that serve `kind`, preferred first; asks again once when there is none. */
  async servedVersions(group: string, kind: string): Promise<string[]> {
    const seen = this.cache.generation;
    const found = await this.versionsServing(await this.current(), group, kind);
    if (found.length > 0) return found;
    if (this.cache.generation === seen) this.refresh();
    return this.versionsServing(await this.current(), group, kind);
  }

  /**
   * Every namespaced kind that supports all of `verbs`, once per group and resource (in the
   * group's preferred version that serves it).
   */
  async namespacedKinds(verbs: readonly string[]): Promise<ServedKind[]> {
    if (this.cache.loadedAt < this.createdAt) this.refresh();
    const snapshot = await this.current();
    const found: ServedKind[] = [];
    const seen = new Set<string>();
    for (const apiVersion of snapshot.groupVersions) {
      const group = apiVersion.includes('/') ? apiVersion.slice(0, apiVersion.indexOf('/')) : '';
      for (const [kind, resource] of (await this.kindsOf(snapshot, apiVersion)) ?? []) {
        const key = `${group}/${resource.name}`;
        if (!resource.namespaced || seen.has(key) || !verbs.every((verb) => resource.verbs.includes(verb)))
          continue;
        seen.add(key);
        found.push({ ...resource, apiVersion, kind });
      }
    }
    return found;
  }

  /** Forgets what was learned: the next question asks the server again (after CRDs changed). */
  forget(): void {
    this.cache.snapshot = undefined;
    this.cache.generation++;
    this.cache.perVersion.clear();
  }

  private async versionsServing(snapshot: Snapshot, group: string, kind: string): Promise<string[]> {
    const found: string[] = [];
    for (const apiVersion of snapshot.groupVersions) {
      const inGroup = group ? apiVersion.startsWith(`${group}/`) : !apiVersion.includes('/');
      if (inGroup && (await this.kindsOf(snapshot, apiVersion))?.has(kind)) found.push(apiVersion);
    }
    return found;
  }

  /** The kinds one group version serves: from the snapshot, or asked for (servers without aggregated discovery). */
  private async kindsOf(
    snapshot: Snapshot,
    apiVersion: string,
  ): Promise<ReadonlyMap<string, ServedResource> | undefined> {
    if (snapshot.aggregated) return snapshot.kinds.get(apiVersion);
    return this.groupVersionKinds(apiVersion);
  }

  private current(): Promise<Snapshot> {
    const { cache } = this;
    // Another client's answer serves for ttlMs; one asked for by this client, for its whole life.
    const expired = cache.loadedAt < this.createdAt && cache.now() - cache.loadedAt > cache.ttlMs;
    if (!cache.snapshot || expired) this.refresh();
    return cache.snapshot!;
  }

  private refresh(): void {
    const { cache } = this;
    cache.generation++;
    cache.perVersion.clear();
    cache.loadedAt = cache.now();
    const loading = this.load();
    // A failed load is not kept: the next caller tries again.
    loading.catch(() => {
      if (cache.snapshot === loading) cache.snapshot = undefined;
    });
    cache.snapshot = loading;
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
    return (await this.groupVersionKinds(apiVersion))?.get(kind);
  }

  private groupVersionKinds(apiVersion: string): Promise<Map<string, ServedResource> | undefined> {
    const { perVersion } = this.cache;
    let kinds = perVersion.get(apiVersion);
    if (!kinds) {
      kinds = this.loadGroupVersion(apiVersion);
      kinds.catch(() => perVersion.delete(apiVersion));
      perVersion.set(apiVersion, kinds);
    }
    return kinds;
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
    if (!aggregated) {
      const groupVersions = [...(core?.versions ?? [])];
      for (const group of groups?.groups ?? []) {
        const preferred = group.preferredVersion?.groupVersion;
        if (preferred) groupVersions.push(preferred);
        for (const { groupVersion } of group.versions ?? [])
          if (groupVersion !== preferred) groupVersions.push(groupVersion);
      }
      return { kinds, groupVersions, stale, aggregated };
    }
    for (const group of [...(core.items ?? []), ...(groups.items ?? [])]) {
      const name = group.metadata?.name ?? '';
      for (const version of group.versions ?? []) {
        const apiVersion = name ? `${name}/${version.version}` : version.version;
        if (version.freshness === 'Stale') stale.add(apiVersion);
        const byKind = new Map<string, ServedResource>();
        for (const resource of version.resources ?? []) {
          const kindName = resource.responseKind?.kind;
          if (kindName && !byKind.has(kindName))
            byKind.set(kindName, {
              name: resource.resource,
              namespaced: resource.scope === 'Namespaced',
              verbs: resource.verbs ?? [],
            });
        }
        kinds.set(apiVersion, byKind);
      }
    }
    return { kinds, groupVersions: [...kinds.keys()], stale, aggregated };
  }

  /** One group version's resources (`GET /apis/<group>/<version>`), for servers without aggregated discovery. */
  private async loadGroupVersion(apiVersion: string): Promise<Map<string, ServedResource> | undefined> {
    const path = apiVersion.includes('/') ? `/apis/${apiVersion}` : `/api/${apiVersion}`;
    try {
      const list = await this.transport.request<ResourceList>({ method: 'GET', path });
      const byKind = new Map<string, ServedResource>();
      for (const resource of list?.resources ?? []) {
        if (!resource.name.includes('/') && !byKind.has(resource.kind))
          byKind.set(resource.kind, {
            name: resource.name,
            namespaced: resource.namespaced,
            verbs: resource.verbs ?? [],
          });
      }
      return byKind;
    } catch (error) {
      if (error instanceof ApiException && error.code === 404) return undefined;
      throw error;
    }
  }
}
