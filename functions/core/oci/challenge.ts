import type { BasicCredentials } from './credentials.ts';
import { artifactError } from './errors.ts';

/** A parsed `WWW-Authenticate` challenge. */
export interface Challenge {
  /** Lower case: `basic`, `bearer`, … */
  readonly scheme: string;
  readonly params: Readonly<Record<string, string>>;
}

/** Parses the first challenge of a `WWW-Authenticate` header. */
export function parseChallenge(header: string | null): Challenge | undefined {
  const match = /^\s*([A-Za-z][\w-]*)\s*(.*)$/.exec(header ?? '');
  if (!match) return undefined;
  const params: Record<string, string> = {};
  for (const param of (match[2] ?? '').matchAll(/([\w-]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^,\s]*))/g)) {
    params[param[1]!.toLowerCase()] =
      param[2] !== undefined ? param[2].replace(/\\(.)/g, '$1') : (param[3] ?? '');
  }
  return { scheme: match[1]!.toLowerCase(), params };
}

export function basicAuthorization(credentials: BasicCredentials): string {
  return `Basic ${Buffer.from(`${credentials.username}:${credentials.password}`).toString('base64')}`;
}

/**
 * Fetches a bearer token from the challenge's realm (the Docker token protocol that ghcr.io,
 * Docker Hub and others use), sending Basic credentials when there are any.
 */
export interface TokenRequest {
  readonly challenge: Challenge;
  /** The scope asked for when the challenge names none. */
  readonly scope: string;
  readonly credentials: BasicCredentials | undefined;
  /** Names the artifact in errors. */
  readonly label: string;
}

export async function fetchBearerToken(
  fetchImpl: typeof fetch,
  { challenge, scope, credentials, label }: TokenRequest,
): Promise<string> {
  const realm = challenge.params.realm;
  if (!realm) throw artifactError(`${label}: the registry's Bearer challenge names no realm`);
  let url: URL;
  try {
    url = new URL(realm);
  } catch {
    throw artifactError(`${label}: the registry's token realm "${realm}" is not a URL`);
  }
  if (challenge.params.service) url.searchParams.set('service', challenge.params.service);
  url.searchParams.set('scope', challenge.params.scope ?? scope);
  let response: Response;
  try {
    response = await fetchImpl(url, {
      headers: credentials ? { authorization: basicAuthorization(credentials) } : {},
    });
  } catch (error) {
    throw artifactError(`${label}: cannot reach the token service ${url.origin}: ${causeOf(error)}`, error);
  }
  if (response.status === 401 || response.status === 403) {
    throw artifactError(
      `${label}: credentials were refused by the token service ${url.origin} (HTTP ${response.status})`,
    );
  }
  if (!response.ok) {
    throw artifactError(`${label}: the token service ${url.origin} answered HTTP ${response.status}`);
  }
  const body = (await response.json().catch(() => ({}))) as { token?: string; access_token?: string };
  const token = body.token ?? body.access_token;
  if (!token) throw artifactError(`${label}: the token service ${url.origin} returned no token`);
  return token;
}

/** The most specific reason a `fetch` failed (undici hides it in `cause`). */
export function causeOf(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? (error as Error).message;
}
