// The token authenticator of the local API servers for EKS tokens: a TokenReview (authentication.k8s.io/v1)
// webhook (`--authentication-token-webhook-config-file`) checking a `k8s-aws-v1.` token as EKS's
// aws-iam-authenticator and STS do, then mapping the caller by the cluster's access entries.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { entryMatchArn, listStandInEksClusters, type StandInEksCluster } from './eks-clusters.ts';
import { verifySigV4, type TestIdentity } from './sigv4-identity.ts';

/** Where the webhook answers: `/eks-authenticator/<host>:<port>` of the API server that asks. */
export const EKS_AUTHENTICATOR_PATH = '/eks-authenticator/';

/** The webhook URL an API server at `server` (https://127.0.0.1:<port>) is given. */
export function eksAuthenticatorUrl(base: string, server: string): string {
  return `${base}${EKS_AUTHENTICATOR_PATH}${new URL(server).host}`;
}

export interface EksAuthenticatorOptions {
  /** The clusters and their access entries (dev/eks-clusters.ts), read on every review. */
  readonly clustersDir: string;
  /** Whose signatures STS would verify (dev/sigv4-identity.ts). */
  readonly identities: readonly TestIdentity[];
  /** @default the wall clock */
  readonly now?: () => Date;
}

export function isEksAuthenticatorRequest(request: IncomingMessage): boolean {
  return (request.url ?? '').startsWith(EKS_AUTHENTICATOR_PATH);
}

const TOKEN_PREFIX = 'k8s-aws-v1.';
const CLUSTER_ID_HEADER = 'x-k8s-aws-id';
const MAX_TOKEN_LENGTH = 4096;
/** STS honours a presigned GetCallerIdentity for 15 minutes after its X-Amz-Date, whatever X-Amz-Expires says. */
const TOKEN_LIFETIME_MS = 15 * 60_000;
/** The query parameters aws-iam-authenticator lets through (lower case); anything else is refused. */
const ALLOWED_PARAMETERS = new Set([
  'action',
  'version',
  'x-amz-algorithm',
  'x-amz-credential',
  'x-amz-date',
  'x-amz-expires',
  'x-amz-security-token',
  'x-amz-signature',
  'x-amz-signedheaders',
]);
/** STS hosts of the aws and aws-cn partitions: global, or regional (the region the signature must be scoped to). */
const STS_HOST = /^sts(?:\.([a-z]{2}(?:-gov)?-[a-z]+-\d))?\.amazonaws\.com(\.cn)?$/;

/** The Kubernetes user a token maps to, or why it does not. */
export type Review =
  | {
      readonly user: {
        readonly username: string;
        readonly uid: string;
        readonly groups: string[];
        readonly extra: Record<string, string[]>;
      };
      readonly cluster: string;
    }
  | { readonly error: string };

/**
 * Reviews `token` for the API server at `server` (https://host:port): it must be a presigned STS
 * GetCallerIdentity URL for a known STS host, with `x-k8s-aws-id` among the signed headers, less
 * than 15 minutes old, whose signature holds with `x-k8s-aws-id` set to the name of a cluster this
 * API server stands for (a token for another cluster does not hold); then the caller's ARN (an
 * assumed-role session as its role, without path) must have an access entry on that cluster.
 */
export function reviewEksToken(token: string, server: string, options: EksAuthenticatorOptions): Review {
  if (!token.startsWith(TOKEN_PREFIX)) return { error: `not an EKS token (no ${TOKEN_PREFIX} prefix)` };
  if (token.length > MAX_TOKEN_LENGTH) return { error: 'the token is too large' };
  const encoded = token.slice(TOKEN_PREFIX.length);
  if (!/^[A-Za-z0-9_-]+$/.test(encoded)) return { error: 'the token is not unpadded base64url' };
  let url: URL;
  try {
    url = new URL(Buffer.from(encoded, 'base64url').toString('utf8'));
  } catch {
    return { error: 'the token does not hold a URL' };
  }
  if (url.protocol !== 'https:') return { error: `unexpected scheme ${url.protocol} in the presigned URL` };
  if (url.username || url.password || url.port)
    return { error: 'unexpected userinfo or port in the presigned URL' };
  const host = STS_HOST.exec(url.hostname);
  if (!host) return { error: `unexpected hostname "${url.hostname}" in the presigned URL` };
  if (url.pathname !== '/') return { error: 'unexpected path in the presigned URL' };
  const rawQuery = url.search.slice(1);
  const params = new Map<string, string>();
  for (const pair of rawQuery.split('&')) {
    if (pair === '' || pair.includes(';')) return { error: 'malformed query parameter' };
    const [name = '', value = ''] = pair.split(/=(.*)/s);
    let key: string, decoded: string;
    try {
      key = decodeURIComponent(name.replace(/\+/g, ' ')).toLowerCase();
      decoded = decodeURIComponent(value.replace(/\+/g, ' '));
    } catch {
      return { error: 'malformed query parameter' };
    }
    if (!ALLOWED_PARAMETERS.has(key)) return { error: `query parameter "${name}" is not allowed` };
    if (params.has(key)) return { error: `query parameter "${name}" is given more than once` };
    params.set(key, decoded);
  }
  if (params.get('action') !== 'GetCallerIdentity')
    return { error: 'the presigned URL is not an STS GetCallerIdentity' };
  if (!(params.get('x-amz-signature') ?? '')) return { error: 'the URL is not presigned' };
  const signedHeaders = (params.get('x-amz-signedheaders') ?? '').split(';').map((h) => h.toLowerCase());
  if (!signedHeaders.includes(CLUSTER_ID_HEADER))
    return { error: `the ${CLUSTER_ID_HEADER} header is not signed in the presigned URL` };
  const expires = params.get('x-amz-expires') ?? '';
  if (!/^\d+$/.test(expires) || Number(expires) > 900)
    return { error: `invalid X-Amz-Expires "${expires}" in the presigned URL` };
  const date = params.get('x-amz-date') ?? '';
  const signedAt = Date.parse(
    date.replace(/^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/, '$1-$2-$3T$4:$5:$6Z'),
  );
  if (!/^\d{8}T\d{6}Z$/.test(date) || Number.isNaN(signedAt))
    return { error: `invalid X-Amz-Date "${date}" in the presigned URL` };
  const now = options.now?.() ?? new Date();
  if (now.getTime() > signedAt + TOKEN_LIFETIME_MS)
    return { error: `the token expired (15 minutes after X-Amz-Date ${date})` };
  const [, , scopeRegion, service] = (params.get('x-amz-credential') ?? '').split('/');
  const hostRegion = host[1] ?? (host[2] ? 'cn-north-1' : 'us-east-1');
  if (service !== 'sts' || scopeRegion !== hostRegion)
    return { error: `the signature is not scoped to sts in ${hostRegion}, the region of ${url.hostname}` };

  const mine = listStandInEksClusters(options.clustersDir).filter(([, c]) => c.endpoint === server);
  if (mine.length === 0) return { error: `the API server ${server} stands for no EKS cluster` };
  let refusal = 'the signature does not hold for any cluster this API server stands for';
  for (const [name, cluster] of mine) {
    const verified = verifySigV4(
      {
        method: 'GET',
        url: `/?${rawQuery}`,
        headers: { host: url.hostname, [CLUSTER_ID_HEADER]: name },
        body: '',
      },
      options.identities,
      now,
      { presignedLifetimeMs: TOKEN_LIFETIME_MS },
    );
    if ('error' in verified) {
      if (verified.code !== 'SignatureDoesNotMatch') refusal = `${verified.code}: ${verified.error}`;
      continue;
    }
    return mapCaller(verified.identity, name, cluster);
  }
  return { error: refusal };
}

