// The event Lambda hands a function behind a function URL with AWS_IAM auth (payload format 2.0),
// once the request's signature held for `principal`.
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { TestIdentity } from '../sigv4-identity.ts';

/** The payload format 2.0 event Lambda builds for a function URL request with AWS_IAM auth. */
export function functionUrlEvent(
  request: IncomingMessage,
  body: string,
  principal: TestIdentity,
  functionAccount: string,
) {
  const path = (request.url ?? '/').split('?')[0]!;
  const now = new Date();
  const [account] = /::(\d{12}):/.exec(principal.arn)?.slice(1) ?? [functionAccount];
  return {
    version: '2.0',
    routeKey: '$default',
    rawPath: path,
    rawQueryString: '',
    headers: Object.fromEntries(Object.entries(request.headers).map(([k, v]) => [k, String(v)])),
    requestContext: {
      accountId: functionAccount,
      apiId: 'localurl',
      authorizer: {
        iam: {
          accessKey: principal.accessKeyId,
          accountId: account,
          callerId: `AROA:${principal.arn.split('/').at(-1)}`,
          cognitoIdentity: null,
          principalOrgId: null,
          userArn: principal.arn,
          userId: 'AROAEXAMPLE',
        },
      },
      domainName: String(request.headers.host),
      domainPrefix: 'localurl',
      http: {
        method: request.method ?? 'POST',
        path,
        protocol: 'HTTP/1.1',
        sourceIp: '127.0.0.1',
        userAgent: String(request.headers['user-agent'] ?? ''),
      },
      requestId: randomUUID(),
      routeKey: '$default',
      stage: '$default',
      time: now.toUTCString(),
      timeEpoch: now.getTime(),
    },
    body,
    isBase64Encoded: false,
  };
}
