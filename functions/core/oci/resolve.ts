import semver from 'semver';
import { isDigest } from './digest.ts';
import { artifactError, RegistryError } from './errors.ts';
import { describeReference, type OciReference } from './reference.ts';
import type { RegistryClient } from './registry-client.ts';
import type { OciSource } from './source.ts';

/** What a source points at now. */
export interface Resolved {
  /** The manifest digest, `sha256:<hex>`. */
  readonly digest: string;
  readonly tag?: string;
  /** `<tag>@sha256:<hex>`, or `sha256:<hex>` for a digest source (Flux's formats). */
  readonly revision: string;
}

export type SourceRef = { readonly tag: string } | { readonly semver: string } | { readonly digest: string };

/** The source's one ref: exactly one of tag, semver and digest; tag `latest` when none is set. */
export function sourceRef(source: OciSource): SourceRef {
  const set = (['tag', 'semver', 'digest'] as const).filter((key) => source[key] !== undefined);
  if (set.length > 1) {
    throw artifactError(
      `source ${source.url}: set only one of tag, semver and digest (found ${set.join(', ')})`,
    );
  }
  if (source.digest !== undefined) {
    if (!isDigest(source.digest)) {
      throw artifactError(
        `source ${source.url}: digest "${source.digest}" is not sha256:<64 lowercase hex digits>`,
      );
    }
    return { digest: source.digest };
  }
  if (source.semver !== undefined) return { semver: source.semver };
  return { tag: source.tag ?? 'latest' };
}

export function revisionOf(digest: string, tag?: string): string {
  return tag === undefined ? digest : `${tag}@${digest}`;
}

/**
 * The tag holding the highest version that satisfies a Masterminds-style range (`>=1.0.0 <2.0.0`,
 * `>=1.0.0, <2.0.0`, `~1.2`, `^1`, `1.x`). Tags may start with `v`; tags that are not versions
 * are ignored; prereleases only match ranges that name one (as Masterminds does).
 */
export function selectSemverTag(
  tags: readonly string[],
  range: string,
  label = 'source',
): string | undefined {
  const normalised = range.replace(/,/g, ' ').trim();
  if (!normalised || semver.validRange(normalised, { loose: true }) === null) {
    throw artifactError(`${label}: semver range "${range}" is not a valid range`);
  }
  const byVersion = new Map<string, string>();
  for (const tag of [...tags].sort()) {
    const version = versionOf(tag);
    // On ties (`v1.0.0` and `1.0.0`) the tag without `v` wins, being first in sort order.
    if (version !== null && !byVersion.has(version)) byVersion.set(version, tag);
  }
  // Masterminds lets a range that names a prerelease match any prerelease; node-semver only
  // those of the same major.minor.patch unless told so.
  const includePrerelease = /\d-[0-9a-z]/i.test(normalised);
  const best = semver.maxSatisfying([...byVersion.keys()], normalised, { loose: true, includePrerelease });
  return best === null ? undefined : byVersion.get(best);
}

/** A tag as a version, leniently like Masterminds: `v1.2.3`, `1.2`, `v1`, `1.2.3-rc.1+build`. */
function versionOf(tag: string): string | null {
  const match = /^v?(\d+)(?:\.(\d+))?(?:\.(\d+))?([-+].*)?$/.exec(tag);
  if (!match) return null;
  return semver.valid(`${match[1]}.${match[2] ?? 0}.${match[3] ?? 0}${match[4] ?? ''}`, { loose: true });
}

/** Resolves the source's tag, semver range or digest to a manifest digest and a revision. */
export async function resolveReference(
  client: RegistryClient,
  reference: OciReference,
  source: OciSource,
): Promise<Resolved> {
  const ref = sourceRef(source);
  const { repository } = reference;
  if ('digest' in ref) {
    const digest = await manifestDigest(client, repository, ref.digest);
    if (digest !== ref.digest) {
      throw artifactError(
        `${describeReference(client.host, repository, ref.digest)}: the registry served a manifest with digest ${digest}`,
      );
    }
    return { digest, revision: revisionOf(digest) };
  }
  let tag: string;
  if ('semver' in ref) {
    const tags = await client.listTags(repository);
    const picked = selectSemverTag(tags, ref.semver, describeReference(client.host, repository));
    if (picked === undefined) {
      throw artifactError(
        `${describeReference(client.host, repository)}: no tag matches semver range "${ref.semver}" ` +
          `(${tags.length} tag${tags.length === 1 ? '' : 's'} found)`,
      );
    }
    tag = picked;
  } else {
    tag = ref.tag;
  }
  const digest = await manifestDigest(client, repository, tag);
  return { digest, tag, revision: revisionOf(digest, tag) };
}

/** The digest a tag or digest points at; when it is missing, says whether the repository is. */
async function manifestDigest(
  client: RegistryClient,
  repository: string,
  reference: string,
): Promise<string> {
  try {
    return await client.manifestDigest(repository, reference);
  } catch (error) {
    if (!(error instanceof RegistryError) || error.status !== 404 || error.codes.includes('NAME_UNKNOWN')) {
      throw error;
    }
    // Registries answer MANIFEST_UNKNOWN for a tag of a repository that does not exist, too:
    // the tags list tells (and throws "repository not found").
    await client.listTags(repository);
    throw error;
  }
}
