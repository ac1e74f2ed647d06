import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { TEST_IDENTITIES, verifySigV4, type TestIdentity } from './sigv4-identity.ts';

/** A request for STS's query API: `Action=…` in the query string or a form body, no JSON target. */
export function isStsRequest(request: IncomingMessage): boolean {
  return request.headers['x-amz-target'] === undefined && /[?&]Action=/.test(request.url ?? '');
}

/**
 * A stand-in for STS `GetCallerIdentity` (query API, GET or POST), answering only a request whose
 * Signature Version 4 holds for one of the test identities, in the header or presigned form, with
 * the ARN AWS would return. JSON when asked with `Accept: application/json` (as
 * aws-iam-authenticator asks), XML otherwise. It cannot evaluate IAM policies, SCPs or real key
 * material: it knows only TEST_IDENTITIES.
 */
export function handleStsRequest(
  request: IncomingMessage,
  response: ServerResponse,
  identities: readonly TestIdentity[] = Object.values(TEST_IDENTITIES),
): void {
  const chunks: Buffer[] = [];
  request.on('data', (chunk: Buffer) => chunks.push(chunk));
  request.on('end', () => {
    const body = Buffer.concat(chunks).toString('utf8');
    const json = String(request.headers.accept ?? '').includes('application/json');
    const url = request.url ?? '/';
    const action = new URLSearchParams(url.split('?')[1] ?? body).get('Action');
    const requestId = randomUUID();
    const fail = (status: number, code: string, message: string) => {
      const error = { Type: 'Sender', Code: code, Message: message };
      response
        .writeHead(status, { 'content-type': json ? 'application/json' : 'text/xml' })
        .end(
          json
            ? JSON.stringify({ Error: error, RequestId: requestId })
            : `<ErrorResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/"><Error><Type>Sender</Type><Code>${code}</Code><Message>${escapeXml(message)}</Message></Error><RequestId>${requestId}</RequestId></ErrorResponse>`,
        );
    };
    if (action !== 'GetCallerIdentity')
      return fail(400, 'InvalidAction', `the STS stand-in answers GetCallerIdentity only, not ${action}`);
    const verified = verifySigV4(
      { method: request.method ?? 'GET', url, headers: request.headers, body },
      identities,
      new Date(),
    );
    if ('error' in verified) return fail(403, verified.code, verified.error);
    if (verified.service !== 'sts')
      return fail(403, 'SignatureDoesNotMatch', `signed for ${verified.service}, not sts`);
    const { arn } = verified.identity;
    const account = /::(\d{12}):/.exec(arn)![1]!;
    const userId = `${verified.identity.accessKeyId.replace(/^ASIA/, 'AROA')}${arn.includes(':assumed-role/') ? `:${arn.split('/').at(-1)}` : ''}`;
    const result = { Arn: arn, UserId: userId, Account: account };
    response.writeHead(200, { 'content-type': json ? 'application/json' : 'text/xml' }).end(
      json
        ? JSON.stringify({
            GetCallerIdentityResponse: {
              GetCallerIdentityResult: result,
              ResponseMetadata: { RequestId: requestId },
            },
          })
        : `<GetCallerIdentityResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/"><GetCallerIdentityResult><Arn>${escapeXml(arn)}</Arn><UserId>${escapeXml(userId)}</UserId><Account>${account}</Account></GetCallerIdentityResult><ResponseMetadata><RequestId>${requestId}</RequestId></ResponseMetadata></GetCallerIdentityResponse>`,
    );
  });
}

const escapeXml = (text: string) => text.replace(/[<>&'"]/g, (c) => `&#${c.charCodeAt(0)};`);
