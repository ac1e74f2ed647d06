// A stand-in for Lambda function URLs with AWS_IAM auth, in front of the real gate handler: it
// checks each request's SigV4 signature itself (written from the AWS specification, not with the
// signer the CLI uses), then hands the handler the event and context Lambda would.
import { createHash, createHmac, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { GateDeps } from '../../functions/core/gates/requests.ts';
import { gateHandler } from '../../functions/gate/handler.ts';

/** A principal the stand-in knows: the key pair it signs with and the ARN IAM would verify. */
export interface TestPrincipal {
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
  readonly arn: string;
}

export const REGION = 'eu-west-1';
const ACCOUNT = '123456789012';
const MAX_SKEW_MS = 5 * 60_000;

export interface FunctionUrls {
  /** The entry URL of an alias, e.g. `open_sre-approval`. */
  url(alias: string): string;
  /** How many requests reached the handler (a refused signature never does). */
  readonly invocations: number;
  stop(): Promise<void>;
}

export async function startFunctionUrls(
  principals: readonly TestPrincipal[],
  deps: () => GateDeps,
): Promise<FunctionUrls> {
  const handler = gateHandler(deps);
  let invocations = 0;
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const principal = verifySignature(request, body, principals);
      if (!principal) {
        response.writeHead(403, { 'content-type': 'application/json' }).end('{"Message":"Forbidden"}');
        return;
      }
      const path = request.url ?? '/';
      const alias = path.split('/')[1] ?? '';
      invocations++;
      handler(functionUrlEvent(request, body, principal), {
        invokedFunctionArn: `arn:aws:lambda:${REGION}:${ACCOUNT}:function:sluice-gate:${alias}`,
      })
        .then((answer) => {
          const structured = answer as {
            statusCode: number;
            headers?: Record<string, string>;
            body?: string;
          };
          response.writeHead(structured.statusCode, structured.headers).end(structured.body ?? '');
        })
        .catch((error: unknown) => {
          // Lambda answers an unhandled function error with 502.
          response.writeHead(502).end(JSON.stringify({ Message: String(error) }));
        });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: (alias) => `http://127.0.0.1:${port}/${alias}/`,
    get invocations() {
      return invocations;
    },
    stop: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

const sha256 = (data: string) => createHash('sha256').update(data).digest('hex');
const hmac = (key: Buffer | string, data: string) => createHmac('sha256', key).update(data).digest();

/** The principal whose key signed the request, or undefined when the signature does not hold. */
function verifySignature(
  request: IncomingMessage,
  body: string,
  principals: readonly TestPrincipal[],
): TestPrincipal | undefined {
  const authorization = request.headers.authorization ?? '';
  const match =
    /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, SignedHeaders=([^,]+), Signature=([0-9a-f]{64})$/.exec(
      authorization,
    );
  if (!match) return undefined;
  const [, accessKeyId, day, region, service, signedHeaders, signature] = match;
  const principal = principals.find((p) => p.accessKeyId === accessKeyId);
  const amzDate = String(request.headers['x-amz-date'] ?? '');
  const signedAt = Date.parse(
    amzDate.replace(/^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/, '$1-$2-$3T$4:$5:$6Z'),
  );
  if (!principal || service !== 'lambda' || region !== REGION || !amzDate.startsWith(day!)) return undefined;
  if (!(Math.abs(Date.now() - signedAt) <= MAX_SKEW_MS)) return undefined;
  const names = signedHeaders!.split(';');
  if (!names.includes('host') || !names.includes('x-amz-date')) return undefined;
  const canonicalHeaders = names
    .map(
      (name) =>
        `${name}:${String(request.headers[name] ?? '')
          .trim()
          .replace(/\s+/g, ' ')}\n`,
    )
    .join('');
  const path = (request.url ?? '/').split('?')[0]!;
  const canonicalUri = path
    .split('/')
    .map((segment) => encodeURIComponent(encodeURIComponent(decodeURIComponent(segment))))
    .join('/');
  const canonicalRequest = [
    request.method,
    canonicalUri,
    '',
    canonicalHeaders,
    signedHeaders,
    sha256(body),
  ].join('\n');
  const scope = `${day}/${region}/${service}/aws4_request`;
  const stringToSign = ['AWS4-HMAC-SHA256', amzDate, scope, sha256(canonicalRequest)].join('\n');
  let key = hmac(`AWS4${principal.secretAccessKey}`, day!);
  for (const part of [region!, service!, 'aws4_request']) key = hmac(key, part);
  const expected = createHmac('sha256', key).update(stringToSign).digest('hex');
  return expected === signature ? principal : undefined;
}

/** The payload format 2.0 event Lambda builds for a function URL request with AWS_IAM auth. */
function functionUrlEvent(request: IncomingMessage, body: string, principal: TestPrincipal) {
  const path = (request.url ?? '/').split('?')[0]!;
  const now = new Date();
  const [account] = /::(\d{12}):/.exec(principal.arn)?.slice(1) ?? [ACCOUNT];
  return {
    version: '2.0',
    routeKey: '$default',
    rawPath: path,
    rawQueryString: '',
    headers: Object.fromEntries(Object.entries(request.headers).map(([k, v]) => [k, String(v)])),
    requestContext: {
      accountId: ACCOUNT,
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
