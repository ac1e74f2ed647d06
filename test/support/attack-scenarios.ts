// The attacks of issue 13 as seeded random scenarios on the real components, shared by
// test/reliability/attack-soak.test.ts (fixed seeds) and `npm run soak` (many seeds, mixed with the
// crash scenarios of kill-scenario.ts): a CRD or a Namespace left out while it still holds objects,
// a delivery renamed (removed while its successor is held), a tag moved in the middle of a run under
// a closed freeze, and a claimant with a skewed clock next to a live holder. Each scenario works on
// namespaces, repositories, deliveries and a kubeconfig path of its own (so no other removal plans
// its deliveries), leaves them behind, and reports wrongful deletions, orphans, whether the cluster
// holds exactly the last applied revision, and any other expectation it saw broken.
// envtest runs no controller-manager: a deleted Namespace stays Terminating with its contents, so a
// Namespace with a deletionTimestamp (and whatever lives in it) counts as deleted.
// No vitest imports: the soak runs it under plain tsx.
import { ECRClient } from '@aws-sdk/client-ecr';
import type { KubernetesObject } from '@kubernetes/client-node';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { systemClock, type Clock } from '../../functions/core/clock.ts';
import { DEFAULTS } from '../../functions/core/config/defaults.ts';
import { parseDelivery, type PruneLimit } from '../../functions/core/config/index.ts';
import { KubeClient } from '../../functions/core/kube/client.ts';
import { entryFor } from '../../functions/core/manifests/inventory.ts';
import { describeObject, OWNER_LABEL, PRUNE_ANNOTATION } from '../../functions/core/manifests/objects.ts';
import { ecrCredentials, pushArtifact } from '../../functions/core/oci/index.ts';
import { deleteDelivery } from '../../functions/core/reconcile/delete.ts';
import type { ReconcileDeps } from '../../functions/core/reconcile/deps.ts';
import { reconcile, type ReconcileResult } from '../../functions/core/reconcile/reconcile.ts';
import { getDelivery, putDelivery } from '../../functions/core/store/deliveries.ts';
import { readInventory } from '../../functions/core/store/inventory.ts';
import { getStatus } from '../../functions/core/store/status.ts';
import { namespacedCrd } from './crd.ts';
import { registerGate } from './gates.ts';
import { seededRandom, type ScenarioEnv } from './kill-scenario.ts';
import type { RegistryFaultProxy } from './registry-fault-proxy.ts';

export const ATTACK_KINDS = ['crd-removal', 'namespace-removal', 'rename', 'tag-move', 'clock-skew'] as const;
export type AttackKind = (typeof ATTACK_KINDS)[number];

export interface AttackEnv extends ScenarioEnv {
  /** A registry proxy the tag-move scenario moves tags through; its hooks are cleared after each use. */
  readonly registryProxy: RegistryFaultProxy;
}

export interface AttackReport {
  readonly seed: number;
  readonly kind: AttackKind;
  /** The seed's random choices, in a few words. */
  readonly label: string;
  /** What the runs that matter did, in order. */
  readonly outcome: string;
  /** Objects that had to survive (bystanders, objects of a held run, objects another delivery needs) but are gone or deleting. */
  readonly wrongfulDeletions: readonly string[];
  /** Live objects labelled for a delivery but absent from its inventory. */
  readonly orphans: readonly string[];
  /** Whether the cluster, the inventory and the status hold exactly the last applied revision. */
  readonly converged: boolean;
  /** Any other expectation that did not hold (held when it had to prune, a claimant that connected, …). */
  readonly unexpected: readonly string[];
}

type Obj = KubernetesObject & Record<string, unknown>;

/** A kind to look for labelled objects of; `crd` names the CRD defining it (skipped while it is deleting). */
interface Kind {
  readonly apiVersion: string;
  readonly kind: string;
  readonly crd?: string;
}

const CORE_KINDS: readonly Kind[] = [
  { apiVersion: 'v1', kind: 'Namespace' },
  { apiVersion: 'v1', kind: 'ConfigMap' },
  { apiVersion: 'v1', kind: 'Secret' },
  { apiVersion: 'v1', kind: 'ServiceAccount' },
  { apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition' },
];

const idOf = (object: KubernetesObject) => entryFor(object).id;
const sortedIds = (objects: readonly KubernetesObject[]) => objects.map(idOf).sort();
const same = (a: readonly string[], b: readonly string[]) => JSON.stringify(a) === JSON.stringify(b);

const namespace = (name: string): Obj => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
const configMap = (ns: string, name: string, value: string, metadata: Record<string, unknown> = {}): Obj => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace: ns, ...metadata },
  data: { v: value },
});
const secret = (ns: string, name: string, value: string): Obj => ({
  apiVersion: 'v1',
  kind: 'Secret',
  metadata: { name, namespace: ns },
  type: 'Opaque',
  data: { v: Buffer.from(value).toString('base64') },
});
const serviceAccount = (ns: string, name: string): Obj => ({
  apiVersion: 'v1',
  kind: 'ServiceAccount',
  metadata: { name, namespace: ns },
});

