// A plain-HTTP reverse proxy in front of the real registry that can rewrite, cut short or refuse
// its answers: a registry that lies, breaks or fails, for the hostile-artifact tests.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Components } from '../../dev/components.ts';

export interface RegistryRequest {
  readonly method: string;
  /** e.g. `/v2/app/manifests/main` */
  readonly path: string;
}

export interface RegistryAnswer {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: Buffer;
  /** Sends `content-length` of this many bytes, then the body, then hangs up if the body is shorter. */
  readonly declaredLength?: number;
}

/** What the proxy sends instead of the registry's answer; undefined passes it on unchanged. */
export type Tamper = (
  request: RegistryRequest,
  answer: RegistryAnswer,
) => RegistryAnswer | 'hangup' | undefined;

export interface RegistryFaultProxy {
  /** `127.0.0.1:<port>`, for `oci://<host>/<repository>` (loopback registries are reached over http). */
  readonly host: string;
  tamper(tamper: Tamper | undefined): void;
  /** Awaited before a request is forwarded: something else happens "meanwhile" (a push). */
  beforeForward(hook: ((request: RegistryRequest) => Promise<void>) | undefined): void;
  close(): Promise<void>;
}

const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'transfer-encoding',
  'content-length',
  'content-encoding',
]);

export async function startRegistryFaultProxy(bed: Components): Promise<RegistryFaultProxy> {
  let tamper: Tamper | undefined;
  let before: ((request: RegistryRequest) => Promise<void>) | undefined;

  const handle = async (req: IncomingMessage, res: ServerResponse, body: Buffer) => {
    const method = req.method ?? 'GET';
    const path = req.url ?? '/';
    await before?.({ method, path });
    const headers: Record<string, string> = {};
    for (const [key, value] of Object.entries(req.headers)) {
      if (typeof value === 'string' && !HOP_BY_HOP.has(key) && key !== 'host') headers[key] = value;
    }
    const response = await fetch(`http://${bed.registry.host}${path}`, {
      method,
      headers,
      body: method === 'GET' || method === 'HEAD' ? undefined : body,
      redirect: 'manual',
    });
    const answer: RegistryAnswer = {
      status: response.status,
      headers: Object.fromEntries(
        [...response.headers.entries()].filter(([key]) => !HOP_BY_HOP.has(key.toLowerCase())),
      ),
      body: Buffer.from(await response.arrayBuffer()),
    };
    const sent = tamper?.({ method, path }, answer) ?? answer;
    if (sent === 'hangup') return res.socket?.destroy();
    const length =
      sent.declaredLength ??
      (method === 'HEAD' ? Number(response.headers.get('content-length') ?? 0) : sent.body.length);
    res.writeHead(sent.status, { ...sent.headers, 'content-length': String(length) });
    if (method === 'HEAD') return res.end();
    if (sent.body.length < length) {
      res.write(sent.body, () => setTimeout(() => res.socket?.destroy(), 20));
      return;
    }
    res.end(sent.body);
  };

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      handle(req, res, Buffer.concat(chunks)).catch(() => res.socket?.destroy());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    host: `127.0.0.1:${(server.address() as AddressInfo).port}`,
    tamper(next) {
      tamper = next;
    },
    beforeForward(hook) {
      before = hook;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
