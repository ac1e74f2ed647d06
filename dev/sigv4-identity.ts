// Who signed a request, as AWS would tell: the test identities the local AWS stand-ins know, and a
// Signature Version 4 check written from the AWS specification (not with the signer the CLI
// uses), for both forms: the Authorization header and a presigned query string.
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';

/** A principal the stand-ins know: the key pair it signs with and the ARN AWS would verify. */
export interface TestIdentity {
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
  /** Set for temporary credentials (an assumed role); a request must carry it. */
  readonly sessionToken?: string;
  readonly arn: string;
}

const ACCOUNT = '123456789012';
/** The deployer role of a locally deployed stack (dev/local-stack): its functions sign as it. */
export const STACK_DEPLOYER_ROLE = 'sluice-deployer';
/** An account the stack does not trust: anyone may open one and sign with its credentials. */
export const OUTSIDE_ACCOUNT = '999999999999';
const role = (name: string, session: string, key: string, account = ACCOUNT): TestIdentity => ({
  accessKeyId: `ASIA${key.padEnd(16, '0').toUpperCase()}`,
  secretAccessKey: `${session}/secret/EXAMPLEKEY/${key}`.padEnd(40, '0'),
  sessionToken: `session-token-of-${name}-${session}`,
  arn: `arn:aws:sts::${account}:assumed-role/${name}/${session}`,
});

/**
 * Made-up identities, never real credentials: people of an IAM Identity Center permission set
 * (whose session names AWS sets), sessions of one shared role (whose names the caller picks), an
 * IAM user, and a pusher.
 */
export const TEST_IDENTITIES = {
  alice: role('AWSReservedSSO_Approver_0123456789abcdef', 'alice@example.com', 'alicesso'),
  bob: role('AWSReservedSSO_Approver_0123456789abcdef', 'bob@example.com', 'bobsso'),
  mallory: role('Approver', 'mallory', 'mallory'),
  malloryAsBob: role('Approver', 'mallory-as-bob', 'mallorybob'),
  carol: {
    accessKeyId: 'AKIACAROLEXAMPLE0001',
    secretAccessKey: 'carol/secret/EXAMPLEKEY/000000000000000',
    arn: `arn:aws:iam::${ACCOUNT}:user/carol`,
  },
  /**
   * The IAM user carol through roles whose trust policies set the session name to the assumer's
   * user name (`sts:RoleSessionName` = `${aws:username}`): what a gate's sessionNamedRoles lists.
   */
  carolAsDeveloper: role('Developer', 'carol', 'caroldev'),
  carolAsDeployer: role('Deployer', 'carol', 'caroldeploy'),
  /** carol's GetFederationToken session: a federated user she named as she liked (STS does not say whose). */
  carolFederated: {
    accessKeyId: 'ASIACAROLFEDERATED01',
    secretAccessKey: 'carol-federated/secret/EXAMPLEKEY/000000',
    sessionToken: 'session-token-of-carol-federated',
    arn: `arn:aws:sts::${ACCOUNT}:federated-user/release-bot`,
  },
  ci: role('ci-pusher', 'github-actions', 'cipusher'),
  /** A user of another (free) account, signing as a role named like an Identity Center one: bob's name. */
  outsiderAsBob: role(
    'AWSReservedSSO_Approver_0123456789abcdef',
    'bob@example.com',
    'outsiderbob',
    OUTSIDE_ACCOUNT,
  ),
  /** A plain role of another account. */
  outsider: role('Personal', 'eve', 'outsider', OUTSIDE_ACCOUNT),
  /**
   * A locally deployed stack's reconcile and spec functions, whose role the stack names
   * `deployerRoleName: 'sluice-deployer'` (dev/local-stack), and its other functions.
   */
  stackDeployer: role(STACK_DEPLOYER_ROLE, 'sluice-function', 'stackdeployer'),
  stackFunction: role('sluice-function', 'sluice-function', 'stackfunction'),
} satisfies Record<string, TestIdentity>;