/** A CRD `widgets.<group>` and a maker of its objects, known to `s` as the CRD of their apiVersion. */
function widgets(s: Scene, group: string) {
  const crd = namespacedCrd({
    group,
    kind: 'Widget',
    plural: 'widgets',
    specProperties: { size: { type: 'integer' } },
  }) as Obj;
  const kind: Kind = { apiVersion: `${group}/v1`, kind: 'Widget', crd: crd.metadata!.name };
  s.crdOf.set(kind.apiVersion, crd.metadata!.name!);
  const widget = (ns: string, name: string, size: number, metadata: Record<string, unknown> = {}): Obj => ({
    apiVersion: kind.apiVersion,
    kind: 'Widget',
    metadata: { name, namespace: ns, ...metadata },
    spec: { size },
  });
  return { crd, kind, widget };
}

/** What a content check compares: the data of ConfigMaps and Secrets, the spec of custom resources. */
function contentOf(object: KubernetesObject): string {
  const o = object as Obj;
  if (o.kind === 'ConfigMap' || o.kind === 'Secret') return JSON.stringify(o.data ?? {});
  if (o.kind === 'Widget') return JSON.stringify(o.spec ?? {});
  return '';
}

/** Whether the mass-deletion brake holds a run deleting `doomed` of `inventory` objects (prune-limit.ts). */
function brakeHolds(limit: PruneLimit, doomed: number, inventory: number): boolean {
  if ('count' in limit) return doomed > limit.count;
  return inventory >= DEFAULTS.pruneLimitMinInventory && doomed * 100 > limit.percent * inventory;
}

function describeRun(result: ReconcileResult): string {
  return result.outcome === 'Succeeded' ? 'Succeeded' : `${result.outcome} ${result.reason}`;
}

/** One scenario's names, randomness, clients and findings. */
class Scene {
  readonly random: () => number;
  readonly tag: string;
  readonly kube: KubeClient;
  /** The kubeconfig path its deliveries name: a cluster of their own for removals. */
  readonly kubeconfig: string;
  readonly steps: string[] = [];
  readonly unexpected: string[] = [];
  readonly wrongful = new Set<string>();
  /** The CRD defining each custom apiVersion the scenario uses: its objects go when it goes. */
  readonly crdOf = new Map<string, string>();

  constructor(
    readonly env: AttackEnv,
    readonly seed: number,
    prefix: string,
  ) {
    this.random = seededRandom(seed);
    this.tag = `${prefix}-${seed.toString(36)}-${Math.floor(Math.random() * 1e9).toString(36)}`;
    this.kube = new KubeClient(env.kubeConfig);
    const dir = join(env.bed.dir, 'attacks', this.tag);
    mkdirSync(dir, { recursive: true });
    this.kubeconfig = join(dir, 'kubeconfig');
    copyFileSync(env.bed.kube.kubeconfig, this.kubeconfig);
  }

