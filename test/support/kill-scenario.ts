// A crash scenario on the real components, shared by test/reliability/faults.test.ts (a fixed set
// of seeds) and `npm run soak` (many random seeds): apply revision A, then revision B through the
// kube fault proxy, killed after a random number of API writes (kube and DynamoDB both die, like
// a Lambda that timed out), then revision C normally. Checked: no orphans (every object labelled
// for the delivery is in the inventory) at the kill point and after, and no wrongful deletions.
// No vitest imports: the soak runs it under plain tsx.
import { ECRClient } from '@aws-sdk/client-ecr';
import { CoreV1Api, type KubeConfig, type KubernetesObject } from '@kubernetes/client-node';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { systemClock } from '../../functions/core/clock.ts';
import { parseDelivery } from '../../functions/core/config/index.ts';
import { reconcileDepsFromEnvironment } from '../../functions/core/environment.ts';
import { KubeClient } from '../../functions/core/kube/client.ts';
import { entryFor } from '../../functions/core/manifests/inventory.ts';
import { OWNER_LABEL, PRUNE_ANNOTATION } from '../../functions/core/manifests/objects.ts';
import { ecrCredentials, pushArtifact } from '../../functions/core/oci/index.ts';
import type { ReconcileDeps } from '../../functions/core/reconcile/deps.ts';
import { reconcile, type ReconcileResult } from '../../functions/core/reconcile/reconcile.ts';
import { putDelivery } from '../../functions/core/store/deliveries.ts';
import { readInventory } from '../../functions/core/store/inventory.ts';
import type { Components } from '../../dev/components.ts';
import { faultyTable } from './dynamodb-faults.ts';
import type { FaultPlan, KubeFault, KubeFaultProxy } from './kube-fault-proxy.ts';

export interface ScenarioEnv {
  readonly bed: Components;
  readonly proxy: KubeFaultProxy;
  /** A direct (fault-free) admin client configuration. */
  readonly kubeConfig: KubeConfig;
  /** Engine dependencies on the components (table, registry credentials, kubectl). */
  readonly deps: ReconcileDeps;
}

export interface ScenarioReport {
  readonly seed: number;
  /** `kill after N writes (mode)` or `fault rate R`. */
  readonly fault: string;
  readonly killAfterWrites?: number;
  /** Writes the faulty run got through before it died (or finished). */
  readonly writesBeforeKill: number;
  readonly killed: boolean;
  /** How the faulty run ended: its outcome, or the error it died with. */
  readonly faultyRun: string;
  /** Objects labelled for the delivery but missing from its inventory, right after the faulty run. */
  readonly orphansAtKill: readonly string[];
  /** The same after the recovery run. */
  readonly orphans: readonly string[];
  /** Objects that had to survive (bystanders, kept objects, objects in both revisions) but are gone. */
  readonly wrongfulDeletions: readonly string[];
  /** Whether the recovery run succeeded and the cluster and inventory hold exactly revision C. */
  readonly converged: boolean;
  readonly recovery: string;
}

/** The faulty run's lease TTL: how long the recovery run watches the dead run's lease before taking over. */
const DEAD_RUN_LEASE_TTL_MS = 1_000;

