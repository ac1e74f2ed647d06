import type { KubernetesObject } from '@kubernetes/client-node';
import { describeObject } from '../manifests/objects.ts';

/** Only Current is ready. Terminating: being deleted (`metadata.deletionTimestamp` is set). */
export type HealthStatus = 'Current' | 'InProgress' | 'Failed' | 'Terminating';

export interface Health {
  readonly status: HealthStatus;
  /** Names the object (`Deployment/default/web: 1 of 3 replicas updated`). */
  readonly message: string;
}

/** A live object as the API server returns it (plain JSON, or a typed client-node object). */
export type LiveObject = KubernetesObject | { readonly [key: string]: unknown };

interface Condition {
  readonly type: string;
  readonly status: string;
  readonly reason?: string;
  readonly message?: string;
}

type Rule = (o: Fields, say: Say) => Health;
type Say = (status: HealthStatus, message: string) => Health;

/**
 * Whether a live object is ready, by the rules of kstatus (sigs.k8s.io/cli-utils/pkg/kstatus/status,
 * `Compute`): generic checks first (deletion, generation observed, Reconciling/Stalled conditions),
 * then the rules of the built-in kind, then the `Ready` condition for any other kind. Conditions are
 * read in list order where kstatus reads them so: the first one that decides wins.
 * test/core/kube/kstatus-conformance.test.ts runs kstatus's own test cases against it.
 *
 * Where sluice deliberately differs from kstatus (each tested there as a deviation):
 * - a Job is InProgress until it completes, as Flux's Job status reader; kstatus calls a started Job
 *   Current. A Job that `wait` let through while it runs could fail after the run succeeded.
 * - a Pod in phase Failed is Failed; kstatus calls it Current (it ran to completion). It will not recover.
 * - an unschedulable Pod stays InProgress; kstatus calls it Failed 15 seconds after creation. Karpenter
 *   (or the cluster autoscaler) adds a node for it in minutes, and the timeout still bounds the wait.
 * - a LoadBalancer Service waits for an address in `status.loadBalancer.ingress`; kstatus waits only for
 *   a cluster IP, which the API server assigns at once, so clients could not reach it yet.
 * - a Lost PersistentVolumeClaim is Failed (its volume is gone); kstatus says InProgress.
 * - CrashLoopBackOff in any container, init containers too, in any phase, is Failed; kstatus looks only
 *   at the containers of a Running Pod.
 * - a Pod in an unknown phase is InProgress; kstatus errs (its poller reports Unknown).
 * - an object not found is not assessed here; waitForHealthy keeps waiting for it (kstatus: NotFound).
 */
export function assessHealth(object: LiveObject): Health {
  const o = new Fields(object);
  const name = describeObject(object as KubernetesObject);
  const say: Say = (status, message) => ({ status, message: `${name}: ${message}` });
  const rule = RULES[groupKind(object)] ?? readyCondition;
  return generic(o, say) ?? rule(o, say);
}

/** kstatus's checks for every kind, which decide before the kind's own rules when they can. */
function generic(o: Fields, say: Say): Health | undefined {
  if (o.str('metadata', 'deletionTimestamp')) return say('Terminating', 'being deleted');
  const generation = o.num('metadata', 'generation');
  const observed = o.num('status', 'observedGeneration');
  if (generation !== undefined && observed !== undefined && generation !== observed) {
    return say('InProgress', `generation ${generation} not yet observed (observed ${observed})`);
  }
  const standard = o.conditions().find((c) => c.status === 'True' && STANDARD.has(c.type));
  if (standard?.type === 'Reconciling') return say('InProgress', `reconciling${detail(standard)}`);
  if (standard?.type === 'Stalled') return say('Failed', `stalled${detail(standard)}`);
  return undefined;
}

/** kstatus's standard conditions, abnormal when True. */
const STANDARD = new Set(['Reconciling', 'Stalled']);

const RULES: Record<string, Rule> = {
  'apps/Deployment': deployment,
  'extensions/Deployment': deployment,
  'apps/StatefulSet': statefulSet,
  'apps/DaemonSet': daemonSet,
  'extensions/DaemonSet': daemonSet,
  'apps/ReplicaSet': replicaSet,
  'extensions/ReplicaSet': replicaSet,
  'batch/Job': job,
  Service: service,
  PersistentVolumeClaim: persistentVolumeClaim,
  Pod: pod,
  'apiextensions.k8s.io/CustomResourceDefinition': customResourceDefinition,
  // Ready once they exist (and any generic check passes), whatever conditions they carry.
  ConfigMap: alwaysCurrent,
  Secret: alwaysCurrent,
  'batch/CronJob': alwaysCurrent,
  'policy/PodDisruptionBudget': alwaysCurrent,
};

