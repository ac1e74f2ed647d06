import { Sha256 } from '@aws-crypto/sha256-js';
import { SignatureV4 } from '@smithy/signature-v4';
import type { AwsCredentialIdentity, AwsCredentialIdentityProvider } from '@smithy/types';
import type { Clock } from '../clock.ts';

/** What aws-iam-authenticator (and so EKS) expects in front of the base64url presigned URL. */
export const EKS_TOKEN_PREFIX = 'k8s-aws-v1.';

/** The header EKS checks to bind a token to one cluster; it must be among the signed headers. */
export const CLUSTER_ID_HEADER = 'x-k8s-aws-id';

/** How long the presigned URL itself is valid; EKS accepts the token for 15 minutes regardless. */
const PRESIGN_EXPIRES_SECONDS = 60;

/** EKS accepts a token for 15 minutes; report one minute less so callers refresh early. */
const TOKEN_LIFETIME_MS = 14 * 60_000;

export interface EksTokenOptions {
  readonly clusterName: string;
  readonly region: string;
  readonly credentials: AwsCredentialIdentity | AwsCredentialIdentityProvider;
  readonly clock: Clock;
}

export interface EksToken {
  readonly token: string;
  /** When to stop using the token (signing time + 14 min, or earlier if the credentials expire). */
  readonly expiresAt: Date;
}

/**
 * A bearer token for an EKS cluster, as `aws eks get-token` and aws-iam-authenticator make it:
 * a SigV4-presigned STS GetCallerIdentity URL, bound to the cluster by the signed
 * `x-k8s-aws-id` header, base64url-encoded without padding behind `k8s-aws-v1.`.
 */
export async function eksToken(options: EksTokenOptions): Promise<EksToken> {
  const { clusterName, region, clock } = options;
  const credentials =
    typeof options.credentials === 'function' ? await options.credentials() : options.credentials;
  const hostname = stsHostname(region);
  const signingDate = clock.now();
  const signer = new SignatureV4({ service: 'sts', region, credentials, sha256: Sha256 });
  const signed = await signer.presign(
    {
      method: 'GET',
      protocol: 'https:',
      hostname,
      path: '/',
      query: { Action: 'GetCallerIdentity', Version: '2011-06-15' },
      headers: { host: hostname, [CLUSTER_ID_HEADER]: clusterName },
    },
    { expiresIn: PRESIGN_EXPIRES_SECONDS, signingDate },
  );
  const url = `https://${hostname}/?${queryString(signed.query ?? {})}`;
  let expiresAt = signingDate.getTime() + TOKEN_LIFETIME_MS;
  if (credentials.expiration) expiresAt = Math.min(expiresAt, credentials.expiration.getTime());
  return {
    token: EKS_TOKEN_PREFIX + Buffer.from(url, 'utf8').toString('base64url'),
    expiresAt: new Date(expiresAt),
  };
}

/** The regional STS endpoint, which EKS accepts (and which works without the global endpoint). */
function stsHostname(region: string): string {
  return region.startsWith('cn-') ? `sts.${region}.amazonaws.com.cn` : `sts.${region}.amazonaws.com`;
}

/** RFC 3986 query encoding, keys sorted (as the SigV4 canonical query string orders them). */
function queryString(query: Record<string, string | null | Array<string>>): string {
  return Object.keys(query)
    .sort()
    .flatMap((key) => {
      const value = query[key];
      const values = value == null ? [] : Array.isArray(value) ? value : [value];
      return values.map((v) => `${rfc3986(key)}=${rfc3986(v)}`);
    })
    .join('&');
}

function rfc3986(value: string): string {
  return encodeURIComponent(value).replace(
    /[!'()*]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
  );
}