/** Small, seedable PRNG (mulberry32). */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The kinds of the pool, as `apiVersion`/`kind`/namespaced. */
const KINDS = [
  { apiVersion: 'v1', kind: 'ConfigMap', namespaced: true },
  { apiVersion: 'v1', kind: 'Secret', namespaced: true },
  { apiVersion: 'v1', kind: 'ServiceAccount', namespaced: true },
  { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', namespaced: true },
  { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', namespaced: true },
  { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', namespaced: false },
] as const;

type Obj = KubernetesObject & Record<string, unknown>;

/** Every object a revision may hold, with content that varies by `variant`. */
function pool(ns: string, prefix: string, variant: (key: string) => string): Obj[] {
  const meta = (name: string, namespaced = true) => ({ name, ...(namespaced ? { namespace: ns } : {}) });
  const objects: Obj[] = [];
  for (let i = 0; i < 10; i++)
    objects.push({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: meta(`cm-${i}`),
      data: { v: variant(`cm-${i}`) },
    });
  for (let i = 0; i < 3; i++)
    objects.push({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: meta(`sec-${i}`),
      type: 'Opaque',
      data: { v: Buffer.from(variant(`sec-${i}`)).toString('base64') },
    });
  for (let i = 0; i < 2; i++)
    objects.push({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: meta(`sa-${i}`) });
  const rules = (key: string) => [
    { apiGroups: [''], resources: ['configmaps'], verbs: [variant(key) > 'm' ? 'get' : 'list'] },
  ];
  objects.push({
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'Role',
    metadata: meta('role-0'),
    rules: rules('role-0'),
  });
  objects.push({
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'RoleBinding',
    metadata: meta('rb-0'),
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'role-0' },
    subjects: [{ kind: 'ServiceAccount', name: 'sa-0', namespace: ns }],
  });
  for (let i = 0; i < 2; i++)
    objects.push({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: meta(`${prefix}-cr-${i}`, false),
      rules: rules(`cr-${i}`),
    });
  return objects;
}

const idOf = (object: KubernetesObject) => entryFor(object).id;

/** The writes going from revision `a` to `b` takes: new or changed objects, and deletions of the rest. */
function writesToMake(a: readonly Obj[], b: readonly Obj[]): number {
  const before = new Map(a.map((o) => [idOf(o), JSON.stringify(o)]));
  const after = new Set(b.map(idOf));
  const applies = b.filter((o) => before.get(idOf(o)) !== JSON.stringify(o)).length;
  const deletes = a.filter((o) => !after.has(idOf(o)) && !o.metadata?.annotations?.[PRUNE_ANNOTATION]).length;
  return applies + deletes;
}

async function pushRevision(bed: Components, repository: string, objects: readonly Obj[]): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-kill-'));
  try {
    mkdirSync(join(dir, 'deploy'));
    writeFileSync(join(dir, 'deploy', 'all.yaml'), objects.map((o) => stringify(o)).join('---\n'));
    await pushArtifact(dir, `oci://${bed.registry.host}/${repository}:main`, {
      credentials: ecrCredentials(new ECRClient({}), systemClock),
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The objects labelled for `delivery` in the cluster (namespace `ns` and cluster-wide), by inventory id. */
async function labelled(
  kube: KubeClient,
  delivery: string,
  ns: string,
): Promise<Map<string, KubernetesObject>> {
  const found = new Map<string, KubernetesObject>();
  for (const { apiVersion, kind, namespaced } of KINDS) {
    for (const object of await kube.list(
      apiVersion,
      kind,
      `${OWNER_LABEL}=${delivery}`,
      namespaced ? ns : undefined,
    ))
      found.set(idOf(object), object);
  }
  return found;
}

async function exists(kube: KubeClient, object: KubernetesObject): Promise<boolean> {
  return (await kube.get(object)) !== undefined;
}

function describeRun(result: ReconcileResult | undefined, error: unknown): string {
  if (result)
    return `${result.outcome} ${result.reason}${result.outcome === 'Succeeded' ? '' : `: ${result.message}`}`;
  return `died: ${error instanceof Error ? error.message : String(error)}`;
}

/**
 * The fault of a seed: mostly a kill before one of the `writes` the run has to make (so it always
 * dies part-way), sometimes random faults at a low rate.
 */
function planFor(random: () => number, writes: number): { plan: FaultPlan; label: string } {
  const modes: Exclude<KubeFault, 'lost-answer'>[] = ['hangup', 'error', 'timeout'];
  if (random() < 0.2) {
    const rate = 0.02 + random() * 0.08;
    return {
      plan: { faultRate: rate, random },
      label: `fault rate ${rate.toFixed(2)}`,
    };
  }
  const killAfterWrites = Math.floor(random() * writes);
  const killMode = modes[Math.floor(random() * modes.length)]!;
  const killLosesLastAnswer = random() < 0.5;
  return {
    plan: { killAfterWrites, killMode, killLosesLastAnswer },
    label: `kill after ${killAfterWrites} writes (${killMode}${killLosesLastAnswer ? ', last answer lost' : ''})`,
  };
}

/** One seeded crash scenario; see the file comment. Leaves its namespace and cluster roles behind. */
export async function runKillScenario(env: ScenarioEnv, seed: number): Promise<ScenarioReport> {
  const { bed, proxy } = env;
  const random = seededRandom(seed);
  const tag = `${seed.toString(36)}-${Math.floor(Math.random() * 1e9).toString(36)}`;
  const ns = `kill-${tag}`;
  const name = `kill-${tag}`;
  const repository = `kill/${tag}`;
  const kube = new KubeClient(env.kubeConfig);
  const core = env.kubeConfig.makeApiClient(CoreV1Api);
  await core.createNamespace({ body: { metadata: { name: ns } } });

  // Objects that must survive everything: not ours, another delivery's, and ours but kept.
  const bystanders: Obj[] = [
    {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'bystander', namespace: ns },
      data: { mine: 'yes' },
    },
    {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'other-delivery', namespace: ns, labels: { [OWNER_LABEL]: `${name}-other` } },
      data: { theirs: 'yes' },
    },
  ];
  for (const object of bystanders) await kube.apply(object);
  const keeper: Obj = {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'keeper', namespace: ns, annotations: { [PRUNE_ANNOTATION]: 'disabled' } },
    data: { kept: 'yes' },
  };

  const revision = (label: string) => {
    const objects = pool(ns, name, (key) => (random() < 0.3 ? `${label}-${key}` : `base-${key}`)).filter(
      () => random() < 0.6,
    );
    return objects.length > 0 ? objects : pool(ns, name, (key) => `base-${key}`).slice(0, 1);
  };
  const revA = [...revision('a'), keeper];
  const revB = revision('b');
  const revC = random() < 0.5 ? revB : revision('c');

  await putDelivery(
    env.deps.db,
    parseDelivery({
      name,
      source: { url: `oci://${bed.registry.host}/${repository}`, tag: 'main', provider: 'aws' },
      cluster: { kubeconfig: bed.kube.kubeconfig },
      prune: true,
      pruneLimit: '100%',
    }),
    new Date(),
  );
  const directDeps = (clock = systemClock): ReconcileDeps => ({
    ...env.deps,
    runId: `direct-${Math.random().toString(36).slice(2)}`,
    clock,
    connect: async () => env.kubeConfig,
  });

  await pushRevision(bed, repository, revA);
  const first = await reconcile(name, directDeps());
  if (first.outcome !== 'Succeeded')
    throw new Error(`seed ${seed}: revision A did not apply: ${first.message}`);

  // Revision B through the fault proxy; once killed, DynamoDB is gone for that run too.
  await pushRevision(bed, repository, revB);
  const { plan, label } = planFor(random, writesToMake(revA, revB));
  proxy.plan(plan);
  const table = faultyTable(bed.dynamodb.table, () => (proxy.killed ? 'dead' : undefined));
  let faultyResult: ReconcileResult | undefined;
  let faultyError: unknown;
  try {
    faultyResult = await reconcile(name, {
      ...directDeps(),
      leaseTtlMs: DEAD_RUN_LEASE_TTL_MS,
      db: table.db,
      connect: async () => proxy.kubeConfig(),
    });
  } catch (error) {
    faultyError = error;
  }
  const writesBeforeKill = proxy.writes;
  const killed = proxy.killed;
  proxy.plan({});

  const mustSurvive = (revision: readonly Obj[]) => [...bystanders, keeper, ...revision];
  const inBoth = revB.filter((b) => revA.some((a) => idOf(a) === idOf(b)));
  const missing = async (objects: readonly Obj[]) => {
    const gone: string[] = [];
    for (const object of objects) if (!(await exists(kube, object))) gone.push(idOf(object));
    return gone;
  };
  const orphansNow = async () => {
    const inventory = new Set((await readInventory(env.deps.db, name)).map((entry) => entry.id));
    return [...(await labelled(kube, name, ns)).entries()]
      .filter(
        ([id, object]) =>
          !inventory.has(id) && object.metadata?.annotations?.[PRUNE_ANNOTATION] !== 'disabled',
      )
      .map(([id]) => id);
  };
  const orphansAtKill = await orphansNow();
  const wrongAtKill = await missing(mustSurvive(inBoth));

  // Recovery: revision C; the run watches the dead run's lease go unrenewed for its TTL, then takes over.
  await pushRevision(bed, repository, revC);
  let recovery: ReconcileResult | undefined;
  let recoveryError: unknown;
  try {
    recovery = await reconcile(name, directDeps());
  } catch (error) {
    recoveryError = error;
  }
  const orphans = await orphansNow();
  const wrongAfter = await missing(mustSurvive(revC));
  const live = await labelled(kube, name, ns);
  const inventory = (await readInventory(env.deps.db, name)).map((entry) => entry.id).sort();
  const wanted = revC.map(idOf).sort();
  const liveOurs = [...live.entries()]
    .filter(([, object]) => object.metadata?.annotations?.[PRUNE_ANNOTATION] !== 'disabled')
    .map(([id]) => id)
    .sort();
  const converged =
    recovery?.outcome === 'Succeeded' &&
    JSON.stringify(inventory) === JSON.stringify(wanted) &&
    JSON.stringify(liveOurs) === JSON.stringify(wanted);

  return {
    seed,
    fault: label,
    ...(plan.killAfterWrites !== undefined && { killAfterWrites: plan.killAfterWrites }),
    writesBeforeKill,
    killed,
    faultyRun: describeRun(faultyResult, faultyError),
    orphansAtKill,
    orphans,
    wrongfulDeletions: [...new Set([...wrongAtKill, ...wrongAfter])],
    converged,
    recovery: describeRun(recovery, recoveryError),
  };
}

/** Engine dependencies for the scenario from the components (no vitest needed). */
export function scenarioDeps(bed: Components): ReconcileDeps {
  return { ...reconcileDepsFromEnvironment({ runId: 'scenario' }), kubectl: bed.kubectl };
}