/**
 * The key pair of the local components' environment (`. .sluice/dev/env`: AWS_ACCESS_KEY_ID=local),
 * an IAM user of the local account, for stand-ins a local shell calls (CloudFormation).
 */
export const LOCAL_IDENTITY: TestIdentity = {
  accessKeyId: 'local',
  secretAccessKey: 'local',
  arn: 'arn:aws:iam::000000000000:user/local',
};

/** How far a signing time may be from the verifier's clock. */
const MAX_CLOCK_SKEW_MS = 5 * 60_000;

/** What the verifier needs of an HTTP request. */
export interface SignedRequest {
  readonly method: string;
  /** The path and query string as sent, e.g. `/?Action=GetCallerIdentity&X-Amz-Signature=…`. */
  readonly url: string;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly body: string;
}

export type Verification =
  | { readonly identity: TestIdentity; readonly service: string; readonly region: string }
  | { readonly error: string; readonly code: string };

const sha256 = (data: string) => createHash('sha256').update(data).digest('hex');
const hmac = (key: Buffer | string, data: string) => createHmac('sha256', key).update(data).digest();
/** RFC 3986 encoding as SigV4 wants it: unreserved characters stay, everything else is %XX. */
const uriEncode = (value: string) =>
  encodeURIComponent(value).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
const amzTime = (value: string) =>
  Date.parse(value.replace(/^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/, '$1-$2-$3T$4:$5:$6Z'));
const headerValue = (value: string | string[] | undefined) =>
  (Array.isArray(value) ? value.join(',') : (value ?? '')).trim().replace(/\s+/g, ' ');

export interface VerifyOptions {
  /**
   * How long after its X-Amz-Date a presigned request holds, whatever its X-Amz-Expires says: STS
   * honours a presigned GetCallerIdentity for 15 minutes regardless (what EKS tokens rely on).
   * @default X-Amz-Expires seconds
   */
  readonly presignedLifetimeMs?: number;
  /**
   * S3's canonical URI: each path segment URI-encoded once (every other service encodes it twice).
   * @default false
   */
  readonly s3?: boolean;
}

/**
 * The identity whose key signed `request` at `now`, or why not: unknown key, wrong session token,
 * a date outside the clock skew, an expired presigned request, or a signature that does not hold.
 */
