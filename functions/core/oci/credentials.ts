import { GetAuthorizationTokenCommand, type ECRClient } from '@aws-sdk/client-ecr';
import { readFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { Clock } from '../clock.ts';
import { artifactError } from './errors.ts';
import { isEcrHost } from './ecr-host.ts';
import { parseReference } from './reference.ts';
import type { OciSource } from './source.ts';

export interface BasicCredentials {
  readonly username: string;
  readonly password: string;
}

/** Credentials for a registry host (`host[:port]`); `undefined` means anonymous. */
export type RegistryCredentials = (host: string) => Promise<BasicCredentials | undefined>;

export const anonymousCredentials: RegistryCredentials = async () => undefined;

/** ECR tokens are renewed this long before they expire. */
export const ECR_TOKEN_MARGIN_MS = 5 * 60_000;

/**
 * ECR credentials from `GetAuthorizationToken` (`AWS:<password>`), cached until `expiresAt` minus
 * a margin by the given clock. Concurrent callers share one request. Keep one per ECR client so
 * the cache outlives a single reconcile.
 */
export function ecrCredentials(
  ecr: ECRClient,
  clock: Clock,
  options: { marginMs?: number } = {},
): RegistryCredentials {
  const margin = options.marginMs ?? ECR_TOKEN_MARGIN_MS;
  let cached: { credentials: BasicCredentials; expiresAt: number } | undefined;
  let pending: Promise<BasicCredentials> | undefined;

  async function fetchToken(host: string): Promise<BasicCredentials> {
    let output;
    try {
      output = await ecr.send(new GetAuthorizationTokenCommand({}));
    } catch (error) {
      throw artifactError(
        `registry ${host}: ECR GetAuthorizationToken failed: ${(error as Error).message}`,
        error,
      );
    }
    const data = output.authorizationData?.[0];
    const decoded = Buffer.from(data?.authorizationToken ?? '', 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    if (!data || colon < 0) {
      throw artifactError(`registry ${host}: ECR GetAuthorizationToken returned no usable token`);
    }
    const credentials = { username: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
    const expiresAt = data.expiresAt?.getTime() ?? clock.now().getTime() + 3600_000;
    cached = { credentials, expiresAt };
    return credentials;
  }

  return async (host) => {
    if (cached && clock.now().getTime() < cached.expiresAt - margin) return cached.credentials;
    pending ??= fetchToken(host).finally(() => {
      pending = undefined;
    });
    return pending;
  };
}

interface DockerConfig {
  auths?: Record<string, { auth?: string; username?: string; password?: string } | undefined>;
}

const DOCKER_HUB_KEYS = ['docker.io', 'index.docker.io', 'registry-1.docker.io'];

/** The key of a `~/.docker/config.json` `auths` entry as a bare host: no scheme, no path. */
function authsKeyHost(key: string): string {
  return key
    .replace(/^[a-z]+:\/\//i, '')
    .replace(/\/.*$/, '')
    .toLowerCase();
}

/** The user's Docker config file: `$DOCKER_CONFIG/config.json`, else `~/.docker/config.json`. */
export const dockerConfigPath = (dockerConfigDir: string | undefined): string =>
  join(dockerConfigDir ?? join(homedir(), '.docker'), 'config.json');

/**
 * Credentials from a Docker config file (see dockerConfigPath): the `auths` entry's base64 `auth`
 * or `username`/`password`. Anonymous when the file or the entry is missing. Credential helpers
 * are not consulted.
 */
export function dockerConfigCredentials(file: string): RegistryCredentials {
  return async (host) => {
    let config: DockerConfig;
    try {
      config = JSON.parse(await readFile(file, 'utf8')) as DockerConfig;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw artifactError(
        `registry ${host}: cannot read Docker config ${file}: ${(error as Error).message}`,
        error,
      );
    }
    const wanted = DOCKER_HUB_KEYS.includes(host) ? DOCKER_HUB_KEYS : [host.toLowerCase()];
    const entry = Object.entries(config.auths ?? {}).find(([key]) => wanted.includes(authsKeyHost(key)))?.[1];
    if (!entry) return undefined;
    if (entry.auth) {
      const decoded = Buffer.from(entry.auth, 'base64').toString('utf8');
      const colon = decoded.indexOf(':');
      if (colon < 0)
        throw artifactError(`registry ${host}: the "auth" entry in ${file} is not base64 of user:password`);
      return { username: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
    }
    if (entry.username !== undefined && entry.password !== undefined) {
      return { username: entry.username, password: entry.password };
    }
    return undefined;
  };
}

/** One provider per kind, built once (e.g. per Lambda container) so caches outlive a reconcile. */
export interface CredentialProviders {
  readonly aws: RegistryCredentials;
  readonly generic: RegistryCredentials;
}

/** The source's `provider`, or `aws` for ECR hosts and `generic` for any other registry. */
export function providerOf(source: Pick<OciSource, 'url' | 'provider'>): 'aws' | 'generic' {
  if (source.provider) return source.provider;
  return isEcrHost(parseReference(source.url, { allowTagOrDigest: true }).host) ? 'aws' : 'generic';
}

/** The credentials to use for a source, picked by its provider. */
export function credentialsFor(
  source: Pick<OciSource, 'url' | 'provider'>,
  providers: CredentialProviders,
): RegistryCredentials {
  return providers[providerOf(source)];
}