  chance(p: number): boolean {
    return this.random() < p;
  }
  /** An integer in [min, max]. */
  int(min: number, max: number): number {
    return min + Math.floor(this.random() * (max - min + 1));
  }
  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.random() * items.length)]!;
  }
  name(suffix: string): string {
    return `${this.tag}-${suffix}`;
  }
  expect(what: string, ok: boolean): void {
    if (!ok) this.unexpected.push(what);
  }

  /** Engine dependencies: a run id of its own, the direct cluster connection, `extra` on top. */
  deps(extra: Partial<ReconcileDeps> = {}): ReconcileDeps {
    return {
      ...this.env.deps,
      runId: `attack-${Math.random().toString(36).slice(2)}`,
      connect: async () => this.env.kubeConfig,
      ...extra,
    };
  }

  async createNamespace(name: string): Promise<void> {
    await this.kube.apply(namespace(name));
  }

  async register(
    name: string,
    repository: string,
    fields: Record<string, unknown> = {},
    host = this.env.bed.registry.host,
  ): Promise<void> {
    await putDelivery(
      this.env.deps.db,
      parseDelivery({
        name,
        source: { url: `oci://${host}/${repository}`, tag: 'main', provider: 'aws' },
        cluster: { kubeconfig: this.kubeconfig },
        prune: true,
        ...fields,
      }),
      new Date(),
    );
  }

  /** Pushes `objects` as the tag `main` of `repository`; returns the revision `main@sha256:…`. */
  async push(repository: string, objects: readonly Obj[]): Promise<string> {
    const dir = mkdtempSync(join(tmpdir(), 'sluice-attack-'));
    try {
      writeFileSync(join(dir, 'all.yaml'), objects.map((o) => stringify(o)).join('---\n'));
      const pushed = await pushArtifact(dir, `oci://${this.env.bed.registry.host}/${repository}:main`, {
        credentials: ecrCredentials(new ECRClient({}), systemClock),
      });
      return `main@${pushed.digest}`;
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }

  async run(step: string, name: string, deps = this.deps()): Promise<ReconcileResult> {
    const result = await reconcile(name, deps);
    this.steps.push(`${step}: ${describeRun(result)}`);
    return result;
  }

  /** A setup run that must succeed with `revision`; anything else is a scenario error. */
  async setUp(name: string, revision: string): Promise<void> {
    const result = await reconcile(name, this.deps());
    if (result.outcome !== 'Succeeded' || result.revision !== revision)
      throw new Error(`seed ${this.seed}: setting up ${name} with ${revision}: ${result.message}`);
  }

  /** The live object, or undefined when it is gone or its kind is no longer served. */
  async read(object: KubernetesObject): Promise<KubernetesObject | undefined> {
    try {
      return await this.kube.get(object);
    } catch (error) {
      this.kube.forgetDiscovery();
      if (!(await this.kube.resource(object.apiVersion!, object.kind!))) return undefined;
      throw error;
    }
  }

  /** Whether the object is gone or deleting, or its Namespace or CRD is. */
  async deleted(object: KubernetesObject): Promise<boolean> {
    const live = await this.read(object);
    if (!live || live.metadata?.deletionTimestamp) return true;
    const ns = object.metadata?.namespace;
    if (ns !== undefined && (await this.deleted(namespace(ns)))) return true;
    const crd = this.crdOf.get(object.apiVersion ?? '');
    return (
      crd !== undefined &&
      (await this.deleted({
        apiVersion: 'apiextensions.k8s.io/v1',
        kind: 'CustomResourceDefinition',
        metadata: { name: crd },
      }))
    );
  }

  /** Records as wrongful deletions those of `objects` that are deleted. */
  async mustSurvive(objects: readonly KubernetesObject[]): Promise<void> {
    for (const object of objects) if (await this.deleted(object)) this.wrongful.add(describeObject(object));
  }

  /** The live objects labelled for `delivery` (nothing deleting), by inventory id. */
  async labelled(delivery: string, kinds: readonly Kind[]): Promise<Map<string, KubernetesObject>> {
    this.kube.forgetDiscovery();
    const found = new Map<string, KubernetesObject>();
    for (const kind of kinds) {
      if (kind.crd) {
        const crd = await this.read({
          apiVersion: 'apiextensions.k8s.io/v1',
          kind: 'CustomResourceDefinition',
          metadata: { name: kind.crd },
        });
        // Its objects go with a deleting CRD.
        if (!crd || crd.metadata?.deletionTimestamp) continue;
      }
      if (!(await this.kube.resource(kind.apiVersion, kind.kind))) continue;
      for (const object of await this.kube.list(kind.apiVersion, kind.kind, `${OWNER_LABEL}=${delivery}`))
        if (!(await this.deleted(object))) found.set(idOf(object), object);
    }
    return found;
  }

  /** Live objects labelled for one of `deliveries` but not in its inventory (kept ones aside). */
  async orphans(deliveries: readonly string[], kinds: readonly Kind[]): Promise<string[]> {
    const orphans: string[] = [];
    for (const delivery of deliveries) {
      const inventory = new Set((await readInventory(this.env.deps.db, delivery)).map((e) => e.id));
      for (const [id, object] of await this.labelled(delivery, kinds))
        if (!inventory.has(id) && object.metadata?.annotations?.[PRUNE_ANNOTATION] !== 'disabled')
          orphans.push(`${describeObject(object)} (delivery ${delivery})`);
    }
    return orphans;
  }

  /**
   * Whether `delivery`'s status names `revision` as last applied, and its inventory and its live
   * labelled objects (kept ones aside) are exactly `objects`, with their content. Notes the difference.
   */
  async convergedTo(
    delivery: string,
    objects: readonly Obj[],
    revision: string,
    kinds: readonly Kind[],
  ): Promise<boolean> {
    const wanted = sortedIds(objects);
    const status = await getStatus(this.env.deps.db, delivery);
    const inventory = (await readInventory(this.env.deps.db, delivery)).map((e) => e.id).sort();
    const live = [...(await this.labelled(delivery, kinds)).entries()].filter(
      ([id, object]) =>
        wanted.includes(id) || object.metadata?.annotations?.[PRUNE_ANNOTATION] !== 'disabled',
    );
    const liveIds = live.map(([id]) => id).sort();
    const differing: string[] = [];
    for (const object of objects) {
      const found = live.find(([id]) => id === idOf(object))?.[1];
      if (found && contentOf(found) !== contentOf(object)) differing.push(describeObject(object));
    }
    const problems = [
      status?.lastAppliedRevision !== revision &&
        `last applied ${status?.lastAppliedRevision ?? 'none'}, not ${revision}`,
      !same(inventory, wanted) && `inventory [${inventory.join(' ')}], not [${wanted.join(' ')}]`,
      !same(liveIds, wanted) && `live [${liveIds.join(' ')}], not [${wanted.join(' ')}]`,
      differing.length > 0 && `content differs: ${differing.join(', ')}`,
    ].filter((p): p is string => typeof p === 'string');
    if (problems.length > 0) this.steps.push(`${delivery} not converged: ${problems.join('; ')}`);
    return problems.length === 0;
  }

  report(kind: AttackKind, label: string, converged: boolean, orphans: readonly string[]): AttackReport {
    return {
      seed: this.seed,
      kind,
      label,
      outcome: this.steps.join('; '),
      wrongfulDeletions: [...this.wrongful].sort(),
      orphans,
      converged,
      unexpected: this.unexpected,
    };
  }
}

/** Runs the scenario `kind` for `seed`; see the file comment. */
export function runAttackScenario(env: AttackEnv, kind: AttackKind, seed: number): Promise<AttackReport> {
  switch (kind) {
    case 'crd-removal':
    case 'namespace-removal':
      return containerRemoval(env, kind, seed);
    case 'rename':
      return rename(env, seed);
    case 'tag-move':
      return tagMove(env, seed);
    case 'clock-skew':
      return clockSkew(env, seed);
  }
}

