import type { ArtifactCache } from './artifact-cache.ts';
import { systemClock, type Clock } from '../clock.ts';
import type { RegistryCredentials } from './credentials.ts';
import { isDigest, sha256Digest } from './digest.ts';
import { SluiceError } from '../errors.ts';
import { artifactError } from './errors.ts';
import { describeReference, parseReference } from './reference.ts';
import { RegistryClient } from './registry-client.ts';
import { resolveReference, revisionOf, type Resolved } from './resolve.ts';
import {
  ANNOTATION_CREATED,
  ANNOTATION_REVISION,
  ANNOTATION_SOURCE,
  DOCKER_LIST_MEDIA_TYPE,
  FLUX_CONFIG_MEDIA_TYPE,
  FLUX_CONTENT_MEDIA_TYPE,
  OCI_INDEX_MEDIA_TYPE,
  OCI_MANIFEST_MEDIA_TYPE,
  type OciSource,
  type SignedBy,
} from './source.ts';
import type { KmsPublicKeys } from './kms-public-keys.ts';
import { verifyCosignSignature } from './verify.ts';
import type { NotationDeps, TargetDescriptor } from './notation-verify.ts';
import { DEFAULT_UNPACK_LIMITS, packDirectory, unpackArtifact, type UnpackLimits } from './tarball.ts';

/** An artifact's content and where it came from. */
export interface Artifact {
  /** `<tag>@sha256:<hex>`, or `sha256:<hex>` for a digest source. */
  readonly revision: string;
  /** The manifest digest. */
  readonly digest: string;
  readonly tag?: string;
  /** The source URL, `oci://host/repository`. */
  readonly url: string;
  /** Normalised relative POSIX path → content. */
  readonly files: Map<string, Buffer>;
  /** The manifest's annotations (`org.opencontainers.image.source`, `…revision`, `…created`). */
  readonly annotations: Readonly<Record<string, string>>;
  /** Who signed it, when the source has `verify`. */
  readonly signedBy?: SignedBy;
}

export interface ArtifactDeps {
  readonly credentials: RegistryCredentials;
  readonly limits?: UnpackLimits;
  /** For tests and proxies; the global `fetch` by default. */
  readonly fetch?: typeof fetch;
  /** Manifests and layers pulled before, by digest. @default none: everything is fetched */
  readonly cache?: ArtifactCache;
  /**
   * The public keys of the KMS keys `verify.kmsKeyArn` names, kept while they live.
   * @default none: an artifact to verify against a KMS key is refused
   */
  readonly kmsPublicKeys?: KmsPublicKeys;
  /** The clock and signer:GetRevocationStatus for `verify.provider: notation`. @default the system clock, no AWS Signer client */
  readonly notation?: NotationDeps;
}

interface Descriptor {
  readonly mediaType?: string;
  readonly digest?: string;
  readonly size?: number;
}

interface ImageManifest {
  readonly schemaVersion?: number;
  readonly mediaType?: string;
  readonly config?: Descriptor;
  readonly layers?: readonly Descriptor[];
  readonly annotations?: Record<string, string>;
}

function clientFor(
  host: string,
  deps: { credentials: RegistryCredentials; fetch?: typeof fetch; cache?: ArtifactCache },
  insecure?: boolean,
) {
  return new RegistryClient({
    host,
    credentials: deps.credentials,
    insecure,
    fetch: deps.fetch,
    basicAuthHosts: deps.cache?.basicAuthHosts,
  });
}

/** Resolves the source to a digest and revision without downloading it (a cheap "has it changed?"). */
export async function resolveArtifact(
  source: OciSource,
  deps: ArtifactDeps,
): Promise<Resolved & { url: string }> {
  const reference = parseReference(source.url);
  const resolved = await resolveReference(
    clientFor(reference.host, deps, source.insecure),
    reference,
    source,
  );
  return { ...resolved, url: reference.url };
}

/**
 * Resolves the source, fetches its manifest (checking its sha256) and, with `verify`, its cosign
 * signature, picks the layer by media type,
 * fetches it (checking sha256 and size against the descriptor) and unpacks it in memory.
 */
export async function pullArtifact(source: OciSource, deps: ArtifactDeps): Promise<Artifact> {
  const reference = parseReference(source.url);
  const client = clientFor(reference.host, deps, source.insecure);
  return pullFrom(client, source, await resolveReference(client, reference, source), deps);
}

/**
 * Pulls exactly the manifest `resolved` names (from an earlier `resolveArtifact`), whatever the
 * source's tag points at by now: what was checked against the gates is what is applied.
 */
export async function pullResolved(
  source: OciSource,
  resolved: Resolved,
  deps: ArtifactDeps,
): Promise<Artifact> {
  if (!isDigest(resolved.digest))
    throw artifactError(`source ${source.url}: "${resolved.digest}" is not a digest`);
  return pullFrom(clientFor(parseReference(source.url).host, deps, source.insecure), source, resolved, deps);
}

