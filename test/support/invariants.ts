// The promises of docs/security.md checked directly, after every sluice call of the invariant soak
// (invariant-scenario.ts), whatever the artifact was:
//   owns-deletes: the API server's audit log shows no delete by sluice of an object that was not
//     labelled for that delivery, and no update of one another registered delivery owned without
//     `sluice.io/takeover-from: <it>` in the artifact (labels from a snapshot before each call);
//   no-leak: the canary plaintext (PLAINTEXT_MARKER, in every value of the SOPS fixtures, and its
//     base64) is in no DynamoDB item, event, log line, result, error, diff, CLI output, and no
//     object of any served kind but Secrets;
//   no-outbound: the loopback trap standing for "the internet" accepted no connection;
//   bounded-memory: the process tree (this process and its children, kustomize) grew by at most
//     MEMORY_LIMIT_MIB over the call; a child past it is killed (by its pid) so the soak survives.
// No vitest imports: the soak runs it under plain tsx.
import { ScanCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { execFile } from 'node:child_process';
import { closeSync, openSync, readdirSync, readFileSync, readSync, statSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { promisify } from 'node:util';
import { PLAINTEXT_MARKER } from '../fixtures/sops/plaintext.ts';

const exec = promisify(execFile);

export type InvariantName = 'owns-deletes' | 'no-leak' | 'no-outbound' | 'bounded-memory';

export interface Violation {
  readonly invariant: InvariantName;
  readonly detail: string;
}

/** Growth of the process tree's resident memory a sluice call may cause: half the reconcile function's 1024 MB default. */
export const MEMORY_LIMIT_MIB = 512;

/** The canary and its base64 at the three alignments (edge characters dropped). */
export const CANARIES: readonly string[] = [
  PLAINTEXT_MARKER,
  ...[0, 1, 2].map((shift) => {
    const encoded = Buffer.from(`${'x'.repeat(shift)}${PLAINTEXT_MARKER}`).toString('base64');
    const start = Math.ceil((shift * 4) / 3) + 1;
    return encoded.slice(start, start + 16);
  }),
];

/** Where in `text` a canary appears, as a short excerpt; undefined when nowhere. */
export function leakIn(text: string): string | undefined {
  for (const canary of CANARIES) {
    const at = text.indexOf(canary);
    if (at >= 0) return `…${text.slice(Math.max(0, at - 80), at + 60)}…`;
  }
  return undefined;
}

// ---- no-outbound -------------------------------------------------------------------------------

export interface Trap {
  /** host:port */
  readonly address: string;
  /** Connections accepted since the start (each one is a request to "the internet"). */
  connections(): number;
  close(): Promise<void>;
}

/** A TCP server on 127.0.0.1 counting connections (HTTP, TLS or git alike); it answers nothing. */
export async function startTrap(): Promise<Trap> {
  let count = 0;
  const server: Server = createServer((socket) => {
    count++;
    socket.destroy();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  return {
    address: `127.0.0.1:${port}`,
    connections: () => count,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

// ---- bounded-memory ----------------------------------------------------------------------------

const PAGE_KIB = 4;
function rssKib(pid: number): number {
  try {
    const statm = readFileSync(`/proc/${pid}/statm`, 'utf8').split(' ');
    return Number(statm[1]) * PAGE_KIB;
  } catch {
    return 0;
  }
}
/** Descendants of `root` from /proc (pid → ppid). */
function descendants(root: number): number[] {
  const parent = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      parent.set(Number(entry), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      // gone meanwhile
    }
  }
  const found: number[] = [];
  const walk = (pid: number) => {
    for (const [child, ppid] of parent)
      if (ppid === pid) {
        found.push(child);
        walk(child);
      }
  };
  walk(root);
  return found;
}

export interface MemoryWatch {
  /** Peak growth of the tree's RSS over the baseline, MiB. */
  stop(): { peakMib: number; killed: string[] };
}

/**
 * Samples this process and the children it starts meanwhile (kustomize, kubectl; not the
 * components already running as its children) every 100 ms; kills such a child when the tree
 * passes the limit, so one exhausting build cannot take the machine with it.
 */
export function watchMemory(): MemoryWatch {
  const base = rssKib(process.pid);
  const running = new Set(descendants(process.pid));
  let peak = 0;
  const killed: string[] = [];
  const sample = () => {
    const children = descendants(process.pid).filter((pid) => !running.has(pid));
    const tree = rssKib(process.pid) - base + children.reduce((sum, pid) => sum + rssKib(pid), 0);
    peak = Math.max(peak, tree);
    if (tree > MEMORY_LIMIT_MIB * 1024)
      for (const pid of children) {
        const kib = rssKib(pid);
        if (kib < 64 * 1024) continue;
        let command = '';
        try {
          command = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ').slice(0, 120);
          process.kill(pid, 'SIGKILL');
          killed.push(`${command.trim()} (${Math.round(kib / 1024)} MiB)`);
        } catch {
          // gone meanwhile
        }
      }
  };
  const timer = setInterval(sample, 100);
  return {
    stop: () => {
      clearInterval(timer);
      sample();
      return { peakMib: Math.round(peak / 1024), killed };
    },
  };
}

// ---- owns-deletes ------------------------------------------------------------------------------

interface AuditEvent {
  readonly verb: string;
  readonly requestURI: string;
  readonly objectRef?: {
    readonly resource?: string;
    readonly namespace?: string;
    readonly name?: string;
    readonly subresource?: string;
  };
  readonly requestReceivedTimestamp: string;
  readonly responseStatus?: { readonly code?: number };
}

/** An object's key as the audit log names it: `<resource>/<namespace>/<name>`. */
export const auditKey = (resource: string, namespace: string | undefined, name: string) =>
  `${resource}/${namespace ?? ''}/${name}`;

/** Reads the audit log from where the last read stopped. */
export class AuditReader {
  private offset: number;
  constructor(private readonly path: string) {
    this.offset = statSync(path).size;
  }
  /** The complete lines written since the last call. */
  read(): AuditEvent[] {
    const size = statSync(this.path).size;
    if (size <= this.offset) return [];
    const buffer = Buffer.alloc(size - this.offset);
    const fd = openSync(this.path, 'r');
    try {
      readSync(fd, buffer, 0, buffer.length, this.offset);
    } finally {
      closeSync(fd);
    }
    const text = buffer.toString('utf8');
    const end = text.lastIndexOf('\n') + 1;
    this.offset += Buffer.byteLength(text.slice(0, end));
    return text
      .slice(0, end)
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as AuditEvent);
  }
}

export interface Snapshot {
  /** Owner label (or '' when unlabelled) of every object in scope before the call, by audit key. */
  readonly owner: ReadonlyMap<string, string>;
}

/**
 * The writes of one sluice call (every audited update, patch or delete received in its time window
 * that `inScope` accepts: the scenario's own namespaces and cluster-scoped names), judged against
 * the labels before it. `delivery` made the call; `registered` are the deliveries registered then;
 * `takeover` maps an audit key to the delivery the artifact's object names in `sluice.io/takeover-from`.
 */
export function ownershipViolations(
  events: readonly AuditEvent[],
  window: { readonly from: string; readonly to: string },
  inScope: (ref: NonNullable<AuditEvent['objectRef']>) => boolean,
  before: Snapshot,
  delivery: string,
  registered: readonly string[],
  takeover: ReadonlyMap<string, string>,
): Violation[] {
  const violations: Violation[] = [];
  for (const e of events) {
    if (!['update', 'patch', 'delete', 'deletecollection'].includes(e.verb)) continue;
    if (e.requestURI.includes('dryRun') || !e.objectRef || !inScope(e.objectRef)) continue;
    if (e.requestReceivedTimestamp < window.from || e.requestReceivedTimestamp > window.to) continue;
    if ((e.responseStatus?.code ?? 200) >= 400) continue;
    const ref = e.objectRef;
    const key = auditKey(ref.resource ?? '', ref.namespace, ref.name ?? '');
    const owner = before.owner.get(key);
    if (owner === undefined) continue; // made by this call
    const what = `${e.verb} ${e.requestURI.split('?')[0]} by ${delivery}`;
    if (e.verb.startsWith('delete')) {
      if (owner !== delivery)
        violations.push({
          invariant: 'owns-deletes',
          detail: `${what}: it was labelled ${owner ? `for ${owner}` : 'for no delivery'}`,
        });
    } else if (
      owner !== '' &&
      owner !== delivery &&
      registered.includes(owner) &&
      takeover.get(key) !== owner
    )
      violations.push({
        invariant: 'owns-deletes',
        detail: `${what}: it was ${owner}'s (registered) and the artifact did not say sluice.io/takeover-from: ${owner}`,
      });
  }
  return violations;
}

// ---- no-leak -----------------------------------------------------------------------------------

/** Every DynamoDB item whose text names one of `names`, as JSON lines. */
export async function tableItems(
  db: DynamoDBClient,
  table: string,
  names: readonly string[],
): Promise<string[]> {
  const found: string[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const page = await db.send(new ScanCommand({ TableName: table, ExclusiveStartKey: start as never }));
    for (const item of page.Items ?? []) {
      const text = JSON.stringify(item);
      if (names.some((n) => text.includes(n))) found.push(text);
    }
    start = page.LastEvaluatedKey;
  } while (start);
  return found;
}

/**
 * Every object of every served, listable kind but Secrets (and Events, which name nothing of
 * ours) in `namespaces`, and the cluster-scoped ones whose name starts with `prefix`: JSON texts.
 */
export async function clusterObjects(
  kubectl: string,
  kubeconfig: string,
  namespaces: readonly string[],
  prefix: string,
): Promise<string[]> {
  const env = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp' };
  const run = async (args: string[]) =>
    (await exec(kubectl, ['--kubeconfig', kubeconfig, ...args], { env, maxBuffer: 256 << 20 })).stdout;
  const kinds = async (namespaced: boolean) =>
    (await run(['api-resources', '--verbs=list', `--namespaced=${namespaced}`, '-o', 'name']))
      .split('\n')
      .filter((k) => k && k !== 'secrets' && !k.startsWith('events'));
  const texts: string[] = [];
  const namespacedKinds = (await kinds(true)).join(',');
  for (const ns of namespaces) {
    const printed = await run(['get', namespacedKinds, '-n', ns, '-o', 'json', '--ignore-not-found']);
    // Nothing printed: the namespace does not exist.
    const list = (printed.trim() ? JSON.parse(printed) : { items: [] }) as { items: unknown[] };
    for (const item of list.items) texts.push(JSON.stringify(item));
  }
  const list = JSON.parse(await run(['get', (await kinds(false)).join(','), '-o', 'json'])) as {
    items: { metadata?: { name?: string } }[];
  };
  for (const item of list.items)
    if (item.metadata?.name?.startsWith(prefix) || item.metadata?.name?.includes(`.${prefix}`))
      texts.push(JSON.stringify(item));
  return texts;
}

/** no-leak violations in `texts` (what → text). */
export function leaks(texts: Readonly<Record<string, readonly string[]>>): Violation[] {
  const violations: Violation[] = [];
  for (const [what, list] of Object.entries(texts))
    for (const text of list) {
      const excerpt = leakIn(text);
      if (excerpt) {
        violations.push({ invariant: 'no-leak', detail: `${what}: ${excerpt}` });
        break;
      }
    }
  return violations;
}
