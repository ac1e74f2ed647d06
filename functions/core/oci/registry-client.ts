import { basicAuthorization, causeOf, fetchBearerToken, parseChallenge } from './challenge.ts';
import type { BasicCredentials, RegistryCredentials } from './credentials.ts';
import { sha256Digest } from './digest.ts';
import { artifactError } from './errors.ts';
import { describeReference, isLoopbackHost } from './reference.ts';
import { nextLink, readCapped, registryError, type RequestKind } from './responses.ts';
import {
  DOCKER_LIST_MEDIA_TYPE,
  DOCKER_MANIFEST_MEDIA_TYPE,
  OCI_INDEX_MEDIA_TYPE,
  OCI_MANIFEST_MEDIA_TYPE,
} from './source.ts';

export interface RegistryClientOptions {
  /** `host[:port]` as in the oci:// URL. */
  readonly host: string;
  readonly credentials: RegistryCredentials;
  /** Plain http to a registry that is not on loopback (loopback always uses http). */
  readonly insecure?: boolean;
  /** For tests and proxies; the global `fetch` by default. */
  readonly fetch?: typeof fetch;
  /**
   * Hosts known (from an earlier client's challenge) to take Basic auth: a client sends its
   * credentials from the first request, sparing a 401 round trip; it adds the host once it learns it.
   */
  readonly basicAuthHosts?: Set<string>;
}

export interface ManifestResponse {
  readonly body: Buffer;
  /** The sha256 of `body`. */
  readonly digest: string;
  readonly mediaType: string;
}

const MANIFEST_ACCEPT = [
  OCI_MANIFEST_MEDIA_TYPE,
  DOCKER_MANIFEST_MEDIA_TYPE,
  OCI_INDEX_MEDIA_TYPE,
  DOCKER_LIST_MEDIA_TYPE,
].join(', ');
/** ECR's and distribution's manifest size limit. */
const MAX_MANIFEST_BYTES = 4 * 1024 * 1024;
const MAX_TAG_PAGES = 1000;
const MAX_TAGS_PAGE_BYTES = 16 * 1024 * 1024;
const DOCKER_HUB = new Set(['docker.io', 'index.docker.io']);

/**
 * A small client for the OCI distribution API over `fetch`. It answers Basic challenges with the
 * host's credentials and Bearer challenges with a token from the realm (ghcr.io, Docker Hub).
 */
export class RegistryClient {
  readonly host: string;
  readonly #base: string;
  readonly #fetch: typeof fetch;
  readonly #credentials: RegistryCredentials;
  #resolvedCredentials: Promise<BasicCredentials | undefined> | undefined;
  #scheme: 'basic' | 'bearer' | undefined;
  readonly #tokens = new Map<string, string>();
  readonly #basicAuthHosts: Set<string> | undefined;

  constructor(options: RegistryClientOptions) {
    this.host = options.host;
    const apiHost = DOCKER_HUB.has(options.host) ? 'registry-1.docker.io' : options.host;
    const http = options.insecure === true || isLoopbackHost(options.host);
    this.#base = `${http ? 'http' : 'https'}://${apiHost}`;
    this.#fetch = options.fetch ?? fetch;
    this.#credentials = options.credentials;
    this.#basicAuthHosts = options.basicAuthHosts;
    if (options.basicAuthHosts?.has(this.host)) this.#scheme = 'basic';
  }

