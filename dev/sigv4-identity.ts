import { createHash, createHmac, timingSafeEqual } from 'node:crypto';

/** A test principal of the local AWS stand-ins: its credentials and the ARN AWS would say it is. */
export interface TestIdentity {
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
  readonly sessionToken?: string;
  readonly arn: string;
}

/** An HTTP request as the stand-ins receive it. */
export interface SignedRequest {
  readonly method: string;
  /** The path and query as sent, e.g. `/` or `/a%20b?x=1`. */
  readonly url: string;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly body: Buffer;
}

/** A request whose signature does not prove who sent it. */
export class SignatureError extends Error {
  override readonly name = 'SignatureError';
}

const MAX_SKEW_MS = 5 * 60_000;
const sha256 = (data: string | Buffer) => createHash('sha256').update(data).digest('hex');
const hmac = (key: Buffer | string, data: string) => createHmac('sha256', key).update(data).digest();

/**
 * The ARN of the identity whose secret key made the request's SigV4 signature (header form), as
 * AWS checks it: the signature over the canonical request (the signed headers, which must include
 * host and x-amz-date, and the body's hash), a date within 5 minutes of `now`, and the session
 * token for temporary credentials. Anything else throws SignatureError.
 */
export function verifySigV4(request: SignedRequest, identities: readonly TestIdentity[], now: Date): string {
  const header = (name: string): string | undefined => {
    const value = request.headers[name];
    return Array.isArray(value) ? value.join(',') : value;
  };
  const authorization = header('authorization');
  const match = authorization
    ? /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, ?SignedHeaders=([a-z0-9;-]+), ?Signature=([0-9a-f]{64})$/.exec(
        authorization,
      )
    : null;
  if (!match) throw new SignatureError('the request is not signed (no SigV4 Authorization header)');
  const [, accessKeyId, day, region, service, signedHeaderList, signature] = match as unknown as string[];
  const identity = identities.find((candidate) => candidate.accessKeyId === accessKeyId);
  if (!identity) throw new SignatureError(`the access key ${accessKeyId} is not known`);

  const amzDate = header('x-amz-date') ?? '';
  const time = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(amzDate);
  if (!time || !amzDate.startsWith(day!))
    throw new SignatureError('x-amz-date is missing or not the credential day');
  const signedAt = Date.UTC(+time[1]!, +time[2]! - 1, +time[3]!, +time[4]!, +time[5]!, +time[6]!);
  if (Math.abs(now.getTime() - signedAt) > MAX_SKEW_MS)
    throw new SignatureError(`the signature's time ${amzDate} is more than 5 minutes from now`);

  const signedHeaders = signedHeaderList!.split(';');
  for (const required of ['host', 'x-amz-date'])
    if (!signedHeaders.includes(required)) throw new SignatureError(`the header ${required} is not signed`);
  if (identity.sessionToken !== undefined) {
    if (header('x-amz-security-token') !== identity.sessionToken)
      throw new SignatureError('the session token is missing or wrong');
  }
  const bodyHash = sha256(request.body);
  const claimedHash = header('x-amz-content-sha256');
  if (claimedHash !== undefined && claimedHash !== bodyHash && claimedHash !== 'UNSIGNED-PAYLOAD')
    throw new SignatureError('x-amz-content-sha256 is not the hash of the body');

  const [path = '/', query = ''] = request.url.split('?', 2);
  const canonicalUri = path
    .split('/')
    .map((segment) => encodeURIComponent(segment))
    .join('/');
  const canonicalQuery = query
    .split('&')
    .filter(Boolean)
    .map((pair) => pair.split('=', 2).map((part) => encodeURIComponent(decodeURIComponent(part ?? ''))))
    .sort(([a = '', x = ''], [b = '', y = '']) => (a === b ? (x < y ? -1 : 1) : a < b ? -1 : 1))
    .map(([key, value = '']) => `${key}=${value}`)
    .join('&');
  const canonicalHeaders = signedHeaders
    .map((name) => `${name}:${(header(name) ?? '').trim().replace(/\s+/g, ' ')}\n`)
    .join('');
  const canonicalRequest = [
    request.method.toUpperCase(),
    canonicalUri,
    canonicalQuery,
    canonicalHeaders,
    signedHeaderList,
    claimedHash === 'UNSIGNED-PAYLOAD' ? claimedHash : bodyHash,
  ].join('\n');
  const scope = `${day}/${region}/${service}/aws4_request`;
  const stringToSign = ['AWS4-HMAC-SHA256', amzDate, scope, sha256(canonicalRequest)].join('\n');
  let key = hmac(`AWS4${identity.secretAccessKey}`, day!);
  for (const part of [region!, service!, 'aws4_request']) key = hmac(key, part);
  const expected = createHmac('sha256', key).update(stringToSign).digest();
  if (!timingSafeEqual(expected, Buffer.from(signature!, 'hex')))
    throw new SignatureError(
      'the signature does not match the request (wrong secret key or altered request)',
    );
  return identity.arn;
}