/** The caller as the cluster's access entries map it, as EKS does; no entry, no user. */
function mapCaller(identity: TestIdentity, name: string, cluster: StandInEksCluster): Review {
  const session = /^arn:(aws[\w-]*):sts::(\d{12}):assumed-role\/([\w+=,.@-]+)\/([\w+=,.@-]+)$/.exec(
    identity.arn,
  );
  const user = /^arn:(aws[\w-]*):iam::(\d{12}):user\/[\w+=,.@/-]+$/.exec(identity.arn);
  if (!session && !user) return { error: `${identity.arn} is neither an IAM user nor an assumed role` };
  const [, partition, account = ''] = (session ?? user)!;
  const canonicalArn = session ? `arn:${partition}:iam::${account}:role/${session[3]}` : identity.arn;
  const entry = (cluster.accessEntries ?? []).find((e) => entryMatchArn(e.principalArn) === canonicalArn);
  if (!entry) return { error: `${canonicalArn} has no access entry on EKS cluster ${name}` };
  const sessionName = session?.[4] ?? '';
  const template =
    entry.username ??
    (session ? `arn:${partition}:sts::${account}:assumed-role/${session[3]}/{{SessionName}}` : identity.arn);
  if (template.includes('{{SessionName}}') && !session)
    return {
      error: `the user name of ${canonicalArn} on ${name} needs a session name, and ${identity.arn} has none`,
    };
  const username = template.replaceAll('{{SessionName}}', sessionName).replaceAll('{{AccountID}}', account);
  const groups = [
    ...(entry.groups ?? []),
    ...((entry.accessPolicies ?? []).includes('AmazonEKSClusterAdminPolicy') ? ['system:masters'] : []),
  ];
  return {
    cluster: name,
    user: {
      username,
      uid: `aws-iam-authenticator:${account}:${identity.accessKeyId}`,
      groups,
      extra: {
        arn: [identity.arn],
        canonicalArn: [canonicalArn],
        ...(session ? { sessionName: [sessionName] } : {}),
        accessKeyId: [identity.accessKeyId],
      },
    },
  };
}

/** The webhook: a TokenReview in, the same TokenReview with its status out (refusals are `authenticated: false`). */
export function handleEksTokenReview(
  options: EksAuthenticatorOptions,
  request: IncomingMessage,
  response: ServerResponse,
): void {
  const chunks: Buffer[] = [];
  request.on('data', (chunk: Buffer) => chunks.push(chunk));
  request.on('end', () => {
    const reply = (status: number, body: unknown) =>
      response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    // kube-apiserver adds its request timeout (`?timeout=30s`) to the configured URL.
    const path = (request.url ?? '').split('?')[0] ?? '';
    const server = `https://${path.slice(EKS_AUTHENTICATOR_PATH.length)}`;
    let review: { apiVersion?: unknown; kind?: unknown; spec?: { token?: unknown } };
    try {
      review = JSON.parse(Buffer.concat(chunks).toString('utf8')) as typeof review;
    } catch {
      return reply(400, { message: 'the body is not JSON' });
    }
    if (
      request.method !== 'POST' ||
      review.apiVersion !== 'authentication.k8s.io/v1' ||
      review.kind !== 'TokenReview' ||
      typeof review.spec?.token !== 'string'
    )
      return reply(400, {
        message: 'expected a POST of an authentication.k8s.io/v1 TokenReview with spec.token',
      });
    const result = reviewEksToken(review.spec.token, server, options);
    reply(200, {
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'TokenReview',
      status:
        'error' in result
          ? { authenticated: false, error: result.error }
          : { authenticated: true, user: result.user },
    });
  });
}