  async getManifest(repository: string, reference: string): Promise<ManifestResponse> {
    const label = describeReference(this.host, repository, reference);
    const response = await this.#send(
      'GET',
      repository,
      this.#path(repository, 'manifests', reference),
      label,
      {
        headers: { accept: MANIFEST_ACCEPT },
      },
    );
    if (!response.ok) return this.#fail(response, label, 'manifest', reference);
    const body = await readCapped(response, { maxBytes: MAX_MANIFEST_BYTES, label, what: 'manifest' });
    const contentType = response.headers.get('content-type')?.split(';')[0]?.trim();
    let declared: string | undefined;
    try {
      declared = (JSON.parse(body.toString('utf8')) as { mediaType?: string }).mediaType;
    } catch {
      // the caller checks the digest first, then the content
    }
    return {
      body,
      digest: sha256Digest(body),
      mediaType: declared ?? contentType ?? OCI_MANIFEST_MEDIA_TYPE,
    };
  }

  /** The manifest's digest without downloading it; falls back to GET when HEAD says too little. */
  async manifestDigest(repository: string, reference: string): Promise<string> {
    const label = describeReference(this.host, repository, reference);
    const response = await this.#send(
      'HEAD',
      repository,
      this.#path(repository, 'manifests', reference),
      label,
      {
        headers: { accept: MANIFEST_ACCEPT },
      },
    );
    const digest = response.headers.get('docker-content-digest');
    if (response.ok && digest && /^sha256:[a-f0-9]{64}$/.test(digest)) return digest;
    // HEAD has no body to explain an error, and some registries omit the digest header.
    return (await this.getManifest(repository, reference)).digest;
  }

  /** A blob, refusing more than `maxBytes` (reading stops there). */
  async getBlob(
    repository: string,
    digest: string,
    maxBytes: number,
    limitName = 'the limit',
  ): Promise<Buffer> {
    const label = describeReference(this.host, repository, digest);
    const response = await this.#send('GET', repository, this.#path(repository, 'blobs', digest), label);
    if (!response.ok) return this.#fail(response, label, 'blob');
    return readCapped(response, { maxBytes, label, what: 'blob', limitName });
  }

  /**
   * The first page of the OCI 1.1 referrers of `digest` (an image index), asked filtered to
   * `artifactType`; undefined when the registry does not serve the referrers API (404), where a
   * client reads the referrers tag schema (`sha256-<hex>`) instead.
   */
  async getReferrers(repository: string, digest: string, artifactType: string): Promise<Buffer | undefined> {
    const label = describeReference(this.host, repository, digest);
    const path = `${this.#path(repository, 'referrers', digest)}?artifactType=${encodeURIComponent(artifactType)}`;
    const response = await this.#send('GET', repository, path, label, {
      headers: { accept: OCI_INDEX_MEDIA_TYPE },
    });
    if (response.status === 404) {
      await response.body?.cancel();
      return undefined;
    }
    if (!response.ok) return this.#fail(response, label, 'manifest');
    return readCapped(response, { maxBytes: MAX_MANIFEST_BYTES, label, what: 'referrers index' });
  }

  /** Every tag of the repository, following `Link` pagination. */
  async listTags(repository: string): Promise<string[]> {
    const label = describeReference(this.host, repository);
    const tags: string[] = [];
    let next: string | undefined = `${this.#path(repository, 'tags', 'list')}?n=1000`;
    for (let page = 0; next && page < MAX_TAG_PAGES; page++) {
      const response = await this.#send('GET', repository, next, label);
      if (!response.ok) return this.#fail(response, label, 'tags');
      const text = (
        await readCapped(response, { maxBytes: MAX_TAGS_PAGE_BYTES, label, what: 'tags list page' })
      ).toString('utf8');
      let body: { tags?: string[] | null };
      try {
        body = JSON.parse(text) as typeof body;
      } catch {
        throw artifactError(`${label}: the tags list is not JSON`);
      }
      tags.push(...(body.tags ?? []));
      next = nextLink(response.headers.get('link'));
    }
    return tags;
  }

  async hasBlob(repository: string, digest: string): Promise<boolean> {
    const label = describeReference(this.host, repository, digest);
    const response = await this.#send('HEAD', repository, this.#path(repository, 'blobs', digest), label, {
      push: true,
    });
    if (response.status === 404) return false;
    if (!response.ok) return this.#fail(response, label, 'blob');
    return true;
  }

  /** Uploads a blob (monolithic POST then PUT), unless the registry has it already. */
  async pushBlob(repository: string, data: Buffer): Promise<string> {
    const digest = sha256Digest(data);
    if (await this.hasBlob(repository, digest)) return digest;
    const label = describeReference(this.host, repository, digest);
    const started = await this.#send(
      'POST',
      repository,
      `${this.#path(repository, 'blobs', 'uploads')}/`,
      label,
      {
        push: true,
      },
    );
    const location = started.headers.get('location');
    if (started.status !== 202 || !location) return this.#fail(started, label, 'upload');
    await started.body?.cancel();
    const url = new URL(location, this.#base);
    url.searchParams.set('digest', digest);
    const done = await this.#send('PUT', repository, url.toString(), label, {
      push: true,
      body: data,
      headers: { 'content-type': 'application/octet-stream' },
    });
    if (done.status !== 201) return this.#fail(done, label, 'upload');
    await done.body?.cancel();
    return digest;
  }

  /** Stores a manifest under a tag or digest; returns its digest. */
  async putManifest(repository: string, reference: string, body: Buffer, mediaType: string): Promise<string> {
    const label = describeReference(this.host, repository, reference);
    const response = await this.#send(
      'PUT',
      repository,
      this.#path(repository, 'manifests', reference),
      label,
      {
        push: true,
        body,
        headers: { 'content-type': mediaType },
      },
    );
    if (response.status !== 201) return this.#fail(response, label, 'manifest', reference);
    await response.body?.cancel();
    return sha256Digest(body);
  }

  #path(repository: string, kind: string, reference: string): string {
    const name =
      DOCKER_HUB.has(this.host) && !repository.includes('/') ? `library/${repository}` : repository;
    return `/v2/${name}/${kind}/${reference}`;
  }

  #credentialsOnce(): Promise<BasicCredentials | undefined> {
    this.#resolvedCredentials ??= this.#credentials(this.host);
    return this.#resolvedCredentials;
  }

  async #authorization(repository: string): Promise<string | undefined> {
    if (this.#scheme === 'bearer') {
      const token = this.#tokens.get(repository);
      return token ? `Bearer ${token}` : undefined;
    }
    if (this.#scheme === 'basic') {
      const credentials = await this.#credentialsOnce();
      return credentials ? basicAuthorization(credentials) : undefined;
    }
    return undefined;
  }

  /** One request; on a 401 it answers the challenge once and retries. */
  async #send(
    method: string,
    repository: string,
    pathOrUrl: string,
    label: string,
    init: { headers?: Record<string, string>; body?: Buffer; push?: boolean } = {},
  ): Promise<Response> {
    const url = /^https?:\/\//.test(pathOrUrl) ? pathOrUrl : `${this.#base}${pathOrUrl}`;
    for (let attempt = 0; ; attempt++) {
      const sent = await this.#authorization(repository);
      const headers: Record<string, string> = { ...init.headers, ...(sent ? { authorization: sent } : {}) };
      let response: Response;
      try {
        response = await this.#fetch(url, { method, headers, body: init.body, redirect: 'follow' });
      } catch (error) {
        throw artifactError(
          `${label}: cannot reach registry ${this.host} (${url}): ${causeOf(error)}`,
          error,
        );
      }
      if (response.status !== 401 || attempt > 0) return response;
      const challenge = parseChallenge(response.headers.get('www-authenticate'));
      const credentials = await this.#credentialsOnce();
      if (challenge?.scheme === 'basic' && credentials && !sent?.startsWith('Basic ')) {
        this.#scheme = 'basic';
        this.#basicAuthHosts?.add(this.host);
      } else if (challenge?.scheme === 'bearer') {
        const scope = `repository:${repository}:${init.push ? 'pull,push' : 'pull'}`;
        const token = await fetchBearerToken(this.#fetch, { challenge, scope, credentials, label });
        this.#tokens.set(repository, token);
        this.#scheme = 'bearer';
      } else {
        return response;
      }
      await response.body?.cancel();
    }
  }

  async #fail(response: Response, label: string, what: RequestKind, reference?: string): Promise<never> {
    const hasCredentials = response.status === 401 && (await this.#credentialsOnce()) !== undefined;
    throw await registryError(response, { label, what, reference, host: this.host, hasCredentials });
  }
}
