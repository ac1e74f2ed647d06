import type { KubernetesObject } from '@kubernetes/client-node';
import { describeObject } from '../manifests/objects.ts';

export type HealthStatus = 'Current' | 'InProgress' | 'Failed';

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
 * Whether a live object is ready, by the rules of kstatus (sigs.k8s.io/cli-utils/pkg/kstatus):
 * generic checks first (deletion, generation observed, Reconciling/Stalled conditions), then
 * the rules of the built-in kind, then the `Ready` condition for any other kind.
 */
export function assessHealth(object: LiveObject): Health {
  const o = new Fields(object);
  const name = describeObject(object as KubernetesObject);
  const say: Say = (status, message) => ({ status, message: `${name}: ${message}` });

  if (o.get('metadata', 'deletionTimestamp')) return say('InProgress', 'being deleted');
  const generation = o.num('metadata', 'generation');
  const observed = o.num('status', 'observedGeneration');
  if (generation !== undefined && observed !== undefined && generation !== observed) {
    return say('InProgress', `generation ${generation} not yet observed (observed ${observed})`);
  }
  const reconciling = o.condition('Reconciling');
  if (reconciling?.status === 'True') return say('InProgress', `reconciling${detail(reconciling)}`);
  const stalled = o.condition('Stalled');
  if (stalled?.status === 'True') return say('Failed', `stalled${detail(stalled)}`);

  const rule = RULES[groupKind(object)];
  return rule ? rule(o, say) : readyCondition(o, say);
}

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
};

function deployment(o: Fields, say: Say): Health {
  const progressingCondition = o.condition('Progressing');
  if (progressingCondition?.reason === 'ProgressDeadlineExceeded') {
    return say('Failed', `progress deadline exceeded${detail({ message: progressingCondition.message })}`);
  }
  // Without progressDeadlineSeconds the controller never sets Progressing (kstatus: MaxInt32).
  const progressing =
    o.num('spec', 'progressDeadlineSeconds') === undefined ||
    (progressingCondition?.status === 'True' && progressingCondition.reason === 'NewReplicaSetAvailable');
  const available = o.condition('Available')?.status === 'True';

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
  const failure = o.condition('ReplicaFailure');
  if (failure?.status === 'True') return say('InProgress', `replica failure${detail(failure)}`);
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

  const failedCondition = o.condition('Failed');
  if (failedCondition?.status === 'True') {
    return say(
      'Failed',
      `failed (${failed} failed, ${succeeded} of ${completions} succeeded)${detail(failedCondition)}`,
    );
  }
  if (o.condition('Complete')?.status === 'True') {
    return say('Current', `complete, ${succeeded} of ${completions} succeeded`);
  }
  // A suspended Job is held on purpose (kstatus counts it as Current); waiting would never end.
  if (o.condition('Suspended')?.status === 'True') return say('Current', 'suspended');
  if (!o.get('status', 'startTime')) return say('InProgress', 'not started yet');
  return say(
    'InProgress',
    `running, ${active} active, ${succeeded} of ${completions} succeeded, ${failed} failed`,
  );
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
  // Lost: the bound volume is gone; the claim cannot recover on its own.
  if (phase === 'Lost') return say('Failed', 'Lost (its volume no longer exists)');
  return say('InProgress', `${phase ?? 'no phase yet'}, not yet Bound`);
}

function pod(o: Fields, say: Say): Health {
  const phase = o.str('status', 'phase');
  if (phase === 'Succeeded') return say('Current', 'Succeeded');
  if (phase === 'Failed') {
    return say(
      'Failed',
      `Failed${detail({ reason: o.str('status', 'reason'), message: o.str('status', 'message') })}`,
    );
  }
  if (o.condition('Ready')?.status === 'True') return say('Current', 'Ready');
  if (phase === undefined) return say('InProgress', 'no phase yet');

  const waiting = waitingContainers(o);
  const crashLooping = waiting.filter((w) => w.reason === 'CrashLoopBackOff').map((w) => w.name);
  if (crashLooping.length > 0)
    return say('Failed', `containers in CrashLoopBackOff: ${crashLooping.join(', ')}`);
  const scheduled = o.condition('PodScheduled');
  if (scheduled?.status === 'False' && scheduled.reason === 'Unschedulable') {
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
  const names = o.condition('NamesAccepted');
  if (names?.status === 'False') return say('Failed', `names not accepted${detail(names)}`);
  const established = o.condition('Established');
  if (established?.status === 'True') return say('Current', 'Established');
  if (established?.status === 'False' && established.reason !== 'Installing') {
    return say('Failed', `not Established${detail(established)}`);
  }
  return say('InProgress', 'not yet Established');
}

/** Any other kind: its `Ready` condition if it has one, else Current (kstatus's default). */
function readyCondition(o: Fields, say: Say): Health {
  const ready = o.condition('Ready');
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

  condition(type: string): Condition | undefined {
    for (const c of arrayOf(this.get('status', 'conditions'))) {
      const f = new Fields(c);
      if (f.str('type') === type) {
        return {
          type,
          status: f.str('status') ?? 'Unknown',
          reason: f.str('reason'),
          message: f.str('message'),
        };
      }
    }
    return undefined;
  }
}

function arrayOf(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

function groupKind(object: LiveObject): string {
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

function plural(n: number, word: string): string {
  return n === 1 ? word : `${word}s`;
}