/**
 * Checks the cosign signature of exactly the manifest `resolved` names against `source.verify`
 * (nothing to check without it), without pulling its layers: what a rollout checks before it
 * starts a generation of a digest its members then pull with their own sources.
 */
export async function verifyResolved(
  source: OciSource,
  resolved: Resolved,
  deps: ArtifactDeps,
): Promise<SignedBy | undefined> {
  if (!source.verify) return undefined;
  if (!isDigest(resolved.digest))
    throw artifactError(`source ${source.url}: "${resolved.digest}" is not a digest`);
  const { host, repository } = parseReference(source.url);
  const client = clientFor(host, deps, source.insecure);
  if (source.verify.provider === 'notation') {
    const manifest = await client.getManifest(repository, resolved.digest);
    if (manifest.digest !== resolved.digest)
      throw artifactError(
        `source ${source.url}: the registry served a manifest whose sha256 is ${manifest.digest}`,
      );
    return verifyNotationSignature(client, repository, targetOf(manifest), source.verify, deps.notation);
  }
  return verifyCosignSignature(client, repository, resolved.digest, source.verify, deps.kmsPublicKeys);
}

/**
 * Notation verification, loaded on first use (jose, the ASN.1 reader and, for AWS Signer, the
 * Signer client stay out of runs whose sources do not use Notation).
 */
async function verifyNotationSignature(
  client: RegistryClient,
  repository: string,
  target: TargetDescriptor,
  verification: Extract<OciSource['verify'], { provider: 'notation' }>,
  deps: NotationDeps | undefined,
): Promise<SignedBy> {
  const notation = await import('./notation-verify.ts');
  return notation.verifyNotationSignature(client, repository, target, verification, deps);
}

/** A manifest as the descriptor Notation signs. */
function targetOf(manifest: { digest: string; mediaType: string; body: Buffer }) {
  return { mediaType: manifest.mediaType, digest: manifest.digest, size: manifest.body.length };
}

async function pullFrom(
  client: RegistryClient,
  source: OciSource,
  resolved: Resolved,
  deps: ArtifactDeps,
): Promise<Artifact> {
  const reference = parseReference(source.url);
  const { host, repository } = reference;
  const label = describeReference(host, repository, resolved.digest);

  const manifest =
    deps.cache?.manifest(resolved.digest) ?? (await client.getManifest(repository, resolved.digest));
  if (manifest.digest !== resolved.digest) {
    throw artifactError(`${label}: the registry served a manifest whose sha256 is ${manifest.digest}`);
  }
  if (manifest.mediaType === OCI_INDEX_MEDIA_TYPE || manifest.mediaType === DOCKER_LIST_MEDIA_TYPE) {
    throw artifactError(`${label}: is an image index (${manifest.mediaType}), not an artifact manifest`);
  }
  const signedBy =
    source.verify?.provider === 'notation'
      ? await verifyNotationSignature(client, repository, targetOf(manifest), source.verify, deps.notation)
      : source.verify
        ? await verifyCosignSignature(client, repository, resolved.digest, source.verify, deps.kmsPublicKeys)
        : undefined;
  let parsed: ImageManifest;
  try {
    parsed = JSON.parse(manifest.body.toString('utf8')) as ImageManifest;
  } catch {
    throw artifactError(`${label}: the manifest is not JSON`);
  }
  const layers = Array.isArray(parsed.layers) ? parsed.layers : [];
  const wanted = source.layerMediaType ?? FLUX_CONTENT_MEDIA_TYPE;
  const layer = layers.find((candidate) => candidate.mediaType === wanted);
  if (!layer) {
    const found = layers.map((candidate) => candidate.mediaType ?? '(none)');
    throw artifactError(
      `${label}: no layer has media type ${wanted}; ` +
        (found.length ? `the manifest's layers have ${found.join(', ')}` : 'the manifest has no layers'),
    );
  }
  const { digest, size } = layer;
  if (typeof digest !== 'string' || !isDigest(digest) || typeof size !== 'number' || !(size >= 0)) {
    throw artifactError(`${label}: the ${wanted} layer's descriptor has no valid sha256 digest and size`);
  }
  const limits = deps.limits ?? DEFAULT_UNPACK_LIMITS;
  const layerLabel = `${label} layer ${digest}`;
  if (size > limits.maxCompressedBytes) {
    throw artifactError(
      `${layerLabel}: is ${size} bytes, more than the limit maxCompressedBytes (${limits.maxCompressedBytes} bytes)`,
    );
  }
  const cached = await deps.cache?.layer(digest);
  const blob = cached ?? (await client.getBlob(repository, digest, size, "the layer descriptor's size"));
  if (blob.length !== size) {
    throw artifactError(
      `${layerLabel}: the registry served ${blob.length} bytes, the descriptor says ${size}`,
    );
  }
  const actual = sha256Digest(blob);
  if (actual !== digest) throw artifactError(`${layerLabel}: the layer's sha256 is ${actual}`);

  const files = await unpackArtifact(blob, limits, layerLabel);
  if (deps.cache && !cached) {
    deps.cache.rememberManifest(manifest);
    await deps.cache.rememberLayer(digest, blob);
  }
  return {
    revision: resolved.revision,
    digest: resolved.digest,
    ...(resolved.tag !== undefined ? { tag: resolved.tag } : {}),
    url: reference.url,
    files,
    annotations: { ...(parsed.annotations ?? {}) },
    ...(signedBy && { signedBy }),
  };
}

