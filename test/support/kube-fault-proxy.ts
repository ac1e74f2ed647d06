// A TLS reverse proxy in front of the real kube-apiserver that counts writes and injects faults:
// it can "kill" the client after N writes (every later request fails, as if the Lambda died),
// answer 5xx, hang up, or forward a write and lose its answer.
import { KubeConfig } from '@kubernetes/client-node';
import { readFileSync } from 'node:fs';
import { Agent, createServer, request, type Server } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { kubeConfigFor } from '../../functions/core/kube/connection.ts';
import type { Components } from '../../dev/components.ts';

/** How a request the proxy refuses fails. */
export type KubeFault =
  /** 500 with a Kubernetes Status body, not forwarded. */
  | 'error'
  /** The connection is reset without an answer, not forwarded. */
  | 'hangup'
  /** Held for a while, then reset: what a client sees at a timeout. */
  | 'timeout'
  /** Forwarded (the API server acts on it), then the answer is lost. */
  | 'lost-answer';

export interface FaultPlan {
  /** After this many writes went through, every request fails with `killMode` (the run is dead). */
  readonly killAfterWrites?: number;
  readonly killMode?: Exclude<KubeFault, 'lost-answer'>;
  /** The write that reaches `killAfterWrites` is applied but its answer is lost. */
  readonly killLosesLastAnswer?: boolean;
  /** Share (0-1) of requests that fail with a random fault, before any kill. */
  readonly faultRate?: number;
  /** Which faults `faultRate` picks from. @default all four */
  readonly faults?: readonly KubeFault[];
  /** Random numbers in [0, 1) for faultRate; seeded by the caller for reproducible runs. */
  readonly random?: () => number;
  /** Called before a request is forwarded; it may hold the request by not resolving yet. */
  readonly beforeForward?: (request: { method: string; url: string; write: boolean }) => Promise<void>;
}

export interface KubeFaultProxy {
  /** `https://127.0.0.1:<port>`, serving the API server's own certificate. */
  readonly server: string;
  /** A client configuration through the proxy, with the admin token. */
  kubeConfig(): KubeConfig;
  /** Replaces the fault plan and resets the counters. */
  plan(plan: FaultPlan): void;
  /** Writes (POST, PUT, PATCH, DELETE without dryRun) forwarded since the last plan(). */
  readonly writes: number;
  /** Requests failed on purpose since the last plan(). */
  readonly injected: number;
  /** Whether the kill point was reached. */
  readonly killed: boolean;
  close(): Promise<void>;
}

const WRITE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
const TIMEOUT_HOLD_MS = 150;

export function isWrite(method: string, url: string): boolean {
  return WRITE_METHODS.has(method) && !/[?&]dryRun=/.test(url);
}

export async function startKubeFaultProxy(bed: Components): Promise<KubeFaultProxy> {
  const pki = join(bed.dir, 'pki');
  const ca = Buffer.from(bed.kube.caData, 'base64');
  const upstream = new URL(bed.kube.server);
  const agent = new Agent({ ca, keepAlive: true, maxSockets: 64 });
  let plan: FaultPlan = {};
  let writes = 0;
  let injected = 0;
  let killed = false;

  const fail = (res: ServerResponse, fault: Exclude<KubeFault, 'lost-answer'>) => {
    injected++;
    if (fault === 'error') {
      const body = JSON.stringify({
        kind: 'Status',
        apiVersion: 'v1',
        status: 'Failure',
        message: 'injected fault: the API server is unavailable',
        reason: 'InternalError',
        code: 500,
      });
      res.writeHead(500, { 'content-type': 'application/json' }).end(body);
    } else if (fault === 'hangup') {
      res.socket?.destroy();
    } else {
      setTimeout(() => res.socket?.destroy(), TIMEOUT_HOLD_MS);
    }
  };

  const forward = (req: IncomingMessage, res: ServerResponse, body: Buffer, loseAnswer: boolean) => {
    const upstreamRequest = request(
      {
        host: upstream.hostname,
        port: upstream.port,
        method: req.method,
        path: req.url,
        headers: { ...req.headers, host: upstream.host },
        agent,
      },
      (answer) => {
        if (loseAnswer) {
          answer.resume();
          answer.on('end', () => res.socket?.destroy());
          return;
        }
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstreamRequest.on('error', () => res.socket?.destroy());
    upstreamRequest.end(body);
  };

  const handle = async (req: IncomingMessage, res: ServerResponse, body: Buffer) => {
    const method = req.method ?? 'GET';
    const url = req.url ?? '/';
    const write = isWrite(method, url);
    if (killed) return fail(res, plan.killMode ?? 'hangup');
    if (plan.faultRate && (plan.random ?? Math.random)() < plan.faultRate) {
      const faults = plan.faults ?? ['error', 'hangup', 'timeout', 'lost-answer'];
      const fault = faults[Math.floor((plan.random ?? Math.random)() * faults.length)]!;
      if (fault !== 'lost-answer') return fail(res, fault);
      if (write) {
        writes++;
        injected++;
        return forward(req, res, body, true);
      }
      return fail(res, 'hangup');
    }
    await plan.beforeForward?.({ method, url, write });
    let loseAnswer = false;
    if (write) {
      if (plan.killAfterWrites !== undefined && writes >= plan.killAfterWrites) {
        killed = true;
        return fail(res, plan.killMode ?? 'hangup');
      }
      writes++;
      if (plan.killAfterWrites !== undefined && writes >= plan.killAfterWrites) {
        killed = true;
        loseAnswer = plan.killLosesLastAnswer ?? false;
      }
    }
    forward(req, res, body, loseAnswer);
  };

  const server: Server = createServer(
    { cert: readFileSync(join(pki, 'apiserver.crt')), key: readFileSync(join(pki, 'apiserver.key')) },
    (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        handle(req, res, Buffer.concat(chunks)).catch(() => res.socket?.destroy());
      });
    },
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    server: address,
    kubeConfig: () => kubeConfigFor({ server: address, caData: bed.kube.caData, token: bed.kube.token }),
    plan(next) {
      plan = next;
      writes = 0;
      injected = 0;
      killed = false;
    },
    get writes() {
      return writes;
    },
    get injected() {
      return injected;
    },
    get killed() {
      return killed;
    },
    close: () =>
      new Promise<void>((resolve) => {
        agent.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
