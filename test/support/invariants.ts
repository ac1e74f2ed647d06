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
//     MEMORY_LIMIT_MIB over the call; a child past it is killed (by its pid) so the soak survives;
//   bounded-time: each call ends within CALL_DEADLINE_S (measured; a call still running then is
//     abandoned and reported, not waited for), and the event loop never stalls longer than
//     STALL_LIMIT_MS during it (a synchronous ReDoS, say); a stall so long that nothing in this
//     process can report it is reported by a watchdog thread, with the seed, before it ends the
//     process (startWatchdog);
//   cli-works: `sluice diff` and `sluice status` run (a failure that is not the revision's own,
//     kubectl not found say, is a violation: a CLI step that cannot run checks nothing).
// No vitest imports: the soak runs it under plain tsx.
import { ScanCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { execFile } from 'node:child_process';
import { closeSync, openSync, readSync, statSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { performance } from 'node:perf_hooks';
import { Worker } from 'node:worker_threads';
import { promisify } from 'node:util';
import { PLAINTEXT_MARKER } from '../fixtures/sops/plaintext.ts';

const exec = promisify(execFile);

export type InvariantName =
  'owns-deletes' | 'no-leak' | 'no-outbound' | 'bounded-memory' | 'bounded-time' | 'cli-works';

export interface Violation {
  readonly invariant: InvariantName;
  readonly detail: string;
}

/** Growth of the process tree's resident memory a sluice call may cause: half the reconcile function's 1024 MB default. */
export const MEMORY_LIMIT_MIB = 512;

/** `text`'s base64 at the three alignments (edge characters dropped). */
const base64Forms = (text: string) =>
  [0, 1, 2].map((shift) => {
    const encoded = Buffer.from(`${'x'.repeat(shift)}${text}`).toString('base64');
    const start = Math.ceil((shift * 4) / 3) + 1;
    return encoded.slice(start, start + 16);
  });

/**
 * The canary, its base64 at the three alignments, and the base64 of its base64 (a Secret's `data`
 * value, which is base64 already, wrapped once more; the soak's values start with the canary).
 */
export const CANARIES: readonly string[] = [
  PLAINTEXT_MARKER,
  ...base64Forms(PLAINTEXT_MARKER),
  ...base64Forms(Buffer.from(PLAINTEXT_MARKER).toString('base64').slice(0, 24)),
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

/**
 * The sampler, in a thread of its own: a blow-up in this process is synchronous (a document
 * expanded, a string built) and would stop a sampler on the event loop until it is over.
 * It reads /proc every 100 ms: this process's RSS over the baseline plus the children started
 * since (kustomize, kubectl; not the components already running as children), keeps the peak in
 * shared memory, and kills such a child (by pid) when the tree passes the limit, so one
 * exhausting build cannot take the machine with it. When this process's own growth passes the
 * limit, nothing on its event loop can report it (the expansion holds the loop until it is over,
 * or until the machine runs out): the thread prints the violation with the context (seed and
 * step) straight to fd 2 and ends the process, as the watchdog does for a stall.
 */
const MEMORY_SAMPLER = `
const { readFileSync, readdirSync, writeSync } = require('node:fs');
const { workerData, parentPort } = require('node:worker_threads');
const { pid, limitKib, context } = workerData;
const shared = new Int32Array(workerData.peak);
const rssKib = (p) => { try { return Number(readFileSync('/proc/' + p + '/statm', 'utf8').split(' ')[1]) * 4; } catch { return 0; } };
const descendants = (root) => {
  const parent = new Map();
  for (const entry of readdirSync('/proc')) {
    if (!/^\\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync('/proc/' + entry + '/stat', 'utf8');
      parent.set(Number(entry), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {}
  }
  const found = [];
  const walk = (p) => { for (const [child, ppid] of parent) if (ppid === p) { found.push(child); walk(child); } };
  walk(root);
  return found;
};
const base = rssKib(pid);
const running = new Set(descendants(pid));
const killed = [];
const sample = () => {
  const children = descendants(pid).filter((p) => !running.has(p));
  const own = rssKib(pid) - base;
  const tree = own + children.reduce((sum, p) => sum + rssKib(p), 0);
  if (tree > Atomics.load(shared, 0)) Atomics.store(shared, 0, tree);
  if (own > limitKib) {
    writeSync(2, '\\n[bounded-memory] VIOLATED: ' + context + ': the process tree grew by ' + Math.round(tree / 1024) +
      ' MiB (limit ' + Math.round(limitKib / 1024) + ' MiB), ' + Math.round(own / 1024) +
      ' MiB of it in this process; ending the process, which nothing else can do\\n');
    process.kill(pid, 'SIGKILL');
  }
  if (tree > limitKib)
    for (const p of children) {
      const kib = rssKib(p);
      if (kib < 64 * 1024) continue;
      try {
        const command = readFileSync('/proc/' + p + '/cmdline', 'utf8').replace(/\\0/g, ' ').slice(0, 120);
        process.kill(p, 'SIGKILL');
        killed.push(command.trim() + ' (' + Math.round(kib / 1024) + ' MiB)');
      } catch {}
    }
};
const timer = setInterval(sample, 100);
parentPort.postMessage('started');
parentPort.on('message', () => { clearInterval(timer); sample(); parentPort.postMessage(killed); });
`;

export interface MemoryWatch {
  /** Peak growth of the tree's RSS over the baseline, MiB, and the children killed. */
  stop(): Promise<{ peakMib: number; killed: string[] }>;
}

/**
 * Samples the memory of this process and the children it starts, from a thread (MEMORY_SAMPLER);
 * `context` (the seed and step) names the call if the thread has to end the process.
 */
export async function watchMemory(context: string, limitMib = MEMORY_LIMIT_MIB): Promise<MemoryWatch> {
  const peak = new Int32Array(new SharedArrayBuffer(4));
  const worker = new Worker(MEMORY_SAMPLER, {
    eval: true,
    workerData: { pid: process.pid, limitKib: limitMib * 1024, peak: peak.buffer, context },
  });
  await new Promise((resolve) => worker.once('message', resolve));
  return {
    stop: async () => {
      const killed = await new Promise<string[]>((resolve) => {
        worker.once('message', resolve);
        worker.postMessage('stop');
      });
      await worker.terminate();
      return { peakMib: Math.round(Atomics.load(peak, 0) / 1024), killed };
    },
  };
}

// ---- bounded-time -----------------------------------------------------------------------------

/** How long one sluice call in this process may take, end to end (a reconcile, a removal). */
export const CALL_DEADLINE_S = 120;
/**
 * How long a CLI command may take: it starts a process that compiles the CLI's TypeScript first
 * (tsx), which alone took 80–110 s on the 2-core machine under five test suites.
 */
export const CLI_DEADLINE_S = 300;
/** How long the event loop may be blocked during a call (a regular expression backtracking, say). */
export const STALL_LIMIT_MS = 3_000;
/** A stall the watchdog thread ends the process for, having reported it (nothing else can). */
export const HARD_STALL_S = 120;

export interface TimeWatch {
  stop(): { seconds: number; stallMs: number };
}

/**
 * Measures a call's duration and the longest event-loop stall during it: the largest gap between
 * ticks of a 50 ms timer, the gap up to the stop included (a stall just before the call returns).
 */
export function watchTime(): TimeWatch {
  const started = performance.now();
  let last = started;
  let longest = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    longest = Math.max(longest, now - last - 50);
    last = now;
  }, 50);
  return {
    stop: () => {
      clearInterval(timer);
      const now = performance.now();
      longest = Math.max(longest, now - last - 50);
      return { seconds: Math.round((now - started) / 100) / 10, stallMs: Math.round(longest) };
    },
  };
}

/** `call`'s result, or `late` once `seconds` passed (the call is abandoned, not awaited). */
export async function withDeadline<T>(call: Promise<T>, seconds: number, late: () => T): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<T>((resolve) => {
    timer = setTimeout(() => resolve(late()), seconds * 1000);
  });
  try {
    return await Promise.race([call, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

export interface Watchdog {
  /** What is running now (the seed and the step), reported if the event loop stalls for good. */
  at(context: string): void;
  stop(): Promise<void>;
}

const WATCHDOG = `
const { writeSync } = require('node:fs');
const { workerData, parentPort } = require('node:worker_threads');
const beat = new Int32Array(workerData.beat);
let context = 'starting';
parentPort.on('message', (m) => { context = m; });
setInterval(() => {
  const stalled = Math.floor(Date.now() / 1000) - Atomics.load(beat, 0);
  if (stalled > workerData.limit) {
    // Straight to fd 2: the thread's process.stderr goes through the blocked event loop.
    writeSync(2, '\\n[bounded-time] VIOLATED: ' + context + ': the event loop has been blocked for ' + stalled +
      ' s (limit ' + workerData.limit + ' s); ending the process, which nothing else can do\\n');
    process.kill(process.pid, 'SIGKILL');
  }
}, 1000);
`;

/**
 * A thread outside the event loop: the loop beats every 200 ms; if it stops beating for
 * HARD_STALL_S (an endless ReDoS), the thread prints the violation with the context (seed and
 * step) and kills the process, so the soak fails loudly instead of hanging.
 */
export function startWatchdog(limit = HARD_STALL_S): Watchdog {
  const beat = new Int32Array(new SharedArrayBuffer(4));
  const tick = () => Atomics.store(beat, 0, Math.floor(Date.now() / 1000));
  tick();
  const timer = setInterval(tick, 200);
  timer.unref();
  const worker = new Worker(WATCHDOG, { eval: true, workerData: { beat: beat.buffer, limit } });
  worker.unref();
  return {
    at: (context) => worker.postMessage(context),
    stop: async () => {
      clearInterval(timer);
      await worker.terminate();
    },
  };
}

// ---- exercise ----------------------------------------------------------------------------------

/** How many times a run exercised each invariant: a check that never had anything to catch counts for nothing. */
export interface Exercise {
  /** A Secret in the cluster held a decrypted canary after a call (no-leak had plaintext to find). */
  decrypts: number;
  /** Objects deleted by a revision's prune (owns-deletes judged a prune). */
  prunes: number;
  /** Objects deleted by a removal (owns-deletes judged a removal). */
  removals: number;
  /** `sluice diff` runs that completed (no-leak and no-outbound on the diff path). */
  diffs: number;
  /** `sluice status` runs that completed. */
  statuses: number;
  /** Revisions carrying a remote reference (no-outbound had something to refuse). */
  outbound: number;
  /** Sluice calls timed (bounded-time). */
  timed: number;
  /** Sluice calls measured for memory (bounded-memory). */
  measured: number;
  /** Revisions with a file of aliases (a "billion laughs"). */
  laughs: number;
  /** Revisions with a catastrophic pattern (CRD or sops encrypted_regex). */
  catastrophic: number;
  /** Runs where an admission policy refused a ConfigMap quoting a Secret of an earlier revision. */
  quoted: number;
}

export const noExercise = (): Exercise => ({
  decrypts: 0,
  prunes: 0,
  removals: 0,
  diffs: 0,
  statuses: 0,
  outbound: 0,
  timed: 0,
  measured: 0,
  laughs: 0,
  catastrophic: 0,
  quoted: 0,
});

export function addExercise(total: Exercise, run: Exercise): void {
  for (const key of Object.keys(total) as (keyof Exercise)[]) total[key] += run[key];
}

/** The exercise counts as one line: `decrypts 12, prunes 30, …`. */
export const describeExercise = (e: Exercise) =>
  Object.entries(e)
    .map(([key, n]) => `${key} ${n}`)
    .join(', ');

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
