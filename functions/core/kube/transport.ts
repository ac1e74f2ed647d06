import type { KubeConfig } from '@kubernetes/client-node';
import { ApiException } from './client-node.ts';
import * as http from 'node:http';
import * as https from 'node:https';

/** Most connections one client keeps open to the API server (requests beyond wait for a free one). */
export const MAX_CONNECTIONS = 32;
/** An idle kept-alive connection is closed after this long, well before the API server would drop it. */
const IDLE_CONNECTION_MS = 30_000;

export interface KubeRequest {
  readonly method: 'GET' | 'PATCH' | 'DELETE';
  /** Path under the server URL, e.g. `/api/v1/namespaces/ns/configmaps/name`. */
  readonly path: string;
  readonly query?: Readonly<Record<string, string | number | boolean | undefined>>;
  readonly body?: unknown;
  readonly contentType?: string;
  readonly accept?: string;
}

/**
 * HTTP to one API server over kept-alive connections: one TLS handshake per connection instead
 * of one per request (client-node builds a new agent, so a new connection, for every request).
 * Each request carries the headers the KubeConfig gives at that moment (bearer token,
 * impersonation), so a refreshed token is used as soon as the config holds it. Answers are plain
 * JSON; a non-2xx answer rejects with client-node's ApiException, its body the parsed Status.
 */
export class KubeTransport {
  private readonly server: URL;

  /**
   * @param pool kept-alive connections shared with other transports to the same API server (the
   * runs of one warm container); without one, this transport keeps its own and `close` ends them.
   */
  constructor(
    private readonly kubeConfig: KubeConfig,
    private readonly pool?: ConnectionPool,
  ) {
    const cluster = kubeConfig.getCurrentCluster();
    if (!cluster) throw new Error('the cluster connection has no current cluster');
    this.server = new URL(cluster.server);
  }

  async request<T>(req: KubeRequest): Promise<T> {
    const options: https.RequestOptions = {};
    await this.kubeConfig.applyToHTTPSOptions(options);
    const holder = this.pool ?? this.own;
    const agent = (holder.agent ??= this.makeAgent(options));
    const url = new URL(this.server.pathname.replace(/\/$/, '') + req.path, this.server);
    for (const [key, value] of Object.entries(req.query ?? {}))
      if (value !== undefined) url.searchParams.set(key, String(value));
    const body = req.body === undefined ? undefined : Buffer.from(JSON.stringify(req.body));
    const headers: http.OutgoingHttpHeaders = {
      ...(options.headers as http.OutgoingHttpHeaders | undefined),
      accept: req.accept ?? 'application/json',
      ...(options.auth && { authorization: `Basic ${Buffer.from(options.auth).toString('base64')}` }),
      ...(body && { 'content-type': req.contentType ?? 'application/json', 'content-length': body.length }),
    };
    const send = url.protocol === 'http:' ? http.request : https.request;
    return new Promise<T>((resolve, reject) => {
      const request = send(url, { method: req.method, agent, headers }, (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('error', reject);
        response.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          const code = response.statusCode ?? 0;
          if (code >= 200 && code < 300) {
            try {
              resolve((text === '' ? undefined : JSON.parse(text)) as T);
            } catch (error) {
              reject(
                new Error(`${req.method} ${req.path}: the API server's answer is not JSON`, { cause: error }),
              );
            }
            return;
          }
          const status = parseStatus(text);
          reject(
            new ApiException(
              code,
              `HTTP-Code: ${code} Message: ${status.message ?? text.slice(0, 200)}`,
              status,
              response.headers as Record<string, string>,
            ),
          );
        });
      });
      request.on('error', reject);
      request.end(body);
    });
  }

  private readonly own = new ConnectionPool();

  /** Closes this transport's own kept-alive connections (a shared pool stays open); it stays usable. */
  close(): void {
    this.own.agent?.destroy();
    this.own.agent = undefined;
  }

  private makeAgent(options: https.RequestOptions): http.Agent {
    const common = { keepAlive: true, maxSockets: MAX_CONNECTIONS, timeout: IDLE_CONNECTION_MS };
    if (this.server.protocol === 'http:') return new http.Agent(common);
    return new https.Agent({
      ...common,
      ca: options.ca,
      cert: options.cert,
      key: options.key,
      pfx: options.pfx,
      passphrase: options.passphrase,
      servername: options.servername,
      ...(options.rejectUnauthorized !== undefined && { rejectUnauthorized: options.rejectUnauthorized }),
    });
  }
}

/** Kept-alive connections to one API server: the agent, made with the first request's TLS options. */
export class ConnectionPool {
  agent: http.Agent | undefined;
}

function parseStatus(text: string): { message?: string } & Record<string, unknown> {
  try {
    const parsed: unknown = JSON.parse(text);
    if (parsed && typeof parsed === 'object') return parsed as { message?: string };
  } catch {
    // not JSON: the text itself is the message
  }
  return { message: text };
}