/**
 * A delivery applies a container (a CRD with custom resources, or a Namespace with objects in it);
 * bystanders appear: hand-made objects, another delivery's, namespace furniture, dependents of ours.
 * The next revision leaves the container out, with all, some or none of our objects in it. The run
 * is held by the brake when what it deletes (dependents included; the container only if it goes)
 * passes pruneLimit, else it applies and prunes, keeping the container exactly when something it
 * does not prune would go with it. Held by the brake, the limit is sometimes raised and the run
 * tried again.
 */
async function containerRemoval(
  env: AttackEnv,
  kind: 'crd-removal' | 'namespace-removal',
  seed: number,
): Promise<AttackReport> {
  const s = new Scene(env, seed, kind === 'crd-removal' ? 'crd' : 'nsr');
  const crdCase = kind === 'crd-removal';
  const [a, b] = [s.name('a'), s.name('b')];
  await s.createNamespace(a);
  const { crd, kind: widgetKind, widget } = widgets(s, `${s.tag}.attack.sluice.test`);
  // The container, where our objects live, and what a hand-made (or another delivery's) object there is.
  let container: Obj;
  let inside: (name: string, value: number, metadata?: Record<string, unknown>) => Obj;
  if (crdCase) {
    await s.createNamespace(b);
    container = crd;
    inside = (name, value, metadata) => widget(s.pick([a, b]), name, value, metadata);
  } else {
    container = namespace(b);
    inside = (name, value, metadata) => configMap(b, name, String(value), metadata);
  }
  const makers = crdCase
    ? [inside]
    : [
        inside,
        (name: string, value: number) => secret(b, `s-${name}`, String(value)),
        (name: string) => serviceAccount(b, `sa-${name}`),
      ];
  const ours = Array.from({ length: s.int(1, 5) }, (_, i) => s.pick(makers)(`o-${i}`, i));
  const disabled = s.chance(0.2) ? s.pick(ours) : undefined;
  if (disabled) disabled.metadata = { ...disabled.metadata, annotations: { [PRUNE_ANNOTATION]: 'disabled' } };
  const stay = (value: string) => configMap(a, 'stay', value);
  let limit: PruneLimit = s.chance(0.5) ? { percent: 100 } : { count: s.int(1, 6) };
  const kinds = [...CORE_KINDS, widgetKind];

  const d = s.name('d');
  const repository = `attack/${s.tag}/d`;
  await s.register(d, repository, { pruneLimit: 'percent' in limit ? `${limit.percent}%` : limit.count });
  const rev1 = [container, ...ours, stay('1')];
  const revision1 = await s.push(repository, rev1);
  await s.setUp(d, revision1);

  // Bystanders: hand-made objects in the container, another registered delivery's, and (outside it) one more.
  let handMade = Array.from({ length: s.chance(0.4) ? s.int(1, 2) : 0 }, (_, i) =>
    inside(`by-hand-${i}`, 100 + i),
  );
  for (const object of handMade) await s.kube.apply(object);
  // A dependent of something that stays (the hand-made Namespace `a`) is no garbage: it blocks too.
  const stray = s.chance(0.2);
  if (stray) {
    const owner = (await s.read(namespace(a)))!;
    const ownerReferences = [{ apiVersion: 'v1', kind: 'Namespace', name: a, uid: owner.metadata!.uid }];
    handMade = [...handMade, inside('owned-by-a', 150, { ownerReferences })];
    await s.kube.apply(handMade.at(-1)!);
  }
  const outside = configMap(a, 'bystander', 'mine');
  await s.kube.apply(outside);
  const deliveries = [d];
  let others: Obj[] = [];
  if (s.chance(0.35)) {
    const e = s.name('e');
    const theirs = `attack/${s.tag}/e`;
    others = Array.from({ length: s.int(1, 2) }, (_, i) => inside(`other-${i}`, 200 + i));
    await s.register(e, theirs);
    await s.setUp(e, await s.push(theirs, others));
    deliveries.push(e);
  }
  const furniture =
    !crdCase && s.chance(0.5) ? [serviceAccount(b, 'default'), configMap(b, 'kube-root-ca.crt', 'ca')] : [];
  for (const object of furniture) await s.kube.apply(object);

  // The next revision leaves the container out, and all, some or none of our objects.
  const keep = s.pick(['none', 'none', 'some', 'all'] as const);
  const kept = keep === 'all' ? ours : keep === 'some' ? ours.filter(() => s.chance(0.5)) : [];
  const dropped = ours.filter((o) => !kept.includes(o));
  const prunable = dropped.filter((o) => o !== disabled);
  // Dependents: hand-made objects owned by one of ours that is pruned (garbage-collected with it).
  const dependents: Obj[] = [];
  if (prunable.length > 0 && s.chance(0.3)) {
    const owner = (await s.read(s.pick(prunable)))!;
    const ownerReferences = [
      {
        apiVersion: owner.apiVersion,
        kind: owner.kind,
        name: owner.metadata!.name,
        uid: owner.metadata!.uid,
      },
    ];
    // In the owner's namespace, as the garbage collector requires.
    const ns = owner.metadata!.namespace;
    const count = s.int(1, 2);
    for (let i = 0; i < count; i++) {
      const dependent = inside(`dependent-${i}`, 300 + i, { ownerReferences });
      dependents.push({ ...dependent, metadata: { ...dependent.metadata, namespace: ns } });
    }
    for (const object of dependents) await s.kube.apply(object);
  }
  const rev2 = [...kept, stay('2')];
  const revision2 = await s.push(repository, rev2);
  const label =
    `${crdCase ? 'CRD' : 'Namespace'} with ${ours.length} objects${disabled ? ' (1 prune: disabled)' : ''}, ` +
    `keeps ${kept.length === 0 ? 'none' : kept.length === ours.length ? 'all' : kept.length}; bystanders: ${handMade.length} hand-made, ` +
    `${others.length} another delivery's, ${dependents.length} dependents${stray ? ', 1 of what stays' : ''}` +
    `${furniture.length ? ', furniture' : ''}; pruneLimit ${'percent' in limit ? `${limit.percent}%` : limit.count}`;

  const keepsContainer = () =>
    handMade.length + others.length + kept.length + (disabled && dropped.includes(disabled) ? 1 : 0) > 0;
  const expected = () => {
    const doomed = (keepsContainer() ? 0 : 1) + dropped.length + dependents.length;
    return brakeHolds(limit, doomed, rev1.length) ? 'PruneLimitExceeded' : 'ReconciliationSucceeded';
  };
  const checkKept = (result: ReconcileResult) => {
    if (result.outcome !== 'Succeeded') return;
    const said = result.kept?.map((k) => k.container) ?? [];
    const should = keepsContainer() ? [describeObject(container)] : [];
    s.expect(`kept [${said.join(' ')}], not [${should.join(' ')}]`, same(said, should));
  };
  let result = await s.run('leave it out', d);
  s.expect(`leaving it out: expected ${expected()}, got ${result.reason}`, result.reason === expected());
  checkKept(result);
  if (result.reason === 'PruneLimitExceeded' && s.chance(0.5)) {
    // The way out the message names: raise the limit.
    limit = { percent: 100 };
    await s.register(d, repository, { pruneLimit: '100%' });
    result = await s.run('limit raised', d);
    s.expect(`again: expected ${expected()}, got ${result.reason}`, result.reason === expected());
    checkKept(result);
  }

  // Annotated prune: disabled, ours stays in place even when the revision leaves it out.
  await s.mustSurvive([outside, ...handMade, ...others, ...(disabled ? [disabled] : [])]);
  const applied = result.outcome === 'Succeeded' ? rev2 : rev1;
  // A held run deletes nothing: the container, all of ours and the furniture stay.
  await s.mustSurvive(result.outcome === 'Succeeded' ? rev2 : [...rev1, ...furniture]);
  const containerKept = result.outcome === 'Succeeded' && keepsContainer();
  if (containerKept) await s.mustSurvive([container]);
  if (result.outcome === 'Succeeded') {
    if (!containerKept) s.expect(`${describeObject(container)} was not deleted`, await s.deleted(container));
    for (const object of prunable)
      s.expect(`${describeObject(object)} was not pruned`, await s.deleted(object));
  }
  const converged = await s.convergedTo(
    d,
    containerKept ? [...applied, container] : applied,
    result.outcome === 'Succeeded' ? revision2 : revision1,
    kinds,
  );
  return s.report(kind, label, converged, await s.orphans(deliveries, kinds));
}