function alwaysCurrent(_o: Fields, say: Say): Health {
  return say('Current', 'current');
}

/** The controller's "no deadline" for `progressDeadlineSeconds`. */
const MAX_INT32 = 2 ** 31 - 1;

function deployment(o: Fields, say: Say): Health {
  const progressingConditions = o.conditions().filter((c) => c.type === 'Progressing');
  const exceeded = progressingConditions.find((c) => c.reason === 'ProgressDeadlineExceeded');
  if (exceeded) return say('Failed', `progress deadline exceeded${detail({ message: exceeded.message })}`);
  // Without a deadline the controller never sets Progressing.
  const deadline = o.num('spec', 'progressDeadlineSeconds') ?? MAX_INT32;
  const progressing =
    deadline === MAX_INT32 ||
    progressingConditions.some((c) => c.status === 'True' && c.reason === 'NewReplicaSetAvailable');
  const available = o.condition('Available', 'True') !== undefined;

  const spec = o.num('spec', 'replicas') ?? 1;
  const replicas = o.num('status', 'replicas') ?? 0;
  const updated = o.num('status', 'updatedReplicas') ?? 0;
  const ready = o.num('status', 'readyReplicas') ?? 0;
  const availableReplicas = o.num('status', 'availableReplicas') ?? 0;

  if (spec > replicas) return say('InProgress', `${replicas} of ${spec} replicas created`);
  if (spec > updated) return say('InProgress', `${updated} of ${spec} replicas updated`);
  if (replicas > spec) return say('InProgress', `${replicas - spec} old replicas pending termination`);
  if (updated > availableReplicas) {
    return say('InProgress', `${availableReplicas} of ${updated} updated replicas available`);
  }
  if (spec > ready) return say('InProgress', `${ready} of ${spec} replicas ready`);
  if (!progressing) return say('InProgress', 'new ReplicaSet not yet available');
  if (!available) return say('InProgress', 'Available condition is not True');
  return say('Current', `available, ${replicas} ${plural(replicas, 'replica')}`);
}

function statefulSet(o: Fields, say: Say): Health {
  if (o.str('spec', 'updateStrategy', 'type') === 'OnDelete') {
    return say('Current', 'uses the OnDelete update strategy; rollouts are manual');
  }
  const spec = o.num('spec', 'replicas') ?? 1;
  const replicas = o.num('status', 'replicas') ?? 0;
  const ready = o.num('status', 'readyReplicas') ?? 0;
  const current = o.num('status', 'currentReplicas') ?? 0;
  const updated = o.num('status', 'updatedReplicas') ?? 0;
  const partition = o.num('spec', 'updateStrategy', 'rollingUpdate', 'partition');

  if (spec > replicas) return say('InProgress', `${replicas} of ${spec} replicas created`);
  if (spec > ready) return say('InProgress', `${ready} of ${spec} replicas ready`);
  if (replicas > spec) return say('InProgress', `${replicas - spec} replicas pending termination`);
  if (partition !== undefined) {
    const expected = Math.max(spec - partition, 0);
    if (updated < expected) {
      return say('InProgress', `${updated} of ${expected} replicas above partition ${partition} updated`);
    }
    return say('Current', `partitioned rollout complete, ${updated} ${plural(updated, 'replica')} updated`);
  }
  if (spec > current) return say('InProgress', `${current} of ${spec} replicas at the current revision`);
  const currentRevision = o.str('status', 'currentRevision') ?? '';
  const updateRevision = o.str('status', 'updateRevision') ?? '';
  if (currentRevision !== updateRevision) {
    return say('InProgress', `rolling out revision ${updateRevision} (current ${currentRevision || 'none'})`);
  }
  return say(
    'Current',
    `${replicas} ${plural(replicas, 'replica')} ready at revision ${updateRevision || 'none'}`,
  );
}

function daemonSet(o: Fields, say: Say): Health {
  // The controller always sets these once it has acted, so their absence means "not yet".
  if (o.num('metadata', 'generation') === undefined || o.num('status', 'observedGeneration') === undefined) {
    return say('InProgress', 'not yet observed by the DaemonSet controller');
  }
  const desired = o.num('status', 'desiredNumberScheduled');
  if (desired === undefined) return say('InProgress', 'desired number of pods not yet computed');
  const current = o.num('status', 'currentNumberScheduled') ?? 0;
  const updated = o.num('status', 'updatedNumberScheduled') ?? 0;
  const available = o.num('status', 'numberAvailable') ?? 0;
  const ready = o.num('status', 'numberReady') ?? 0;

  if (desired > current) return say('InProgress', `${current} of ${desired} pods scheduled`);
  if (desired > updated) return say('InProgress', `${updated} of ${desired} pods updated`);
  if (desired > available) return say('InProgress', `${available} of ${desired} pods available`);
  if (desired > ready) return say('InProgress', `${ready} of ${desired} pods ready`);
  return say('Current', `${desired} ${plural(desired, 'pod')} scheduled, updated and ready`);
}

