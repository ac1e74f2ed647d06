// A stand-in for Lambda function URLs with AWS_IAM auth, in front of the real gate handler: it
// checks each request's SigV4 signature itself (written from the AWS specification, not with the
// signer the CLI uses), then hands the handler the event and context Lambda would.
import { verifySigV4, type TestIdentity } from '../../dev/sigv4-identity.ts';
import { functionUrlEvent } from '../../dev/local-stack/function-url-event.ts';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { GateDeps } from '../../functions/core/gates/requests.ts';
import { gateHandler } from '../../functions/gate/handler.ts';

/** A principal the stand-in knows: the key pair it signs with and the ARN IAM would verify. */
export type TestPrincipal = TestIdentity;

export const REGION = 'eu-west-1';
const ACCOUNT = '123456789012';

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
      handler(functionUrlEvent(request, body, principal, ACCOUNT), {
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

/** The principal whose key signed the request (for the lambda service), or undefined when the signature does not hold. */
function verifySignature(
  request: IncomingMessage,
  body: string,
  principals: readonly TestIdentity[],
): TestIdentity | undefined {
  const verified = verifySigV4(
    { method: request.method ?? 'POST', url: request.url ?? '/', headers: request.headers, body },
    principals,
    new Date(),
  );
  return 'identity' in verified && verified.service === 'lambda' && verified.region === REGION
    ? verified.identity
    : undefined;
}