export function verifySigV4(
  request: SignedRequest,
  identities: readonly TestIdentity[],
  now: Date,
  options: VerifyOptions = {},
): Verification {
  const [path = '/', rawQuery = ''] = request.url.split(/\?(.*)/s);
  const params = rawQuery
    .split('&')
    .filter(Boolean)
    .map((pair) => {
      const [name = '', value = ''] = pair.split(/=(.*)/s);
      return [decodeURIComponent(name.replace(/\+/g, ' ')), decodeURIComponent(value.replace(/\+/g, ' '))];
    }) as [string, string][];
  const param = (name: string) => params.find(([key]) => key === name)?.[1];
  const presigned = param('X-Amz-Signature') !== undefined;

  let credential: string,
    signedHeaders: string,
    signature: string,
    amzDate: string,
    token: string | undefined;
  if (presigned) {
    if (param('X-Amz-Algorithm') !== 'AWS4-HMAC-SHA256')
      return { code: 'IncompleteSignature', error: 'X-Amz-Algorithm must be AWS4-HMAC-SHA256' };
    credential = param('X-Amz-Credential') ?? '';
    signedHeaders = param('X-Amz-SignedHeaders') ?? '';
    signature = param('X-Amz-Signature') ?? '';
    amzDate = param('X-Amz-Date') ?? '';
    token = param('X-Amz-Security-Token');
  } else {
    const match =
      /^AWS4-HMAC-SHA256 Credential=([^,]+), ?SignedHeaders=([^,]+), ?Signature=([0-9a-f]{64})$/.exec(
        headerValue(request.headers.authorization),
      );
    if (!match) return { code: 'MissingAuthenticationToken', error: 'the request is not signed' };
    [, credential = '', signedHeaders = '', signature = ''] = match;
    amzDate = headerValue(request.headers['x-amz-date']);
    token =
      request.headers['x-amz-security-token'] === undefined
        ? undefined
        : headerValue(request.headers['x-amz-security-token']);
  }
  const [accessKeyId, day, region, service, terminator] = credential.split('/');
  if (!accessKeyId || !day || !region || !service || terminator !== 'aws4_request')
    return { code: 'IncompleteSignature', error: `the credential scope "${credential}" is malformed` };
  const identity = identities.find((candidate) => candidate.accessKeyId === accessKeyId);
  if (!identity)
    return { code: 'InvalidClientTokenId', error: 'The security token included in the request is invalid.' };
  if (identity.sessionToken !== undefined && token !== identity.sessionToken)
    return { code: 'InvalidClientTokenId', error: 'The security token included in the request is invalid.' };
  const signedAt = amzTime(amzDate);
  if (!amzDate.startsWith(day) || Number.isNaN(signedAt))
    return { code: 'IncompleteSignature', error: `the date "${amzDate}" does not match the scope` };
  if (presigned) {
    const expires = Number(param('X-Amz-Expires'));
    if (!Number.isInteger(expires) || expires < 1 || expires > 604_800)
      return { code: 'AuthorizationQueryParametersError', error: 'X-Amz-Expires must be 1 to 604800' };
    if (now.getTime() > signedAt + (options.presignedLifetimeMs ?? expires * 1000))
      return { code: 'ExpiredToken', error: 'the presigned request has expired' };
    if (signedAt > now.getTime() + MAX_CLOCK_SKEW_MS)
      return { code: 'SignatureDoesNotMatch', error: 'Signature not yet current' };
  } else if (Math.abs(now.getTime() - signedAt) > MAX_CLOCK_SKEW_MS) {
    return { code: 'SignatureDoesNotMatch', error: 'Signature expired: the request time is too skewed' };
  }
  const names = signedHeaders.split(';');
  const declaredHash = request.headers['x-amz-content-sha256'];
  if (
    declaredHash !== undefined &&
    !['UNSIGNED-PAYLOAD', sha256(request.body)].includes(headerValue(declaredHash))
  )
    return { code: 'XAmzContentSHA256Mismatch', error: 'the body does not match x-amz-content-sha256' };
  if (!names.includes('host'))
    return { code: 'SignatureDoesNotMatch', error: 'the host header must be signed' };

  const canonicalQuery = params
    .filter(([name]) => name !== 'X-Amz-Signature')
    .map(([name, value]) => [uriEncode(name), uriEncode(value)])
    .sort(([a, av], [b, bv]) => (a! < b! ? -1 : a! > b! ? 1 : av! < bv! ? -1 : 1))
    .map(([name, value]) => `${name}=${value}`)
    .join('&');
  const canonicalUri = path
    .split('/')
    .map((segment) =>
      options.s3 ? uriEncode(decodeURIComponent(segment)) : uriEncode(uriEncode(decodeURIComponent(segment))),
    )
    .join('/');
  const canonicalRequest = [
    request.method.toUpperCase(),
    canonicalUri,
    canonicalQuery,
    names.map((name) => `${name}:${headerValue(request.headers[name])}\n`).join(''),
    signedHeaders,
    names.includes('x-amz-content-sha256')
      ? headerValue(request.headers['x-amz-content-sha256'])
      : sha256(request.body),
  ].join('\n');
  const scope = `${day}/${region}/${service}/aws4_request`;
  const stringToSign = ['AWS4-HMAC-SHA256', amzDate, scope, sha256(canonicalRequest)].join('\n');
  let key = hmac(`AWS4${identity.secretAccessKey}`, day);
  for (const part of [region, service, 'aws4_request']) key = hmac(key, part);
  const expected = createHmac('sha256', key).update(stringToSign).digest();
  const given = Buffer.from(signature, 'hex');
  if (given.length !== expected.length || !timingSafeEqual(given, expected))
    return {
      code: 'SignatureDoesNotMatch',
      error:
        'The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method.',
    };
  return { identity, service, region };
}
