import { systemClock } from '../../../functions/core/clock.ts';
import { createHash, createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { eksToken } from '../../../functions/core/kube/eks-token.ts';

// AWS's documentation example key pair: fixed inputs, never a real credential.
const credentials = {
  accessKeyId: 'AKIAIOSFODNN7EXAMPLE',
  secretAccessKey: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY',
};
const signingTime = new Date('2024-05-17T09:30:05.123Z');
const clock = { ...systemClock, now: () => signingTime };

function decode(token: string): URL {
  return new URL(Buffer.from(token.slice('k8s-aws-v1.'.length), 'base64url').toString('utf8'));
}

/** SigV4 query signing written out from the AWS specification, independent of @smithy/signature-v4. */
function expectedSignature(url: URL, clusterName: string, secretAccessKey: string): string {
  const enc = (s: string) =>
    encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  const params = [...url.searchParams.entries()]
    .filter(([k]) => k !== 'X-Amz-Signature')
    .map(([k, v]) => `${enc(k)}=${enc(v)}`)
    .sort();
  const canonicalRequest = [
    'GET',
    '/',
    params.join('&'),
    `host:${url.hostname}\nx-k8s-aws-id:${clusterName}\n`,
    'host;x-k8s-aws-id',
    createHash('sha256').update('').digest('hex'),
  ].join('\n');
  const amzDate = url.searchParams.get('X-Amz-Date') ?? '';
  const [, scope = ''] = /^[^/]+\/(.*)$/.exec(url.searchParams.get('X-Amz-Credential') ?? '') ?? [];
  const stringToSign = [
    'AWS4-HMAC-SHA256',
    amzDate,
    scope,
    createHash('sha256').update(canonicalRequest).digest('hex'),
  ].join('\n');
  let key: Buffer | string = `AWS4${secretAccessKey}`;
  for (const part of scope.split('/')) key = createHmac('sha256', key).update(part).digest();
  return createHmac('sha256', key).update(stringToSign).digest('hex');
}

describe('eksToken', () => {
  it('is k8s-aws-v1. + unpadded base64url of a presigned regional STS GetCallerIdentity URL', async () => {
    const { token, expiresAt } = await eksToken({
      clusterName: 'prod',
      region: 'eu-west-1',
      credentials,
      clock,
    });

    expect(token.startsWith('k8s-aws-v1.')).toBe(true);
    const encoded = token.slice('k8s-aws-v1.'.length);
    expect(encoded).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(encoded).not.toContain('=');

    const url = decode(token);
    expect(url.protocol).toBe('https:');
    expect(url.host).toBe('sts.eu-west-1.amazonaws.com');
    expect(url.pathname).toBe('/');
    const q = url.searchParams;
    expect(q.get('Action')).toBe('GetCallerIdentity');
    expect(q.get('Version')).toBe('2011-06-15');
    expect(q.get('X-Amz-Algorithm')).toBe('AWS4-HMAC-SHA256');
    expect(q.get('X-Amz-Credential')).toBe('AKIAIOSFODNN7EXAMPLE/20240517/eu-west-1/sts/aws4_request');
    expect(q.get('X-Amz-Date')).toBe('20240517T093005Z');
    expect(q.get('X-Amz-Expires')).toBe('60');
    expect(q.get('X-Amz-SignedHeaders')).toBe('host;x-k8s-aws-id');
    expect(q.get('X-Amz-Signature')).toMatch(/^[0-9a-f]{64}$/);
    expect(q.has('X-Amz-Security-Token')).toBe(false);
    expect([...q.keys()].sort()).toEqual(
      [
        'Action',
        'Version',
        'X-Amz-Algorithm',
        'X-Amz-Credential',
        'X-Amz-Date',
        'X-Amz-Expires',
        'X-Amz-SignedHeaders',
        'X-Amz-Signature',
      ].sort(),
    );
    expect(q.get('X-Amz-Signature')).toBe(expectedSignature(url, 'prod', credentials.secretAccessKey));

    expect(expiresAt.toISOString()).toBe('2024-05-17T09:44:05.123Z');
  });

  it('carries the session token and signs it, accepting a credential provider', async () => {
    const sessionToken = 'FwoGZXIvYXdzEBYaD+session/token==';
    const { token } = await eksToken({
      clusterName: 'prod',
      region: 'ap-northeast-1',
      credentials: async () => ({ ...credentials, sessionToken }),
      clock,
    });
    const url = decode(token);
    expect(url.host).toBe('sts.ap-northeast-1.amazonaws.com');
    expect(url.searchParams.get('X-Amz-Security-Token')).toBe(sessionToken);
    expect(url.searchParams.get('X-Amz-Credential')).toBe(
      'AKIAIOSFODNN7EXAMPLE/20240517/ap-northeast-1/sts/aws4_request',
    );
    expect(url.searchParams.get('X-Amz-Signature')).toBe(
      expectedSignature(url, 'prod', credentials.secretAccessKey),
    );
  });

  it('is deterministic for fixed inputs and bound to the cluster name', async () => {
    const options = { clusterName: 'prod', region: 'eu-west-1', credentials, clock };
    const a = await eksToken(options);
    const b = await eksToken(options);
    const other = await eksToken({ ...options, clusterName: 'staging' });

    expect(b.token).toBe(a.token);
    const signature = (t: string) => decode(t).searchParams.get('X-Amz-Signature');
    expect(signature(other.token)).not.toBe(signature(a.token));
    expect(signature(other.token)).toBe(
      expectedSignature(decode(other.token), 'staging', credentials.secretAccessKey),
    );
  });

  it('expires early when the credentials expire before the token would', async () => {
    const expiration = new Date(signingTime.getTime() + 5 * 60_000);
    const { expiresAt } = await eksToken({
      clusterName: 'prod',
      region: 'eu-west-1',
      credentials: { ...credentials, sessionToken: 't', expiration },
      clock,
    });
    expect(expiresAt).toEqual(expiration);
  });

  it('uses the China partition endpoint in cn- regions', async () => {
    const { token } = await eksToken({ clusterName: 'prod', region: 'cn-north-1', credentials, clock });
    expect(decode(token).host).toBe('sts.cn-north-1.amazonaws.com.cn');
  });
});