/**
 * Renaming: delivery `old` applied its artifact; `new` is registered with the same source, behind a
 * closed gate (blocks all or revisions) or none, and the tag may have moved to a smaller revision.
 * Removing `old` deletes only what `new` would not apply (never re-creating anything), keeps what it
 * would, then `new` (its gate opened) takes over everything, same objects, under its own label.
 */
async function rename(env: AttackEnv, seed: number): Promise<AttackReport> {
  const s = new Scene(env, seed, 'ren');
  const p = s.name('p');
  const n = s.name('n');
  await s.createNamespace(p);
  const withNamespace = s.chance(0.6);
  const withCrd = s.chance(0.4);
  const { crd, kind: widgetKind, widget } = widgets(s, `${s.tag}.attack.sluice.test`);
  const inP = Array.from({ length: s.int(1, 3) }, (_, i) =>
    s.chance(0.7) ? configMap(p, `c-${i}`, `v${i}`) : secret(p, `s-${i}`, `v${i}`),
  );
  const inN = withNamespace
    ? Array.from({ length: s.int(1, 3) }, (_, i) => configMap(n, `c-${i}`, `n${i}`))
    : [];
  const crs = withCrd
    ? Array.from({ length: s.int(1, 3) }, (_, i) =>
        widget(withNamespace && s.chance(0.5) ? n : p, `w-${i}`, i),
      )
    : [];
  const rev1 = [...(withNamespace ? [namespace(n)] : []), ...(withCrd ? [crd] : []), ...inP, ...inN, ...crs];
  const kinds = [...CORE_KINDS, widgetKind];

  const old = s.name('old');
  const fresh = s.name('new');
  const repository = `attack/${s.tag}/app`;
  await s.register(old, repository, { deletionPolicy: 'Delete', pruneLimit: '100%' });
  const revision1 = await s.push(repository, rev1);
  await s.setUp(old, revision1);

  // Sometimes the tag moves on to a smaller revision: whole containers (with what they hold) dropped.
  let rev2 = rev1;
  let revision2 = revision1;
  if (s.chance(0.4)) {
    const dropNamespace = withNamespace && s.chance(0.3);
    const dropCrd = withCrd && s.chance(0.3);
    const keptP = inP.filter(() => s.chance(0.7));
    rev2 = rev1.filter((o) => {
      if (dropNamespace && (o.kind === 'Namespace' || o.metadata?.namespace === n)) return false;
      if (dropCrd && (o === crd || o.kind === 'Widget')) return false;
      return o.metadata?.namespace !== p || o.kind === 'Widget' || keptP.includes(o);
    });
    if (rev2.length === 0) rev2 = [inP[0]!];
    revision2 = await s.push(repository, rev2);
  }
  const onlyOld = rev1.filter((o) => !rev2.includes(o));

  // Bystanders: hand-made objects (in the Namespace too, when it stays) and another delivery's.
  const bystanders = [configMap(p, 'by-hand', 'mine')];
  if (rev2.some((o) => o.kind === 'Namespace') && s.chance(0.5))
    bystanders.push(configMap(n, 'by-hand', 'mine'));
  for (const object of bystanders) await s.kube.apply(object);
  const deliveries = [old, fresh];
  if (s.chance(0.4)) {
    const third = s.name('third');
    const theirs = `attack/${s.tag}/third`;
    const objects = [configMap(p, 'third', 'theirs')];
    await s.register(third, theirs);
    await s.setUp(third, await s.push(theirs, objects));
    bystanders.push(...objects);
    deliveries.push(third);
  }

  const gateMode = s.pick(['none', 'all', 'revisions'] as const);
  const gate = s.name('gate');
  if (gateMode !== 'none') await registerGate(s.deps(), { name: gate, default: 'closed' });
  await s.register(fresh, repository, {
    deletionPolicy: 'Delete',
    pruneLimit: '100%',
    ...(gateMode !== 'none' && { gates: [{ name: gate, blocks: gateMode }] }),
  });
  const uids = new Map<string, string | undefined>();
  for (const object of rev1) uids.set(idOf(object), (await s.read(object))?.metadata?.uid);
  /** Records objects of `objects` gone or re-created (another uid) as wrongful, and those not owned by `owner` as unexpected. */
  const unchanged = async (objects: readonly Obj[], owner: string, when: string) => {
    for (const object of objects) {
      const live = await s.read(object);
      if ((await s.deleted(object)) || live?.metadata?.uid !== uids.get(idOf(object)))
        s.wrongful.add(`${describeObject(object)} (${when})`);
      else
        s.expect(
          `${describeObject(object)} ${when}: labelled ${live?.metadata?.labels?.[OWNER_LABEL]}, not ${owner}`,
          live?.metadata?.labels?.[OWNER_LABEL] === owner,
        );
    }
  };

  const early = s.chance(0.4);
  if (early) {
    // Before the removal, `new` must not take what `old` (registered) owns.
    const result = await s.run(`${fresh} before the removal`, fresh);
    const wanted = gateMode === 'none' ? 'OwnershipConflict' : 'GateClosed';
    s.expect(
      `${fresh} before the removal: expected ${wanted}, got ${result.reason}`,
      result.reason === wanted,
    );
    await unchanged(rev1, old, `after ${fresh} ran before the removal`);
  }

  const reconciled: string[] = [];
  const label =
    `${rev1.length} objects${withNamespace ? ', own Namespace' : ''}${withCrd ? ', CRD' : ''}; ` +
    `${rev2 === rev1 ? 'same revision' : `tag moved to ${rev2.length} of them`}; gate ${gateMode}` +
    `${early ? '; new ran before the removal' : ''}; ${deliveries.length - 2} other deliveries`;
  let removal: Awaited<ReturnType<typeof deleteDelivery>>;
  try {
    removal = await deleteDelivery(
      old,
      s.deps({ reconcileNow: async (names) => void reconciled.push(...names) }),
    );
  } catch (error) {
    // Reported with what it left: whatever it deleted must still be only what the new one would not apply.
    s.unexpected.push(`removing ${old} failed: ${String(error)}`);
    s.steps.push(`remove ${old}: failed`);
    await unchanged(rev2, old, 'after the failed removal');
    await s.mustSurvive(bystanders);
    return s.report('rename', label, false, await s.orphans(deliveries, kinds));
  }
  s.steps.push(`remove ${old}: ${removal.deleted.length} deleted, ${removal.kept.length} kept`);
  const keptIds = removal.kept.map((k) => k.id).sort();
  s.expect(`kept [${keptIds.join(' ')}], not [${sortedIds(rev2).join(' ')}]`, same(keptIds, sortedIds(rev2)));
  s.expect(
    `kept for ${removal.kept.map((k) => k.delivery).join(',')}`,
    removal.kept.every((k) => k.delivery === fresh),
  );
  s.expect(
    `deleted [${[...removal.deleted].sort().join(' ')}], not [${sortedIds(onlyOld).join(' ')}]`,
    same([...removal.deleted].sort(), sortedIds(onlyOld)),
  );
  s.expect(`reconciled [${reconciled.join(' ')}] after the removal`, same(reconciled, [fresh]));
  s.expect(`${old} is still registered`, (await getDelivery(s.env.deps.db, old)) === undefined);
  await unchanged(rev2, old, 'after the removal');
  for (const object of onlyOld)
    s.expect(`${describeObject(object)} (only ${old} had it) left behind`, await s.deleted(object));
  await s.mustSurvive(bystanders);

  if (gateMode !== 'none') {
    if (s.chance(0.5)) {
      const held = await s.run(`${fresh} held`, fresh);
      s.expect(`${fresh} while its gate is closed: ${held.reason}`, held.reason === 'GateClosed');
      await unchanged(rev2, old, 'while the gate is closed');
    }
    await registerGate(s.deps(), { name: gate, default: 'open' });
  }
  const result = await s.run(`${fresh} takes over`, fresh);
  s.expect(`${fresh} taking over: ${result.reason}: ${result.message}`, result.outcome === 'Succeeded');
  await unchanged(rev2, fresh, 'after the takeover');
  await s.mustSurvive(bystanders);
  const converged = await s.convergedTo(fresh, rev2, revision2, kinds);
  return s.report('rename', label, converged, await s.orphans(deliveries, kinds));
}

