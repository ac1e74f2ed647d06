import { describe, expect, it } from 'vitest';
import { assessHealth, type HealthStatus } from '../../../functions/core/kube/health.ts';

type Obj = Record<string, unknown>;

interface Case {
  readonly name: string;
  readonly object: Obj;
  readonly status: HealthStatus;
  readonly message: string;
}

const meta = (name: string, namespace: string | undefined, extra: Obj = {}) => ({
  name,
  ...(namespace ? { namespace } : {}),
  generation: 1,
  ...extra,
});
const cond = (type: string, status: string, reason?: string, message?: string) => ({
  type,
  status,
  ...(reason ? { reason } : {}),
  ...(message ? { message } : {}),
});

function deployment(spec: Obj, status: Obj): Obj {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: meta('web', 'default'),
    spec: { progressDeadlineSeconds: 600, ...spec },
    status: { observedGeneration: 1, ...status },
  };
}
const rolledOut = {
  replicas: 3,
  updatedReplicas: 3,
  readyReplicas: 3,
  availableReplicas: 3,
  conditions: [
    cond('Available', 'True', 'MinimumReplicasAvailable'),
    cond('Progressing', 'True', 'NewReplicaSetAvailable'),
  ],
};

function statefulSet(spec: Obj, status: Obj): Obj {
  return {
    apiVersion: 'apps/v1',
    kind: 'StatefulSet',
    metadata: meta('db', 'data'),
    spec: { replicas: 3, updateStrategy: { type: 'RollingUpdate' }, ...spec },
    status: { observedGeneration: 1, ...status },
  };
}
const stsDone = {
  replicas: 3,
  readyReplicas: 3,
  currentReplicas: 3,
  updatedReplicas: 3,
  currentRevision: 'db-7d9f',
  updateRevision: 'db-7d9f',
};

function daemonSet(status: Obj | undefined, metadata: Obj = meta('agent', 'kube-system')): Obj {
  return { apiVersion: 'apps/v1', kind: 'DaemonSet', metadata, spec: {}, ...(status ? { status } : {}) };
}
const dsDone = {
  observedGeneration: 1,
  desiredNumberScheduled: 2,
  currentNumberScheduled: 2,
  updatedNumberScheduled: 2,
  numberAvailable: 2,
  numberReady: 2,
};

function replicaSet(status: Obj): Obj {
  return {
    apiVersion: 'apps/v1',
    kind: 'ReplicaSet',
    metadata: meta('web-5d8f', 'default'),
    spec: { replicas: 2 },
    status: { observedGeneration: 1, ...status },
  };
}

function job(status: Obj, spec: Obj = {}): Obj {
  return { apiVersion: 'batch/v1', kind: 'Job', metadata: meta('migrate', 'default'), spec, status };
}

function service(spec: Obj, status: Obj = {}): Obj {
  return { apiVersion: 'v1', kind: 'Service', metadata: { name: 'web', namespace: 'default' }, spec, status };
}

function pvc(status: Obj | undefined): Obj {
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: { name: 'data', namespace: 'default' },
    spec: {},
    ...(status ? { status } : {}),
  };
}

function crd(conditions: Obj[]): Obj {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: meta('widgets.example.com', undefined),
    spec: {},
    status: { conditions },
  };
}

function pod(status: Obj | undefined): Obj {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'web-0', namespace: 'default' },
    spec: {},
    ...(status ? { status } : {}),
  };
}
const waitingIn = (name: string, reason: string) => ({ name, state: { waiting: { reason } } });

function custom(status: Obj | undefined, metadata: Obj = meta('w1', 'default')): Obj {
  return { apiVersion: 'example.com/v1', kind: 'Widget', metadata, ...(status ? { status } : {}) };
}