function replicaSet(o: Fields, say: Say): Health {
  const failure = o.condition('ReplicaFailure', 'True');
  if (failure) return say('InProgress', `replica failure${detail(failure)}`);
  const spec = o.num('spec', 'replicas') ?? 1;
  const replicas = o.num('status', 'replicas') ?? 0;
  const labelled = o.num('status', 'fullyLabeledReplicas') ?? 0;
  const available = o.num('status', 'availableReplicas') ?? 0;
  const ready = o.num('status', 'readyReplicas') ?? 0;

  if (spec > labelled) return say('InProgress', `${labelled} of ${spec} replicas labelled`);
  if (spec > available) return say('InProgress', `${available} of ${spec} replicas available`);
  if (spec > ready) return say('InProgress', `${ready} of ${spec} replicas ready`);
  if (replicas > spec) return say('InProgress', `${replicas - spec} replicas pending termination`);
  return say('Current', `available, ${replicas} ${plural(replicas, 'replica')}`);
}

function job(o: Fields, say: Say): Health {
  const parallelism = o.num('spec', 'parallelism') ?? 1;
  const completions = o.num('spec', 'completions') ?? parallelism;
  const succeeded = o.num('status', 'succeeded') ?? 0;
  const failed = o.num('status', 'failed') ?? 0;
  const active = o.num('status', 'active') ?? 0;

  const ended = jobEnd(o);
  if (ended?.type === 'Failed') {
    return say(
      'Failed',
      `failed (${failed} failed, ${succeeded} of ${completions} succeeded)${detail(ended)}`,
    );
  }
  if (ended?.type === 'Complete') return say('Current', `complete, ${succeeded} of ${completions} succeeded`);
  // A suspended Job is held on purpose (kstatus and Flux count it as Current); waiting would never end.
  if (ended?.type === 'Suspended') return say('Current', 'suspended');
  if (!o.get('status', 'startTime')) return say('InProgress', 'not started yet');
  // Deviation from kstatus, which calls a started Job Current: it must complete (see assessHealth).
  return say(
    'InProgress',
    `running, ${active} active, ${succeeded} of ${completions} succeeded, ${failed} failed`,
  );
}

/**
 * The first True condition, in list order, that settles a Job. `Suspended` counts only while
 * `spec.suspend` is true: a Job this apply resumes still carries it until the controller acts.
 */
function jobEnd(o: Fields): Condition | undefined {
  const suspend = o.get('spec', 'suspend') === true;
  const settles = (type: string) =>
    type === 'Complete' || type === 'Failed' || (type === 'Suspended' && suspend);
  return o.conditions().find((c) => c.status === 'True' && settles(c.type));
}

function service(o: Fields, say: Say): Health {
  if (o.str('spec', 'type') === 'LoadBalancer') {
    const ingress = o.get('status', 'loadBalancer', 'ingress');
    if (!Array.isArray(ingress) || ingress.length === 0) {
      return say('InProgress', 'waiting for the load balancer address');
    }
  }
  return say('Current', 'ready');
}

function persistentVolumeClaim(o: Fields, say: Say): Health {
  const phase = o.str('status', 'phase');
  if (phase === 'Bound') return say('Current', 'Bound');
  // Lost: the bound volume is gone; the claim cannot recover on its own (kstatus: InProgress).
  if (phase === 'Lost') return say('Failed', 'Lost (its volume no longer exists)');
  return say('InProgress', `${phase ?? 'no phase yet'}, not yet Bound`);
}