/** ConfigMaps `c-<i>` in `ns`: a random non-empty subset of `size`, with values naming `label`. */
function configMaps(s: Scene, ns: string, label: string, size: number): Obj[] {
  const chosen = Array.from({ length: size }, (_, i) => i).filter(() => s.chance(0.6));
  return (chosen.length > 0 ? chosen : [s.int(0, size - 1)]).map((i) =>
    configMap(ns, `c-${i}`, `${label}-${i}`),
  );
}

/**
 * Under a closed `blocks: revisions` gate, the tag moves between the run's resolve and its pull
 * (before the manifest or before the blob), with the tag at the applied revision or already at a
 * held one, sometimes after drift. The run applies only the last applied revision; the moved one
 * is held by the next run; opened, the gate lets the latest one through.
 */
async function tagMove(env: AttackEnv, seed: number): Promise<AttackReport> {
  const s = new Scene(env, seed, 'tag');
  const proxy = env.registryProxy;
  const ns = s.name('ns');
  await s.createNamespace(ns);
  const d = s.name('d');
  const gate = s.name('freeze');
  const repository = `attack/${s.tag}/app`;
  const kinds = CORE_KINDS;
  await registerGate(s.deps(), { name: gate, default: 'open' });
  await s.register(
    d,
    repository,
    { pruneLimit: '100%', gates: [{ name: gate, blocks: 'revisions' }] },
    proxy.host,
  );
  const revA = configMaps(s, ns, 'a', 6);
  const revisionA = await s.push(repository, revA);
  await s.setUp(d, revisionA);
  await registerGate(s.deps(), { name: gate, default: 'closed' });
  const applied = async (objects: readonly Obj[], revision: string) =>
    s.convergedTo(d, objects, revision, kinds);

  const mode = s.pick(['at applied', 'already moved'] as const);
  const point = s.pick(['manifest', 'blob'] as const);
  const drift = s.chance(0.5);
  let held: string | undefined;
  if (mode === 'already moved') held = await s.push(repository, configMaps(s, ns, 'b', 6));
  if (drift) await s.kube.delete(s.pick(revA));
  const revC = configMaps(s, ns, 'c', 6);
  let resolved = false;
  let moved: string | undefined;
  proxy.tamper(({ path }, answer) => {
    if (path.includes('/manifests/') && answer.status === 200) resolved = true;
    return undefined;
  });
  proxy.beforeForward(async ({ path }) => {
    if (resolved && !moved && path.includes(point === 'manifest' ? '/manifests/' : '/blobs/'))
      moved = await s.push(repository, revC);
  });
  let result: ReconcileResult;
  try {
    result = await s.run('tag moved mid-run', d);
  } finally {
    proxy.beforeForward(undefined);
    proxy.tamper(undefined);
  }
  s.expect(`the tag was not moved mid-run`, moved !== undefined);
  if (held)
    s.expect(
      `mid-run: expected Blocked GateClosed ${held}, got ${result.reason} ${result.revision}`,
      result.reason === 'GateClosed' && result.revision === held,
    );
  else
    s.expect(
      `mid-run: expected Succeeded ${revisionA}, got ${result.reason} ${result.revision}`,
      result.outcome === 'Succeeded' && result.revision === revisionA,
    );
  let converged = await applied(revA, revisionA);
  await s.mustSurvive(revA);

  const next = await s.run('next run', d);
  s.expect(
    `next run: expected Blocked GateClosed ${moved}, got ${next.reason} ${next.revision}`,
    next.reason === 'GateClosed' && next.revision === moved,
  );
  s.expect(
    `pending ${(await getStatus(s.env.deps.db, d))?.pendingRevision}, not ${moved}`,
    (await getStatus(s.env.deps.db, d))?.pendingRevision === moved,
  );
  converged = (await applied(revA, revisionA)) && converged;
  await s.mustSurvive(revA);

  const open = s.chance(0.5);
  if (open && moved) {
    await registerGate(s.deps(), { name: gate, default: 'open' });
    const through = await s.run('gate opened', d);
    s.expect(
      `gate opened: expected Succeeded ${moved}, got ${through.reason} ${through.revision}`,
      through.outcome === 'Succeeded' && through.revision === moved,
    );
    converged = (await applied(revC, moved)) && converged;
    await s.mustSurvive(revC);
  }
  const label = `tag ${mode}, moved before the ${point}${drift ? ', drift' : ''}${open ? ', then opened' : ''}`;
  return s.report('tag-move', label, converged, await s.orphans([d], kinds));
}