const cases: Case[] = [
  // generic rules
  {
    name: 'an object being deleted',
    object: custom(undefined, meta('w1', 'default', { deletionTimestamp: '2024-05-17T09:30:05Z' })),
    status: 'Terminating',
    message: 'Widget/default/w1: being deleted',
  },
  {
    name: 'a generation not yet observed',
    object: deployment({ replicas: 3 }, { ...rolledOut, observedGeneration: 0 }),
    status: 'InProgress',
    message: 'Deployment/default/web: generation 1 not yet observed (observed 0)',
  },
  {
    name: 'Reconciling=True',
    object: custom({
      observedGeneration: 1,
      conditions: [cond('Reconciling', 'True', 'Progressing', 'applying')],
    }),
    status: 'InProgress',
    message: 'Widget/default/w1: reconciling: Progressing: applying',
  },
  {
    name: 'Stalled=True',
    object: custom({
      observedGeneration: 1,
      conditions: [
        cond('Ready', 'False', 'Failed'),
        cond('Stalled', 'True', 'InvalidSpec', 'size must be positive'),
      ],
    }),
    status: 'Failed',
    message: 'Widget/default/w1: stalled: InvalidSpec: size must be positive',
  },

  // Deployment
  {
    name: 'a rolled-out Deployment',
    object: deployment({ replicas: 3 }, rolledOut),
    status: 'Current',
    message: 'Deployment/default/web: available, 3 replicas',
  },
  {
    name: 'a Deployment without spec.replicas defaults to 1',
    object: deployment(
      {},
      { ...rolledOut, replicas: 1, updatedReplicas: 1, readyReplicas: 1, availableReplicas: 1 },
    ),
    status: 'Current',
    message: 'Deployment/default/web: available, 1 replica',
  },
  {
    name: 'a Deployment with too few replicas',
    object: deployment({ replicas: 3 }, { ...rolledOut, replicas: 2, updatedReplicas: 2 }),
    status: 'InProgress',
    message: 'Deployment/default/web: 2 of 3 replicas created',
  },
  {
    name: 'a Deployment mid-update',
    object: deployment({ replicas: 3 }, { ...rolledOut, updatedReplicas: 1 }),
    status: 'InProgress',
    message: 'Deployment/default/web: 1 of 3 replicas updated',
  },
  {
    name: 'a Deployment with old replicas terminating',
    object: deployment({ replicas: 3 }, { ...rolledOut, replicas: 4 }),
    status: 'InProgress',
    message: 'Deployment/default/web: 1 old replicas pending termination',
  },
  {
    name: 'a Deployment with updated replicas not yet available',
    object: deployment({ replicas: 3 }, { ...rolledOut, availableReplicas: 2 }),
    status: 'InProgress',
    message: 'Deployment/default/web: 2 of 3 updated replicas available',
  },
  {
    name: 'a Deployment with replicas not ready',
    object: deployment({ replicas: 3 }, { ...rolledOut, readyReplicas: 2 }),
    status: 'InProgress',
    message: 'Deployment/default/web: 2 of 3 replicas ready',
  },
  {
    name: 'a Deployment whose new ReplicaSet is not yet available',
    object: deployment(
      { replicas: 3 },
      {
        ...rolledOut,
        conditions: [cond('Available', 'True'), cond('Progressing', 'True', 'ReplicaSetUpdated')],
      },
    ),
    status: 'InProgress',
    message: 'Deployment/default/web: new ReplicaSet not yet available',
  },
  {
    name: 'a Deployment without progressDeadlineSeconds needs no Progressing condition',
    object: {
      ...deployment({ replicas: 3 }, { ...rolledOut, conditions: [cond('Available', 'True')] }),
      spec: { replicas: 3 },
    },
    status: 'Current',
    message: 'Deployment/default/web: available, 3 replicas',
  },
  {
    name: 'a Deployment that is not Available',
    object: deployment(
      { replicas: 3 },
      {
        ...rolledOut,
        conditions: [cond('Available', 'False', 'MinimumReplicasUnavailable'), rolledOut.conditions[1]],
      },
    ),
    status: 'InProgress',
    message: 'Deployment/default/web: Available condition is not True',
  },
  {
    name: 'a Deployment past its progress deadline',
    object: deployment(
      { replicas: 3 },
      {
        ...rolledOut,
        updatedReplicas: 1,
        conditions: [
          cond('Available', 'True'),
          cond(
            'Progressing',
            'False',
            'ProgressDeadlineExceeded',
            'ReplicaSet "web-5d8f" has timed out progressing.',
          ),
        ],
      },
    ),
    status: 'Failed',
    message:
      'Deployment/default/web: progress deadline exceeded: ReplicaSet "web-5d8f" has timed out progressing.',
  },

  // StatefulSet
  {
    name: 'a rolled-out StatefulSet',
    object: statefulSet({}, stsDone),
    status: 'Current',
    message: 'StatefulSet/data/db: 3 replicas ready at revision db-7d9f',
  },
  {
    name: 'a StatefulSet with too few replicas',
    object: statefulSet({}, { ...stsDone, replicas: 1 }),
    status: 'InProgress',
    message: 'StatefulSet/data/db: 1 of 3 replicas created',
  },
  {
    name: 'a StatefulSet with replicas not ready',
    object: statefulSet({}, { ...stsDone, readyReplicas: 2 }),
    status: 'InProgress',
    message: 'StatefulSet/data/db: 2 of 3 replicas ready',
  },
  {
    name: 'a StatefulSet scaling down',
    object: statefulSet({}, { ...stsDone, replicas: 5, readyReplicas: 5 }),
    status: 'InProgress',
    message: 'StatefulSet/data/db: 2 replicas pending termination',
  },
  {
    name: 'a StatefulSet with replicas not at the current revision',
    object: statefulSet({}, { ...stsDone, currentReplicas: 2 }),
    status: 'InProgress',
    message: 'StatefulSet/data/db: 2 of 3 replicas at the current revision',
  },
  {
    name: 'a StatefulSet rolling out a new revision',
    object: statefulSet({}, { ...stsDone, updateRevision: 'db-8a1c', updatedReplicas: 1 }),
    status: 'InProgress',
    message: 'StatefulSet/data/db: rolling out revision db-8a1c (current db-7d9f)',
  },
  {
    name: 'a StatefulSet partitioned rollout in progress',
    object: statefulSet(
      { updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: 1 } } },
      { ...stsDone, updateRevision: 'db-8a1c', updatedReplicas: 1 },
    ),
    status: 'InProgress',
    message: 'StatefulSet/data/db: 1 of 2 replicas above partition 1 updated',
  },
  {
    name: 'a StatefulSet partitioned rollout complete',
    object: statefulSet(
      { updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: 1 } } },
      { ...stsDone, updateRevision: 'db-8a1c', updatedReplicas: 2 },
    ),
    status: 'Current',
    message: 'StatefulSet/data/db: partitioned rollout complete, 2 replicas updated',
  },
  {
    name: 'a StatefulSet with the OnDelete strategy',
    object: statefulSet({ updateStrategy: { type: 'OnDelete' } }, { ...stsDone, updateRevision: 'db-8a1c' }),
    status: 'Current',
    message: 'StatefulSet/data/db: uses the OnDelete update strategy; rollouts are manual',
  },

  // DaemonSet
  {
    name: 'a rolled-out DaemonSet',
    object: daemonSet(dsDone),
    status: 'Current',
    message: 'DaemonSet/kube-system/agent: 2 pods scheduled, updated and ready',
  },
  {
    name: 'a DaemonSet its controller has not seen',
    object: daemonSet(undefined),
    status: 'InProgress',
    message: 'DaemonSet/kube-system/agent: not yet observed by the DaemonSet controller',
  },
  {
    name: 'a DaemonSet without desiredNumberScheduled',
    object: daemonSet({ observedGeneration: 1 }),
    status: 'InProgress',
    message: 'DaemonSet/kube-system/agent: desired number of pods not yet computed',
  },
  {
    name: 'a DaemonSet with pods not scheduled',
    object: daemonSet({ ...dsDone, currentNumberScheduled: 1 }),
    status: 'InProgress',
    message: 'DaemonSet/kube-system/agent: 1 of 2 pods scheduled',
  },
  {
    name: 'a DaemonSet mid-update',
    object: daemonSet({ ...dsDone, updatedNumberScheduled: 1 }),
    status: 'InProgress',
    message: 'DaemonSet/kube-system/agent: 1 of 2 pods updated',
  },
  {
    name: 'a DaemonSet with pods not available',
    object: daemonSet({ ...dsDone, numberAvailable: 0 }),
    status: 'InProgress',
    message: 'DaemonSet/kube-system/agent: 0 of 2 pods available',
  },
  {
    name: 'a DaemonSet with pods not ready',
    object: daemonSet({ ...dsDone, numberReady: 1 }),
    status: 'InProgress',
    message: 'DaemonSet/kube-system/agent: 1 of 2 pods ready',
  },

  // ReplicaSet
  {
    name: 'an available ReplicaSet',
    object: replicaSet({ replicas: 2, fullyLabeledReplicas: 2, availableReplicas: 2, readyReplicas: 2 }),
    status: 'Current',
    message: 'ReplicaSet/default/web-5d8f: available, 2 replicas',
  },
  {
    name: 'a ReplicaSet with a replica failure',
    object: replicaSet({ conditions: [cond('ReplicaFailure', 'True', 'FailedCreate', 'quota exceeded')] }),
    status: 'InProgress',
    message: 'ReplicaSet/default/web-5d8f: replica failure: FailedCreate: quota exceeded',
  },
  {
    name: 'a ReplicaSet with replicas not available',
    object: replicaSet({ replicas: 2, fullyLabeledReplicas: 2, availableReplicas: 1, readyReplicas: 2 }),
    status: 'InProgress',
    message: 'ReplicaSet/default/web-5d8f: 1 of 2 replicas available',
  },

  // Job
  {
    name: 'a complete Job',
    object: job({ startTime: 't', succeeded: 1, conditions: [cond('Complete', 'True')] }),
    status: 'Current',
    message: 'Job/default/migrate: complete, 1 of 1 succeeded',
  },
  {
    name: 'a failed Job',
    object: job(
      {
        startTime: 't',
        failed: 7,
        conditions: [
          cond('Failed', 'True', 'BackoffLimitExceeded', 'Job has reached the specified backoff limit'),
        ],
      },
      { completions: 2 },
    ),
    status: 'Failed',
    message:
      'Job/default/migrate: failed (7 failed, 0 of 2 succeeded): BackoffLimitExceeded: Job has reached the specified backoff limit',
  },
  {
    name: 'a running Job',
    object: job({ startTime: 't', active: 2, succeeded: 1 }, { parallelism: 2, completions: 3 }),
    status: 'InProgress',
    message: 'Job/default/migrate: running, 2 active, 1 of 3 succeeded, 0 failed',
  },
  {
    name: 'a Job not started',
    object: job({}),
    status: 'InProgress',
    message: 'Job/default/migrate: not started yet',
  },
  {
    name: 'a suspended Job',
    object: job({ conditions: [cond('Suspended', 'True', 'JobSuspended')] }, { suspend: true }),
    status: 'Current',
    message: 'Job/default/migrate: suspended',
  },

  // Service
  {
    name: 'a ClusterIP Service',
    object: service({ type: 'ClusterIP', clusterIP: '10.0.0.10' }),
    status: 'Current',
    message: 'Service/default/web: ready',
  },
  {
    name: 'a LoadBalancer Service without an address',
    object: service({ type: 'LoadBalancer' }, { loadBalancer: {} }),
    status: 'InProgress',
    message: 'Service/default/web: waiting for the load balancer address',
  },
  {
    name: 'a LoadBalancer Service with an address',
    object: service(
      { type: 'LoadBalancer' },
      { loadBalancer: { ingress: [{ hostname: 'k8s-web-1234.elb.eu-west-1.amazonaws.com' }] } },
    ),
    status: 'Current',
    message: 'Service/default/web: ready',
  },

  // PersistentVolumeClaim
  {
    name: 'a Bound PVC',
    object: pvc({ phase: 'Bound' }),
    status: 'Current',
    message: 'PersistentVolumeClaim/default/data: Bound',
  },
  {
    name: 'a Pending PVC',
    object: pvc({ phase: 'Pending' }),
    status: 'InProgress',
    message: 'PersistentVolumeClaim/default/data: Pending, not yet Bound',
  },
  {
    name: 'a PVC without status',
    object: pvc(undefined),
    status: 'InProgress',
    message: 'PersistentVolumeClaim/default/data: no phase yet, not yet Bound',
  },
  {
    name: 'a Lost PVC',
    object: pvc({ phase: 'Lost' }),
    status: 'Failed',
    message: 'PersistentVolumeClaim/default/data: Lost (its volume no longer exists)',
  },

  // CustomResourceDefinition
  {
    name: 'an Established CRD',
    object: crd([
      cond('NamesAccepted', 'True', 'NoConflicts'),
      cond('Established', 'True', 'InitialNamesAccepted'),
    ]),
    status: 'Current',
    message: 'CustomResourceDefinition/widgets.example.com: Established',
  },
  {
    name: 'a CRD being installed',
    object: crd([cond('NamesAccepted', 'True'), cond('Established', 'False', 'Installing')]),
    status: 'InProgress',
    message: 'CustomResourceDefinition/widgets.example.com: not yet Established',
  },
  {
    name: 'a CRD without conditions',
    object: crd([]),
    status: 'InProgress',
    message: 'CustomResourceDefinition/widgets.example.com: not yet Established',
  },
  {
    name: 'a CRD whose names conflict',
    object: crd([
      cond('NamesAccepted', 'False', 'PluralConflict', '"widgets" is already in use'),
      cond('Established', 'False', 'NotAccepted'),
    ]),
    status: 'Failed',
    message:
      'CustomResourceDefinition/widgets.example.com: names not accepted: PluralConflict: "widgets" is already in use',
  },
  {
    name: 'a CRD not Established for another reason',
    object: crd([
      cond('NamesAccepted', 'True'),
      cond('Established', 'False', 'NotAccepted', 'not all names are accepted'),
    ]),
    status: 'Failed',
    message:
      'CustomResourceDefinition/widgets.example.com: not Established: NotAccepted: not all names are accepted',
  },

  // Pod
  {
    name: 'a Ready Pod',
    object: pod({ phase: 'Running', conditions: [cond('Ready', 'True')] }),
    status: 'Current',
    message: 'Pod/default/web-0: Ready',
  },
  {
    name: 'a Succeeded Pod',
    object: pod({ phase: 'Succeeded', conditions: [cond('Ready', 'False', 'PodCompleted')] }),
    status: 'Current',
    message: 'Pod/default/web-0: Succeeded',
  },
  {
    name: 'a Failed Pod',
    object: pod({ phase: 'Failed', reason: 'Evicted', message: 'The node was low on resource: memory.' }),
    status: 'Failed',
    message: 'Pod/default/web-0: Failed: Evicted: The node was low on resource: memory.',
  },
  {
    name: 'a crash-looping Pod',
    object: pod({
      phase: 'Running',
      conditions: [cond('Ready', 'False', 'ContainersNotReady')],
      containerStatuses: [waitingIn('web', 'CrashLoopBackOff'), { name: 'sidecar', state: { running: {} } }],
    }),
    status: 'Failed',
    message: 'Pod/default/web-0: containers in CrashLoopBackOff: web',
  },
  {
    name: 'a running Pod not yet Ready',
    object: pod({ phase: 'Running', conditions: [cond('Ready', 'False', 'ContainersNotReady')] }),
    status: 'InProgress',
    message: 'Pod/default/web-0: Running but not Ready',
  },
  {
    name: 'an unschedulable Pod',
    object: pod({
      phase: 'Pending',
      conditions: [
        cond('PodScheduled', 'False', 'Unschedulable', '0/3 nodes are available: 3 Insufficient cpu.'),
      ],
    }),
    status: 'InProgress',
    message: 'Pod/default/web-0: not scheduled: 0/3 nodes are available: 3 Insufficient cpu.',
  },
  {
    name: 'a Pending Pod pulling an image that does not exist',
    object: pod({
      phase: 'Pending',
      initContainerStatuses: [waitingIn('init', 'PodInitializing')],
      containerStatuses: [waitingIn('web', 'ImagePullBackOff')],
    }),
    status: 'InProgress',
    message: 'Pod/default/web-0: Pending (web: ImagePullBackOff)',
  },
  {
    name: 'a Pod without a phase',
    object: pod(undefined),
    status: 'InProgress',
    message: 'Pod/default/web-0: no phase yet',
  },

  // anything else
  {
    name: 'a custom resource without status',
    object: custom(undefined),
    status: 'Current',
    message: 'Widget/default/w1: current',
  },
  {
    name: 'a ConfigMap',
    object: {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'settings', namespace: 'default' },
      data: {},
    },
    status: 'Current',
    message: 'ConfigMap/default/settings: current',
  },
  {
    name: 'a custom resource that is Ready',
    object: custom({ observedGeneration: 1, conditions: [cond('Ready', 'True', 'Succeeded', 'all good')] }),
    status: 'Current',
    message: 'Widget/default/w1: Ready: all good',
  },
  {
    name: 'a custom resource that is not Ready',
    object: custom({
      observedGeneration: 1,
      conditions: [cond('Ready', 'False', 'Waiting', 'dependency missing')],
    }),
    status: 'InProgress',
    message: 'Widget/default/w1: not Ready: Waiting: dependency missing',
  },
  {
    name: 'a custom resource with Ready Unknown',
    object: custom({ conditions: [cond('Ready', 'Unknown')] }),
    status: 'InProgress',
    message: 'Widget/default/w1: not Ready',
  },
  {
    name: 'a custom resource with status but no Ready condition',
    object: custom({ observedGeneration: 1, phase: 'Active' }),
    status: 'Current',
    message: 'Widget/default/w1: current',
  },
  {
    name: 'a kind named Deployment in another group follows the generic rules',
    object: {
      apiVersion: 'example.com/v1',
      kind: 'Deployment',
      metadata: { name: 'x', namespace: 'default' },
      status: { conditions: [cond('Ready', 'True')] },
    },
    status: 'Current',
    message: 'Deployment/default/x: Ready',
  },
];

describe('assessHealth', () => {
  it.each(cases)('$name → $status', ({ object, status, message }) => {
    expect(assessHealth(object)).toEqual({ status, message });
  });
});
