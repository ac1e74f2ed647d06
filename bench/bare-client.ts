import { readFileSync } from 'node:fs';
import { Agent, request } from 'node:https';
import type { Components } from '../dev/components.ts';
import type { MixObject } from './mix.ts';

/** Resource paths of the mix's kinds, written out: the bare client does no discovery. */
const PLURALS: Record<string, string> = {
  CustomResourceDefinition: 'customresourcedefinitions',
  Namespace: 'namespaces',
  ConfigMap: 'configmaps',
  Service: 'services',
  Deployment: 'deployments',
  Widget: 'widgets',
};

function pathOf(object: MixObject): string {
  const root = object.apiVersion.includes('/') ? `/apis/${object.apiVersion}` : `/api/${object.apiVersion}`;
  const ns = object.metadata.namespace ? `/namespaces/${object.metadata.namespace}` : '';
  return `${root}${ns}/${PLURALS[object.kind]}/${object.metadata.name}`;
}

/**
 * The API server's own limit: the same requests sluice sends, from a bare client (kept-alive
 * connections, `concurrency` in flight, nothing else: no discovery, no inventory, no comparison).
 */
export class BareClient {
  private readonly agent: Agent;

  constructor(
    private readonly components: Components,
    private readonly concurrency: number,
  ) {
    this.agent = new Agent({
      keepAlive: true,
      maxSockets: concurrency,
      ca: readFileSync(components.kube.caFile),
    });
  }

  /** One request; resolves with the answer's status and parsed body. */
  private send(method: string, path: string, body?: unknown): Promise<{ status: number; body: unknown }> {
    const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    const headers: Record<string, string | number> = {
      authorization: `Bearer ${this.components.kube.token}`,
      accept: 'application/json',
    };
    if (payload) {
      headers['content-type'] = method === 'PATCH' ? 'application/apply-patch+yaml' : 'application/json';
      headers['content-length'] = payload.length;
    }
    return new Promise((resolve, reject) => {
      const req = request(
        `${this.components.kube.server}${path}`,
        { method, agent: this.agent, headers },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString();
            resolve({ status: res.statusCode ?? 0, body: text ? (JSON.parse(text) as unknown) : undefined });
          });
        },
      );
      req.on('error', reject);
      req.end(payload);
    });
  }

  private async expectOk(method: string, path: string, body?: unknown): Promise<void> {
    const answer = await this.send(method, path, body);
    if (answer.status >= 300)
      throw new Error(`${method} ${path}: ${answer.status} ${JSON.stringify(answer.body).slice(0, 300)}`);
  }

  /** Server-side apply (or its dry-run) of one object. */
  patch(object: MixObject, dryRun = false): Promise<void> {
    const query = `?fieldManager=bare&force=true${dryRun ? '&dryRun=All' : ''}`;
    return this.expectOk('PATCH', `${pathOf(object)}${query}`, object);
  }

  delete(object: MixObject): Promise<void> {
    return this.expectOk('DELETE', `${pathOf(object)}?propagationPolicy=Background`);
  }

  /** Polls the CRD until it is Established. */
  async waitEstablished(name: string): Promise<void> {
    for (let i = 0; i < 600; i++) {
      const { body } = await this.send(
        'GET',
        `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${name}`,
      );
      const conditions = (
        body as { status?: { conditions?: { type: string; status: string }[] } } | undefined
      )?.status?.conditions;
      if (conditions?.some((c) => c.type === 'Established' && c.status === 'True')) return;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    throw new Error(`CRD ${name} was not Established within 60 s`);
  }

  /** Runs `work` on every object, `concurrency` at a time. */
  async forAll(objects: readonly MixObject[], work: (object: MixObject) => Promise<void>): Promise<void> {
    let next = 0;
    const worker = async () => {
      while (next < objects.length) await work(objects[next++]!);
    };
    await Promise.all(Array.from({ length: this.concurrency }, worker));
  }

  /** Applies (or dry-runs) every object, `concurrency` at a time. */
  patchAll(objects: readonly MixObject[], dryRun = false): Promise<void> {
    return this.forAll(objects, (object) => this.patch(object, dryRun));
  }

  close(): void {
    this.agent.destroy();
  }
}

/**
 * The mix applied by a bare client as sluice stages it: definitions (CRD, namespaces), wait for the
 * CRD, then the rest; with `dryRunFirst`, each stage dry-run before it is applied (sluice's request
 * pattern). Returns the wall time in ms.
 */
export async function bareApplyMix(
  components: Components,
  objects: readonly MixObject[],
  crdName: string,
  concurrency: number,
  dryRunFirst: boolean,
): Promise<number> {
  const client = new BareClient(components, concurrency);
  const isDefinition = (o: MixObject) => o.kind === 'CustomResourceDefinition' || o.kind === 'Namespace';
  try {
    const started = performance.now();
    for (const [stage, wait] of [
      [objects.filter(isDefinition), true],
      [objects.filter((o) => !isDefinition(o)), false],
    ] as const) {
      if (dryRunFirst) await client.patchAll(stage, true);
      await client.patchAll(stage);
      if (wait) await client.waitEstablished(crdName);
    }
    return performance.now() - started;
  } finally {
    client.close();
  }
}