const MINUTE = 60_000;
const offsetClock = (ms: number): Clock => ({ ...systemClock, now: () => new Date(Date.now() + ms) });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * A holder applies revision 2 through the kube fault proxy, stuck on one of its writes while it
 * renews its lease; the tag moves to revision 3; one or two claimants with clocks -5..+5 min off
 * (reconciles or removals) come meanwhile. They must skip without even connecting to the cluster;
 * the holder finishes revision 2; the next run applies revision 3.
 */
async function clockSkew(env: AttackEnv, seed: number): Promise<AttackReport> {
  const s = new Scene(env, seed, 'skw');
  const ns = s.name('ns');
  await s.createNamespace(ns);
  const d = s.name('d');
  const repository = `attack/${s.tag}/app`;
  const kinds = CORE_KINDS;
  await s.register(d, repository, { pruneLimit: '100%', deletionPolicy: 'Delete' });
  const rev1 = configMaps(s, ns, 'one', 6);
  await s.setUp(d, await s.push(repository, rev1));
  // Every object of revision 2 has new content: the holder applies each, then prunes what revision 1
  // alone had, and is stuck on one of those writes.
  const rev2 = configMaps(s, ns, 'two', 6);
  const writes = rev2.length + rev1.filter((o) => !rev2.some((r) => idOf(r) === idOf(o))).length;
  const revision2 = await s.push(repository, rev2);

  const stuckAt = s.int(0, writes - 1);
  const ttl = s.int(1_500, 3_000);
  const holderOffset = s.chance(0.5) ? Math.round((s.random() * 2 - 1) * 5 * MINUTE) : 0;
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let seen = 0;
  let stuck = false;
  env.proxy.plan({
    beforeForward: async ({ write }) => {
      if (!write || seen++ !== stuckAt) return;
      stuck = true;
      await released;
    },
  });
  let holderDone = false;
  const holder = reconcile(
    d,
    s.deps({
      leaseTtlMs: ttl,
      clock: offsetClock(holderOffset),
      connect: async () => env.proxy.kubeConfig(),
    }),
  ).finally(() => (holderDone = true));
  const claims: string[] = [];
  try {
    for (let waited = 0; !stuck && !holderDone && waited < 30_000; waited += 20) await sleep(20);
    if (!stuck) throw new Error(`seed ${seed}: the holder was never stuck at write ${stuckAt}`);
    const rev3 = configMaps(s, ns, 'three', 6);
    const revision3 = await s.push(repository, rev3);
    const claimants = Array.from({ length: s.int(1, 2) }, () => ({
      offset: Math.round((s.random() * 2 - 1) * 5 * MINUTE),
      removal: s.chance(0.3),
    }));
    await Promise.all(
      claimants.map(async ({ offset, removal }, i) => {
        const connected: string[] = [];
        const deps = s.deps({
          clock: offsetClock(offset),
          connect: async () => {
            connected.push('connect');
            return env.kubeConfig;
          },
        });
        const who = `claimant ${i + 1} (${removal ? 'removal' : 'reconcile'}, clock ${offset >= 0 ? '+' : ''}${(offset / 1000).toFixed(0)}s)`;
        claims.push(who);
        if (removal) {
          const error = await deleteDelivery(d, deps).then(
            () => undefined,
            (e: unknown) => String(e),
          );
          s.steps.push(`${who}: ${error ? 'refused' : 'removed the delivery'}`);
          s.expect(
            `${who} was not refused: ${error}`,
            error?.includes('is being reconciled right now') === true,
          );
        } else {
          const result = await reconcile(d, deps);
          s.steps.push(`${who}: ${describeRun(result)}`);
          s.expect(`${who}: ${result.reason}`, result.reason === 'LeaseHeld');
        }
        s.expect(`${who} connected to the cluster`, connected.length === 0);
      }),
    );
    release();
    const result = await holder;
    env.proxy.plan({});
    s.steps.push(`holder: ${describeRun(result)}`);
    s.expect(
      `holder: expected Succeeded ${revision2}, got ${result.reason} ${result.revision}: ${result.message}`,
      result.outcome === 'Succeeded' && result.revision === revision2,
    );
    const registered = (await getDelivery(s.env.deps.db, d)) !== undefined;
    s.expect(`${d} is no longer registered`, registered);
    let converged = registered && (await s.convergedTo(d, rev2, revision2, kinds));
    await s.mustSurvive(rev2);
    if (registered) {
      const after = await s.run('next run', d);
      s.expect(
        `next run: expected Succeeded ${revision3}, got ${after.reason} ${after.revision}`,
        after.outcome === 'Succeeded' && after.revision === revision3,
      );
      converged = (await s.convergedTo(d, rev3, revision3, kinds)) && converged;
    }
    const label =
      `holder (ttl ${ttl} ms, clock ${(holderOffset / 1000).toFixed(0)}s) stuck at write ${stuckAt + 1} of ${writes}; ` +
      claims.join(', ');
    return s.report('clock-skew', label, converged, await s.orphans([d], kinds));
  } finally {
    release();
    env.proxy.plan({});
    await holder.catch(() => undefined);
  }
}
