import type { IncomingMessage, ServerResponse } from 'node:http';

/** A request of an AWS JSON 1.1 API: its whole body, the operation its target names, and how to answer. */
export interface JsonRequest {
  readonly body: Buffer;
  /** `GetSecretValue` for `x-amz-target: secretsmanager.GetSecretValue`, if the prefix matches. */
  readonly operation: string | undefined;
  readonly target: string;
  /** The HTTP request line and headers, for stand-ins that verify its signature. */
  readonly http: {
    readonly method: string;
    readonly url: string;
    readonly headers: IncomingMessage['headers'];
  };
  reply(status: number, body: unknown, errorType?: string): void;
}

/** A request listener that reads the body and hands `handle` the request in the AWS JSON 1.1 form. */
export function jsonProtocol(
  targetPrefix: string,
  handle: (request: JsonRequest) => void,
): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const target = String(req.headers['x-amz-target'] ?? '');
      handle({
        body: Buffer.concat(chunks),
        target,
        http: { method: req.method ?? 'GET', url: req.url ?? '/', headers: req.headers },
        operation: target.startsWith(targetPrefix) ? target.slice(targetPrefix.length) : undefined,
        reply(status, body, errorType) {
          res.writeHead(status, {
            'content-type': 'application/x-amz-json-1.1',
            ...(errorType ? { 'x-amzn-errortype': errorType } : {}),
          });
          res.end(JSON.stringify(body));
        },
      });
    });
  };
}
