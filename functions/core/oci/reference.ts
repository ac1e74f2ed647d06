import { isDigest } from './digest.ts';
import { artifactError } from './errors.ts';

/** A parsed `oci://host[:port]/repository[:tag][@sha256:…]`. */
export interface OciReference {
  /** `host[:port]` as in the URL (lower case). */
  readonly host: string;
  /** The repository path inside the registry, e.g. `team/app`. */
  readonly repository: string;
  readonly tag?: string;
  readonly digest?: string;
  /** `oci://host/repository`, without tag or digest. */
  readonly url: string;
}

const LABEL = '[a-z0-9](?:[a-z0-9-]*[a-z0-9])?';
const HOST = new RegExp(`^(?:${LABEL}(?:\\.${LABEL})*|\\[[0-9a-f:.]+\\])(?::(\\d{1,5}))?$`);
const PATH_COMPONENT = /^[a-z0-9]+(?:(?:\.|_|__|-+)[a-z0-9]+)*$/;
const TAG = /^[\w][\w.-]{0,127}$/;

/**
 * Parses an artifact URL. Source URLs (`allowTagOrDigest: false`, the default) name a repository
 * only, as Flux's OCIRepository does; push references may carry `:tag` and/or `@sha256:…`.
 */
export function parseReference(url: string, options: { allowTagOrDigest?: boolean } = {}): OciReference {
  const bad = (problem: string) => artifactError(`artifact URL "${url}": ${problem}`);
  if (!url.startsWith('oci://')) throw bad('must start with oci://');
  const rest = url.slice('oci://'.length);
  const slash = rest.indexOf('/');
  const host = (slash < 0 ? rest : rest.slice(0, slash)).toLowerCase();
  let path = slash < 0 ? '' : rest.slice(slash + 1);
  if (!host) throw bad('has no registry host');
  const hostMatch = HOST.exec(host);
  if (!hostMatch) throw bad(`registry host "${host}" is not a valid host[:port]`);
  if (hostMatch[1] !== undefined && (Number(hostMatch[1]) < 1 || Number(hostMatch[1]) > 65535)) {
    throw bad(`registry port ${hostMatch[1]} is out of range`);
  }

  let digest: string | undefined;
  const at = path.indexOf('@');
  if (at >= 0) {
    digest = path.slice(at + 1);
    path = path.slice(0, at);
    if (!isDigest(digest)) throw bad(`digest "${digest}" is not sha256:<64 lowercase hex digits>`);
  }
  let tag: string | undefined;
  const colon = path.lastIndexOf(':');
  if (colon > path.lastIndexOf('/')) {
    tag = path.slice(colon + 1);
    path = path.slice(0, colon);
    if (!TAG.test(tag)) throw bad(`tag "${tag}" is not a valid tag (letters, digits, _ . -, at most 128)`);
  }
  if (!path) throw bad('has no repository path after the host');
  for (const component of path.split('/')) {
    if (!PATH_COMPONENT.test(component)) {
      throw bad(
        `repository "${path}" is not a valid name (lower-case letters and digits separated by . _ - /)`,
      );
    }
  }
  if (!options.allowTagOrDigest && (tag !== undefined || digest !== undefined)) {
    throw bad('must name a repository only; put the tag, semver range or digest in the source fields');
  }
  return {
    host,
    repository: path,
    ...(tag !== undefined ? { tag } : {}),
    ...(digest !== undefined ? { digest } : {}),
    url: `oci://${host}/${path}`,
  };
}

/** `host/repository:tag`, `host/repository@digest` or `host/repository`, for messages. */
export function describeReference(host: string, repository: string, reference?: string): string {
  if (reference === undefined) return `${host}/${repository}`;
  return `${host}/${repository}${reference.startsWith('sha256:') ? '@' : ':'}${reference}`;
}

/** 127.0.0.0/8, localhost and [::1]: plain http is allowed there. */
export function isLoopbackHost(host: string): boolean {
  const name = host.replace(/:\d+$/, '');
  return name === 'localhost' || name === '[::1]' || /^127(?:\.\d{1,3}){3}$/.test(name);
}