function pod(o: Fields, say: Say): Health {
  const phase = o.str('status', 'phase');
  if (phase === 'Succeeded') return say('Current', 'Succeeded');
  // kstatus calls a Failed Pod Current (it ran to completion); it will not recover, so fail the wait.
  if (phase === 'Failed') {
    return say(
      'Failed',
      `Failed${detail({ reason: o.str('status', 'reason'), message: o.str('status', 'message') })}`,
    );
  }
  if (phase === 'Running' && o.condition('Ready', 'True')) return say('Current', 'Ready');
  if (phase === undefined) return say('InProgress', 'no phase yet');

  // Unlike kstatus, init containers and any phase count: a crash-looping init container blocks too.
  const waiting = waitingContainers(o);
  const crashLooping = waiting.filter((w) => w.reason === 'CrashLoopBackOff').map((w) => w.name);
  if (crashLooping.length > 0)
    return say('Failed', `containers in CrashLoopBackOff: ${crashLooping.join(', ')}`);
  // Deviation from kstatus, which calls it Failed after 15 seconds: a new node may be on its way.
  const scheduled = o.condition('PodScheduled', 'False');
  if (scheduled?.reason === 'Unschedulable') {
    return say('InProgress', `not scheduled${detail({ message: scheduled.message })}`);
  }
  const stuck = waiting.filter(
    (w) => w.reason && w.reason !== 'ContainerCreating' && w.reason !== 'PodInitializing',
  );
  const why = stuck.length ? ` (${stuck.map((w) => `${w.name}: ${w.reason}`).join(', ')})` : '';
  return say('InProgress', phase === 'Running' ? `Running but not Ready${why}` : `${phase}${why}`);
}

function waitingContainers(o: Fields): Array<{ name: string; reason?: string }> {
  const statuses = [
    ...arrayOf(o.get('status', 'initContainerStatuses')),
    ...arrayOf(o.get('status', 'containerStatuses')),
  ];
  return statuses.flatMap((s) => {
    const f = new Fields(s);
    if (!f.get('state', 'waiting')) return [];
    return [{ name: f.str('name') ?? '?', reason: f.str('state', 'waiting', 'reason') }];
  });
}

function customResourceDefinition(o: Fields, say: Say): Health {
  for (const c of o.conditions()) {
    if (c.type === 'NamesAccepted' && c.status === 'False') {
      return say('Failed', `names not accepted${detail(c)}`);
    }
    if (c.type !== 'Established') continue;
    if (c.status === 'True') return say('Current', 'Established');
    if (c.status === 'False' && c.reason !== 'Installing') {
      return say('Failed', `not Established${detail(c)}`);
    }
  }
  return say('InProgress', 'not yet Established');
}

/**
 * Any other kind: its first `Ready` condition that says True, False or Unknown; without one,
 * Current (kstatus's default). kstatus skips a Ready condition without such a status.
 */
function readyCondition(o: Fields, say: Say): Health {
  const ready = o.conditions().find((c) => c.type === 'Ready' && READY_VALUES.has(c.status));
  if (!ready) return say('Current', 'current');
  if (ready.status === 'True') return say('Current', `Ready${detail({ message: ready.message })}`);
  return say('InProgress', `not Ready${detail(ready)}`);
}

/** Reads fields of a live object without trusting its shape. */
class Fields {
  constructor(private readonly root: unknown) {}

  get(...path: string[]): unknown {
    let value: unknown = this.root;
    for (const key of path) {
      if (typeof value !== 'object' || value === null) return undefined;
      value = (value as Record<string, unknown>)[key];
    }
    return value;
  }

  num(...path: string[]): number | undefined {
    const value = this.get(...path);
    return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
  }

  str(...path: string[]): string | undefined {
    const value = this.get(...path);
    return typeof value === 'string' ? value : undefined;
  }

  /** `status.conditions` in list order; a missing status reads as '' (neither True nor False). */
  conditions(): Condition[] {
    return arrayOf(this.get('status', 'conditions')).flatMap((c) => {
      const f = new Fields(c);
      const type = f.str('type');
      if (type === undefined) return [];
      return [{ type, status: f.str('status') ?? '', reason: f.str('reason'), message: f.str('message') }];
    });
  }

  /** The first condition of a type (and status, when given). */
  condition(type: string, status?: string): Condition | undefined {
    return this.conditions().find((c) => c.type === type && (status === undefined || c.status === status));
  }
}

function arrayOf(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

/** `apps/Deployment`, or `Service` for the core group: how kinds are matched, whatever the version. */
export function groupKind(object: { readonly apiVersion?: unknown; readonly kind?: unknown }): string {
  const apiVersion = typeof object.apiVersion === 'string' ? object.apiVersion : '';
  const kind = typeof object.kind === 'string' ? object.kind : '';
  const slash = apiVersion.indexOf('/');
  return slash < 0 ? kind : `${apiVersion.slice(0, slash)}/${kind}`;
}

/** `: Reason: message` from a condition, leaving out what it does not have. */
function detail(c: { reason?: string | undefined; message?: string | undefined }): string {
  const parts = [c.reason, c.message].filter((p): p is string => Boolean(p));
  return parts.length ? `: ${parts.join(': ')}` : '';
}

const READY_VALUES = new Set(['True', 'False', 'Unknown']);

function plural(n: number, word: string): string {
  return n === 1 ? word : `${word}s`;
}