export interface PushDeps {
  readonly credentials: RegistryCredentials;
  readonly insecure?: boolean;
  /** `org.opencontainers.image.source` and `…revision`, written when given. */
  readonly annotations?: { readonly source?: string; readonly revision?: string };
  /** For `org.opencontainers.image.created`; the system clock by default. */
  readonly clock?: Clock;
  readonly fetch?: typeof fetch;
  /**
   * Skip the push when the tag already holds exactly these files (compared by content, not by
   * archive bytes, so an artifact `flux push artifact` made counts too).
   * @default false
   */
  readonly skipUnchanged?: boolean;
}

export interface Pushed {
  readonly digest: string;
  /** `<tag>@sha256:<hex>`. */
  readonly revision: string;
  /** `oci://host/repository:tag`. */
  readonly url: string;
  /** True when nothing was pushed: the tag already held the same files (`digest` is the existing one). */
  readonly unchanged: boolean;
  /** The existing artifact's `org.opencontainers.image.revision` (e.g. `main@sha1:…`), when unchanged. */
  readonly originRevision?: string;
}

/**
 * Pushes a directory as `flux push artifact` does: config `{}`
 * (`application/vnd.cncf.flux.config.v1+json`), one tar+gzip layer
 * (`application/vnd.cncf.flux.content.v1.tar+gzip`), an OCI image manifest with the created,
 * source and revision annotations, tagged `ref`'s tag (`latest` when it has none).
 */
export async function pushArtifact(dir: string, ref: string, deps: PushDeps): Promise<Pushed> {
  const reference = parseReference(ref, { allowTagOrDigest: true });
  if (reference.digest !== undefined) {
    throw artifactError(`push reference "${ref}": name a tag to push to, not a digest`);
  }
  const { host, repository } = reference;
  const tag = reference.tag ?? 'latest';
  const client = clientFor(host, deps, deps.insecure);
  const layer = await packDirectory(dir);
  if (deps.skipUnchanged) {
    const existing = await sameContentAt(reference.url, tag, layer, deps);
    if (existing) return existing;
  }
  const config = Buffer.from('{}');
  const layerDigest = await client.pushBlob(repository, layer);
  const configDigest = await client.pushBlob(repository, config);

  const created = (deps.clock ?? systemClock)
    .now()
    .toISOString()
    .replace(/\.\d+Z$/, 'Z');
  const annotations: Record<string, string> = { [ANNOTATION_CREATED]: created };
  if (deps.annotations?.source) annotations[ANNOTATION_SOURCE] = deps.annotations.source;
  if (deps.annotations?.revision) annotations[ANNOTATION_REVISION] = deps.annotations.revision;
  const manifest = {
    schemaVersion: 2,
    mediaType: OCI_MANIFEST_MEDIA_TYPE,
    config: { mediaType: FLUX_CONFIG_MEDIA_TYPE, digest: configDigest, size: config.length },
    layers: [{ mediaType: FLUX_CONTENT_MEDIA_TYPE, digest: layerDigest, size: layer.length }],
    annotations,
  };
  const digest = await client.putManifest(
    repository,
    tag,
    Buffer.from(JSON.stringify(manifest)),
    OCI_MANIFEST_MEDIA_TYPE,
  );
  return { digest, revision: revisionOf(digest, tag), url: `${reference.url}:${tag}`, unchanged: false };
}

/**
 * The artifact `tag` names now, when its files are exactly those packed in `layer` (the same paths,
 * the same bytes); undefined when the tag does not exist or holds anything else.
 */
async function sameContentAt(
  url: string,
  tag: string,
  layer: Buffer,
  deps: PushDeps,
): Promise<Pushed | undefined> {
  const source: OciSource = { url, tag, insecure: deps.insecure };
  let existing: Artifact;
  try {
    existing = await pullArtifact(source, deps);
  } catch (error) {
    // No such tag (404), or one holding what this cannot read (an index, another media type): not the same.
    if (error instanceof SluiceError) return undefined;
    throw error;
  }
  const files = await unpackArtifact(layer);
  const same =
    files.size === existing.files.size &&
    [...files].every(([path, content]) => existing.files.get(path)?.equals(content) === true);
  if (!same) return undefined;
  return {
    digest: existing.digest,
    revision: existing.revision,
    url: `${url}:${tag}`,
    unchanged: true,
    ...(existing.annotations[ANNOTATION_REVISION] && {
      originRevision: existing.annotations[ANNOTATION_REVISION],
    }),
  };
}
