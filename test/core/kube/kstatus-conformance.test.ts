// assessHealth against kstatus's own test table: the cases of kubernetes-sigs/cli-utils
// pkg/kstatus/status/ (status_compute_test.go, core_test.go, example_test.go and
// status_augment_test.go), ported as data, each with the status kstatus's Compute gives it.
// Every case must give sluice the same status, unless it is listed under DEVIATIONS, where sluice
// is deliberately different and says why. Upstream YAML is kept as written but indented by two
// spaces, and keys it repeats (`observedGeneration` twice in a status) are written once, as YAML 1.2
// requires. (There is no status_test.go or generic_test.go upstream; these four files hold its tests.)
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import type { KubernetesObject } from '@kubernetes/client-node';
import { assessHealth, type HealthStatus } from '../../../functions/core/kube/health.ts';
import { describeObject } from '../../../functions/core/manifests/objects.ts';

/** kstatus's statuses: sluice's, and Unknown, which its poller reports when Compute errs. */
type KstatusStatus = HealthStatus | 'Unknown';

interface Case {
  /** `<upstream Go test function>/<case name>`, or for a rule no upstream test covers, the Go function. */
  readonly name: string;
  readonly yaml: string;
  /** What kstatus's status.Compute returns for the object. */
  readonly kstatus: KstatusStatus;
}

/** The cases of one upstream Go test function, by their upstream names. */
function upstream(test: string, cases: Record<string, [KstatusStatus, string]>): Case[] {
  return Object.entries(cases).map(([name, [kstatus, yaml]]) => ({ name: `${test}/${name}`, yaml, kstatus }));
}

// status_compute_test.go: TestPodStatus
const podCases = upstream('TestPodStatus', {
  podNoStatus: [
    'InProgress',
    `
apiVersion: v1
kind: Pod
metadata:
  generation: 1
  name: test
`,
  ],
  podReady: [
    'Current',
    `
apiVersion: v1
kind: Pod
metadata:
  generation: 1
  name: test
  namespace: qual
status:
  conditions:
    - type: Ready
      status: "True"
  phase: Running
`,
  ],
  podCompletedSuccessfully: [
    'Current',
    `
apiVersion: v1
kind: Pod
metadata:
  generation: 1
  name: test
  namespace: qual
status:
  phase: Succeeded
  conditions:
    - type: Ready
      status: "False"
      reason: PodCompleted
`,
  ],
  podCompletedFailed: [
    'Current',
    `
apiVersion: v1
kind: Pod
metadata:
  generation: 1
  name: test
  namespace: qual
status:
  phase: Failed
  conditions:
    - type: Ready
      status: "False"
      reason: PodCompleted
`,
  ],
  // Created just now: kstatus gives a Pod 15 seconds to be scheduled.
  podBeingScheduled: [
    'InProgress',
    `
apiVersion: v1
kind: Pod
metadata:
  creationTimestamp: ${new Date().toISOString()}
  generation: 1
  name: test
  namespace: qual
status:
  phase: Pending
  conditions:
    - type: PodScheduled
      status: "False"
      reason: Unschedulable
`,
  ],
  podUnschedulable: [
    'Failed',
    `
apiVersion: v1
kind: Pod
metadata:
  generation: 1
  name: test
  namespace: qual
status:
  phase: Pending
  conditions:
    - type: PodScheduled
      status: "False"
      reason: Unschedulable
`,
  ],
  podCrashLooping: [
    'Failed',
    `
apiVersion: v1
kind: Pod
metadata:
  generation: 1
  name: test
  namespace: qual
status:
  phase: Running
  conditions:
    - type: PodScheduled
      status: "False"
      reason: Unschedulable
  containerStatuses:
    - name: nginx
      state:
        waiting:
          reason: CrashLoopBackOff
`,
  ],
});

// status_compute_test.go: TestPVCStatus
const pvcCases = upstream('TestPVCStatus', {
  pvcNoStatus: [
    'InProgress',
    `
apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  generation: 1
  name: test
`,
  ],
  pvcBound: [
    'Current',
    `
apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  generation: 1
  name: test
  namespace: qual
status:
  phase: Bound
`,
  ],
});

// status_compute_test.go: TestStsStatus
const stsCases = upstream('TestStsStatus', {
  stsNoStatus: [
    'InProgress',
    `
apiVersion: apps/v1
kind: StatefulSet
metadata:
  generation: 1
  name: test
`,
  ],
  stsBadStatus: [
    'InProgress',
    `
apiVersion: apps/v1
kind: StatefulSet
metadata:
  generation: 1
  name: test
  namespace: qual
status:
  observedGeneration: 1
  currentReplicas: 1
`,
  ],
  stsOK: [
    'Current',
    `
apiVersion: apps/v1
kind: StatefulSet
metadata:
  generation: 1
  name: test
  namespace: qual
spec:
  replicas: 4
status:
  observedGeneration: 1
  currentReplicas: 4
  readyReplicas: 4
  replicas: 4
`,
  ],
  stsLessReady: [
    'InProgress',
    `
apiVersion: apps/v1
kind: StatefulSet
metadata:
  generation: 1
  name: test
  namespace: qual
spec:
  replicas: 4
status:
  observedGeneration: 1
  currentReplicas: 4
  readyReplicas: 2
  replicas: 4
`,
  ],
  stsLessCurrent: [
    'InProgress',
    `
apiVersion: apps/v1
kind: StatefulSet
metadata:
  generation: 1
  name: test
  namespace: qual
spec:
  replicas: 4
status:
  observedGeneration: 1
  currentReplicas: 2
  readyReplicas: 4
  replicas: 4
`,
  ],
  stsExtraPods: [
    'InProgress',
    `
apiVersion: apps/v1
kind: StatefulSet
metadata:
  generation: 1
  name: test
  namespace: qual
spec:
  replicas: 4
status:
  observedGeneration: 1
  currentReplicas: 4
  readyReplicas: 4
  replicas: 8
`,
  ],
});

// status_compute_test.go: TestDaemonsetStatus
const dsCases = upstream('TestDaemonsetStatus', {
  dsNoStatus: [
    'InProgress',
    `
apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: test
  generation: 1
`,
  ],
  dsBadStatus: [
    'InProgress',
    `
apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: test
  namespace: qual
  generation: 1
status:
  observedGeneration: 1
  currentReplicas: 1
`,
  ],
  dsOK: [
    'Current',
    `
apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: test
  namespace: qual
  generation: 1
status:
  desiredNumberScheduled: 4
  currentNumberScheduled: 4
  updatedNumberScheduled: 4
  numberAvailable: 4
  numberReady: 4
  observedGeneration: 1
`,
  ],
  dsLessReady: [
    'InProgress',
    `
apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: test
  namespace: qual
  generation: 1
status:
  observedGeneration: 1
  desiredNumberScheduled: 4
  currentNumberScheduled: 4
  updatedNumberScheduled: 4
  numberAvailable: 4
  numberReady: 2
`,
  ],
  dsDifferentGeneration: [
    'InProgress',
    `
apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: test
  namespace: qual
  generation: 2
status:
  desiredNumberScheduled: 4
  currentNumberScheduled: 4
  updatedNumberScheduled: 4
  numberAvailable: 4
  numberReady: 4
  observedGeneration: 1
`,
  ],
  dsLessAvailable: [
    'InProgress',
    `
apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: test
  namespace: qual
  generation: 1
status:
  observedGeneration: 1
  desiredNumberScheduled: 4
  currentNumberScheduled: 4
  updatedNumberScheduled: 4
  numberAvailable: 2
  numberReady: 4
`,
  ],
});

// status_compute_test.go: TestDeploymentStatus
const depCases = upstream('TestDeploymentStatus', {
  depNoStatus: [
    'InProgress',
    `
apiVersion: apps/v1
kind: Deployment
metadata:
  name: test
  generation: 1
`,
  ],
  depOK: [
    'Current',
    `
apiVersion: apps/v1
kind: Deployment
metadata:
  name: test
  generation: 1
  namespace: qual
status:
  observedGeneration: 1
  updatedReplicas: 1
  readyReplicas: 1
  availableReplicas: 1
  replicas: 1
  conditions:
    - type: Progressing
      status: "True"
      reason: NewReplicaSetAvailable
    - type: Available
      status: "True"
`,
  ],
  depNotProgressing: [
    'InProgress',
    `
apiVersion: apps/v1
kind: Deployment
metadata:
  name: test
  generation: 1
  namespace: qual
spec:
  progressDeadlineSeconds: 45
status:
  observedGeneration: 1
  updatedReplicas: 1
  readyReplicas: 1
  availableReplicas: 1
  replicas: 1
  conditions:
    - type: Progressing
      status: "False"
      reason: Some reason
    - type: Available
      status: "True"
`,
  ],
  depNoProgressDeadlineSeconds: [
    'Current',
    `
apiVersion: apps/v1
kind: Deployment
metadata:
  name: test
  generation: 1
  namespace: qual
status:
  observedGeneration: 1
  updatedReplicas: 1
  readyReplicas: 1
  availableReplicas: 1
  replicas: 1
  conditions:
    - type: Available
      status: "True"
`,
  ],
  depNotAvailable: [
    'InProgress',
    `
apiVersion: apps/v1
kind: Deployment
metadata:
  name: test
  generation: 1
  namespace: qual
status:
  observedGeneration: 1
  updatedReplicas: 1
  readyReplicas: 1
  availableReplicas: 1
  replicas: 1
  conditions:
    - type: Progressing
      status: "True"
      reason: NewReplicaSetAvailable
    - type: Available
      status: "False"
`,
  ],
});

// status_compute_test.go: TestReplicasetStatus
const rsCases = upstream('TestReplicasetStatus', {
  rsNoStatus: [
    'InProgress',
    `
apiVersion: apps/v1
kind: ReplicaSet
metadata:
  name: test
  generation: 1
`,
  ],
  rsOK1: [
    'Current',
    `
apiVersion: apps/v1
kind: ReplicaSet
metadata:
  name: test
  namespace: qual
  generation: 1
spec:
  replicas: 2
status:
  observedGeneration: 1
  replicas: 2
  readyReplicas: 2
  availableReplicas: 2
  fullyLabeledReplicas: 2
  conditions:
    - type: ReplicaFailure
      status: "False"
`,
  ],
  rsOK2: [
    'Current',
    `
apiVersion: apps/v1
kind: ReplicaSet
metadata:
  name: test
  namespace: qual
  generation: 1
spec:
  replicas: 2
status:
  observedGeneration: 1
  fullyLabeledReplicas: 2
  replicas: 2
  readyReplicas: 2
  availableReplicas: 2
`,
  ],
  rsLessAvailable: [
    'InProgress',
    `
apiVersion: apps/v1
kind: ReplicaSet
metadata:
  name: test
  namespace: qual
  generation: 1
spec:
  replicas: 4
status:
  observedGeneration: 1
  replicas: 4
  readyReplicas: 4
  availableReplicas: 2
  fullyLabeledReplicas: 4
`,
  ],
  rsLessReady: [
    'InProgress',
    `
apiVersion: apps/v1
kind: ReplicaSet
metadata:
  name: test
  namespace: qual
  generation: 1
spec:
  replicas: 4
status:
  observedGeneration: 1
  replicas: 4
  readyReplicas: 2
  availableReplicas: 4
  fullyLabeledReplicas: 4
`,
  ],
  rsReplicaFailure: [
    'InProgress',
    `
apiVersion: apps/v1
kind: ReplicaSet
metadata:
  name: test
  namespace: qual
  generation: 1
spec:
  replicas: 4
status:
  observedGeneration: 1
  replicas: 4
  readyReplicas: 4
  fullyLabeledReplicas: 4
  availableReplicas: 4
  conditions:
    - type: ReplicaFailure
      status: "True"
`,
  ],
});

// status_compute_test.go: TestPDBStatus
const pdbCases = upstream('TestPDBStatus', {
  pdbNotObserved: [
    'InProgress',
    `
apiVersion: policy/v1beta1
kind: PodDisruptionBudget
metadata:
  generation: 2
  name: test
  namespace: qual
status:
  observedGeneration: 1
`,
  ],
  pdbObserved: [
    'Current',
    `
apiVersion: policy/v1beta1
kind: PodDisruptionBudget
metadata:
  generation: 1
  name: test
  namespace: qual
status:
  observedGeneration: 1
`,
  ],
});

// status_compute_test.go: TestCRDGenericStatus (custom resources: the generic rules, then Ready)
const customResourceCases = upstream('TestCRDGenericStatus', {
  crdNoStatus: [
    'Current',
    `
apiVersion: something/v1
kind: MyCR
metadata:
  generation: 1
  name: test
  namespace: qual
`,
  ],
  crdReady: [
    'Current',
    `
apiVersion: something/v1
kind: MyCR
metadata:
  name: test
  namespace: qual
  generation: 1
status:
  conditions:
    - type: Ready
      status: "True"
      message: All looks ok
      reason: AllOk
`,
  ],
  crdNotReady: [
    'InProgress',
    `
apiVersion: something/v1
kind: MyCR
metadata:
  generation: 1
  name: test
  namespace: qual
status:
  observedGeneration: 1
  conditions:
    - type: Ready
      status: "False"
      reason: NotReadyYet
`,
  ],
  crdNoCondition: [
    'Current',
    `
apiVersion: something/v1
kind: MyCR
metadata:
  name: test
  namespace: qual
  generation: 1
status:
  conditions:
    - type: SomeCondition
      status: "False"
`,
  ],
  crdMismatchStatusGeneration: [
    'InProgress',
    `
apiVersion: something/v1
kind: MyCR
metadata:
  name: test
  namespace: qual
  generation: 2
status:
  observedGeneration: 1
`,
  ],
});

// status_compute_test.go: TestJobStatus
const jobCases = upstream('TestJobStatus', {
  jobNoStatus: [
    'InProgress',
    `
apiVersion: batch/v1
kind: Job
metadata:
  name: test
  namespace: qual
  generation: 1
`,
  ],
  jobComplete: [
    'Current',
    `
apiVersion: batch/v1
kind: Job
metadata:
  name: test
  namespace: qual
  generation: 1
status:
  succeeded: 1
  active: 0
  conditions:
    - type: Complete
      status: "True"
`,
  ],
  jobFailed: [
    'Failed',
    `
apiVersion: batch/v1
kind: Job
metadata:
  name: test
  namespace: qual
  generation: 1
spec:
  completions: 4
status:
  succeeded: 3
  failed: 1
  conditions:
    - type: Failed
      status: "True"
      reason: JobFailed
`,
  ],
  jobInProgress: [
    'Current',
    `
apiVersion: batch/v1
kind: Job
metadata:
  name: test
  namespace: qual
  generation: 1
spec:
  completions: 10
  parallelism: 2
status:
  startTime: "2019-06-04T01:17:13Z"
  succeeded: 3
  failed: 1
  active: 2
  conditions:
    - type: Failed
      status: "False"
    - type: Complete
      status: "False"
`,
  ],
});

// status_compute_test.go: TestCronJobStatus
const cronJobCases = upstream('TestCronJobStatus', {
  cronjobNoStatus: [
    'Current',
    `
apiVersion: batch/v1
kind: CronJob
metadata:
  name: test
  namespace: qual
  generation: 1
`,
  ],
  cronjobWithStatus: [
    'Current',
    `
apiVersion: batch/v1
kind: CronJob
metadata:
  name: test
  namespace: qual
  generation: 1
status:
`,
  ],
});

// status_compute_test.go: TestServiceStatus
const serviceCases = upstream('TestServiceStatus', {
  serviceDefault: [
    'Current',
    `
apiVersion: v1
kind: Service
metadata:
  name: test
  namespace: qual
  generation: 1
`,
  ],
  serviceNodePort: [
    'Current',
    `
apiVersion: v1
kind: Service
metadata:
  name: test
  namespace: qual
  generation: 1
spec:
  type: NodePort
`,
  ],
  serviceLBnok: [
    'InProgress',
    `
apiVersion: v1
kind: Service
metadata:
  name: test
  namespace: qual
  generation: 1
spec:
  type: LoadBalancer
`,
  ],
  serviceLBok: [
    'Current',
    `
apiVersion: v1
kind: Service
metadata:
  name: test
  namespace: qual
  generation: 1
spec:
  type: LoadBalancer
  clusterIP: "1.2.3.4"
`,
  ],
});

// status_compute_test.go: TestCRDStatus (CustomResourceDefinitions themselves)
const crdCases = upstream('TestCRDStatus', {
  crdNoConditions: [
    'InProgress',
    `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  generation: 1
`,
  ],
  crdInstalling: [
    'InProgress',
    `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  generation: 1
status:
  conditions:
    - type: NamesAccepted
      status: "True"
      reason: NoConflicts
    - type: Established
      status: "False"
      reason: Installing
`,
  ],
  crdNamesNotAccepted: [
    'Failed',
    `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  generation: 1
status:
  conditions:
    - type: NamesAccepted
      status: "False"
      reason: SomeReason
`,
  ],
  crdEstablished: [
    'Current',
    `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  generation: 1
status:
  conditions:
    - type: NamesAccepted
      status: "True"
      reason: NoConflicts
    - type: Established
      status: "True"
      reason: InitialNamesAccepted
`,
  ],
});

// core_test.go: one Job manifest with spec.suspend and a Suspended condition.
const suspendableJob = (suspend: boolean, suspended: string) => `
apiVersion: batch/v1
kind: Job
metadata:
  name: test
  generation: 1
  namespace: qual
spec:
  suspend: ${suspend}
status:
  conditions:
    - type: Suspended
      status: "${suspended}"
`;
const suspendedJobCases = [
  ...upstream('TestSuspendedJobConditions', { suspended: ['Current', suspendableJob(true, 'True')] }),
  ...upstream('TestPreviouslySuspendedJobConditions', {
    resumed: ['InProgress', suspendableJob(false, 'False')],
  }),
  ...upstream('TestSuspendedJobTransitionConditions', {
    toSuspendedState: ['InProgress', suspendableJob(true, 'False')],
    fromSuspendedState: ['InProgress', suspendableJob(false, 'True')],
  }),
];

// example_test.go: TestExampleCompute
const exampleCases = upstream('TestExampleCompute', {
  deployment: [
    'Current',
    `
apiVersion: apps/v1
kind: Deployment
metadata:
  name: test
  generation: 1
  namespace: qual
status:
  observedGeneration: 1
  updatedReplicas: 1
  readyReplicas: 1
  availableReplicas: 1
  replicas: 1
  conditions:
    - type: Progressing
      status: "True"
      reason: NewReplicaSetAvailable
    - type: Available
      status: "True"
`,
  ],
});

// status_augment_test.go: TestAugmentConditions asserts the conditions Augment adds, which are
// Compute's: an added Reconciling means InProgress, Stalled means Failed, none means Current.
const runningPod = (conditions: string) => `
apiVersion: v1
kind: Pod
metadata:
  generation: 1
  name: test
  namespace: qual
status:
  phase: Running
${conditions}`;
const augmentCases = upstream('TestAugmentConditions', {
  'no existing conditions': ['InProgress', runningPod('')],
  'has other existing conditions': [
    'InProgress',
    runningPod(`  conditions:
    - type: Ready
      status: "False"
      reason: Pod has not started
`),
  ],
  'already has condition of standard type InProgress': [
    'InProgress',
    runningPod(`  conditions:
    - type: Reconciling
      status: "True"
      reason: PodIsAbsolutelyNotReady
`),
  ],
  'already has condition of standard type Failed': [
    'Failed',
    runningPod(`  conditions:
    - type: Stalled
      status: "True"
      reason: PodHasFailed
`),
  ],
  'custom resource with no conditions': [
    'Current',
    `
apiVersion: v1beta1
kind: SomeCustomKind
metadata:
  generation: 1
  name: test
  namespace: default
`,
  ],
});

const UPSTREAM: readonly Case[] = [
  ...podCases,
  ...pvcCases,
  ...stsCases,
  ...dsCases,
  ...depCases,
  ...rsCases,
  ...pdbCases,
  ...customResourceCases,
  ...jobCases,
  ...cronJobCases,
  ...serviceCases,
  ...crdCases,
  ...suspendedJobCases,
  ...exampleCases,
  ...augmentCases,
];

/**
 * Rules of kstatus's code (pkg/kstatus/status/*.go, named by function) that its tests leave out.
 * Each `kstatus` is what that code returns.
 */
const UNTESTED_UPSTREAM: readonly Case[] = [
  {
    // checkGenericProperties: a deletionTimestamp wins over everything else.
    name: 'checkGenericProperties/a Deployment being deleted',
    kstatus: 'Terminating',
    yaml: `
apiVersion: apps/v1
kind: Deployment
metadata:
  name: test
  namespace: qual
  generation: 1
  deletionTimestamp: "2024-05-17T09:30:05Z"
status:
  observedGeneration: 1
  replicas: 1
  updatedReplicas: 1
  readyReplicas: 1
  availableReplicas: 1
  conditions:
    - type: Available
      status: "True"
`,
  },
  {
    name: 'checkGenericProperties/a custom resource being deleted while Stalled',
    kstatus: 'Terminating',
    yaml: `
apiVersion: example.com/v1
kind: Widget
metadata:
  name: test
  namespace: qual
  deletionTimestamp: "2024-05-17T09:30:05Z"
  finalizers: [example.com/cleanup]
status:
  conditions:
    - type: Stalled
      status: "True"
`,
  },
  {
    // checkGenericProperties: the first True Reconciling or Stalled condition, in list order, decides.
    name: 'checkGenericProperties/Stalled listed before Reconciling',
    kstatus: 'Failed',
    yaml: `
apiVersion: example.com/v1
kind: Widget
metadata:
  name: test
  namespace: qual
status:
  conditions:
    - type: Stalled
      status: "True"
      reason: InvalidSpec
    - type: Reconciling
      status: "True"
      reason: Progressing
`,
  },
  {
    name: 'checkGenericProperties/Reconciling listed before Stalled',
    kstatus: 'InProgress',
    yaml: `
apiVersion: example.com/v1
kind: Widget
metadata:
  name: test
  namespace: qual
status:
  conditions:
    - type: Reconciling
      status: "True"
      reason: Progressing
    - type: Stalled
      status: "True"
      reason: InvalidSpec
`,
  },
  {
    // checkReadyCondition: a Ready condition whose status is not True, False or Unknown is ignored.
    name: 'checkReadyCondition/a Ready condition without status',
    kstatus: 'Current',
    yaml: `
apiVersion: example.com/v1
kind: Widget
metadata:
  name: test
  namespace: qual
status:
  conditions:
    - type: Ready
      reason: Pending
`,
  },
  {
    name: 'checkReadyCondition/a Ready condition without status, then one False',
    kstatus: 'InProgress',
    yaml: `
apiVersion: example.com/v1
kind: Widget
metadata:
  name: test
  namespace: qual
status:
  conditions:
    - type: Ready
    - type: Ready
      status: "False"
`,
  },
  {
    // CRDConditions: conditions are read in list order; the first that decides wins.
    name: 'CRDConditions/Established listed before NamesAccepted=False',
    kstatus: 'Current',
    yaml: `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
  generation: 1
status:
  conditions:
    - type: Established
      status: "True"
      reason: InitialNamesAccepted
    - type: NamesAccepted
      status: "False"
      reason: PluralConflict
`,
  },
  {
    name: 'CRDConditions/Established=False (not Installing) listed before NamesAccepted=False',
    kstatus: 'Failed',
    yaml: `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
  generation: 1
status:
  conditions:
    - type: Established
      status: "False"
      reason: NotAccepted
    - type: NamesAccepted
      status: "False"
      reason: PluralConflict
`,
  },
  {
    // jobConditions: conditions are read in list order too.
    name: 'jobConditions/Complete listed before Failed',
    kstatus: 'Current',
    yaml: `
apiVersion: batch/v1
kind: Job
metadata:
  name: test
  namespace: qual
status:
  startTime: "2019-06-04T01:17:13Z"
  conditions:
    - type: Complete
      status: "True"
    - type: Failed
      status: "True"
`,
  },
  {
    // alwaysReady: Secrets, ConfigMaps, CronJobs and PodDisruptionBudgets ignore their conditions.
    name: 'alwaysReady/a ConfigMap with a Ready=False condition',
    kstatus: 'Current',
    yaml: `
apiVersion: v1
kind: ConfigMap
metadata:
  name: test
  namespace: qual
status:
  conditions:
    - type: Ready
      status: "False"
`,
  },
  {
    name: 'alwaysReady/a Secret with a Ready=False condition',
    kstatus: 'Current',
    yaml: `
apiVersion: v1
kind: Secret
metadata:
  name: test
  namespace: qual
status:
  conditions:
    - type: Ready
      status: "False"
`,
  },
  {
    // deploymentConditions: progressDeadlineSeconds of MaxInt32 means none, so no Progressing condition.
    name: 'deploymentConditions/progressDeadlineSeconds of MaxInt32',
    kstatus: 'Current',
    yaml: `
apiVersion: apps/v1
kind: Deployment
metadata:
  name: test
  namespace: qual
  generation: 1
spec:
  progressDeadlineSeconds: 2147483647
status:
  observedGeneration: 1
  replicas: 1
  updatedReplicas: 1
  readyReplicas: 1
  availableReplicas: 1
  conditions:
    - type: Available
      status: "True"
`,
  },
  {
    // podConditions: the Ready condition only counts in the Running phase.
    name: 'podConditions/a Pending Pod with Ready=True',
    kstatus: 'InProgress',
    yaml: `
apiVersion: v1
kind: Pod
metadata:
  name: test
  namespace: qual
status:
  phase: Pending
  conditions:
    - type: Ready
      status: "True"
`,
  },
];

interface Deviation {
  readonly status: HealthStatus;
  readonly why: string;
}

/** Upstream cases where sluice is deliberately different, with its status and the reason. */
const DEVIATIONS: Readonly<Record<string, Deviation>> = {
  'TestJobStatus/jobInProgress': {
    status: 'InProgress',
    why: 'a Job must complete, as with the Job reader of Flux: a migration that is still running is not done',
  },
  'TestPodStatus/podCompletedFailed': {
    status: 'Failed',
    why: 'a Pod that ran to failure will not recover; waiting for it would only end in the timeout',
  },
  'TestPodStatus/podUnschedulable': {
    status: 'InProgress',
    why: 'an unschedulable Pod waits for Karpenter (or the cluster autoscaler) to add a node, which takes longer than kstatus allows',
  },
  'TestServiceStatus/serviceLBok': {
    status: 'InProgress',
    why: 'a LoadBalancer Service is ready when its load balancer has an address, not when it has a cluster IP',
  },
};

/** Deliberate differences no upstream case shows, written here from kstatus's code. */
const OWN_DEVIATIONS: ReadonlyArray<Case & Deviation> = [
  {
    // pvcConditions: every phase but Bound is InProgress.
    name: 'pvcConditions/a Lost PersistentVolumeClaim',
    kstatus: 'InProgress',
    status: 'Failed',
    why: 'the volume of a Lost claim is gone, and the claim cannot recover on its own',
    yaml: `
apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: data
  namespace: qual
status:
  phase: Lost
`,
  },
  {
    // podConditions: looks for CrashLoopBackOff only in containerStatuses of a Running Pod.
    name: 'podConditions/a Pending Pod whose init container is crash-looping',
    kstatus: 'InProgress',
    status: 'Failed',
    why: 'a crash-looping init container blocks the Pod as surely as a crash-looping container',
    yaml: `
apiVersion: v1
kind: Pod
metadata:
  name: test
  namespace: qual
status:
  phase: Pending
  initContainerStatuses:
    - name: migrate
      state:
        waiting:
          reason: CrashLoopBackOff
  containerStatuses:
    - name: web
      state:
        waiting:
          reason: PodInitializing
`,
  },
  {
    // podConditions: an unknown phase is an error, so kstatus's poller reports Unknown.
    name: 'podConditions/a Pod in the Unknown phase',
    kstatus: 'Unknown',
    status: 'InProgress',
    why: 'kstatus returns an error (its poller reports Unknown); sluice keeps waiting, as the node may come back',
    yaml: `
apiVersion: v1
kind: Pod
metadata:
  name: test
  namespace: qual
status:
  phase: Unknown
`,
  },
];

const objectOf = (yaml: string) => parse(yaml) as KubernetesObject;

// Rows as tuples: vitest prints `%s` whole, where `$name` is cut at 40 characters.
const rows = (cases: readonly Case[]) => cases.map((c) => [c.name, c.kstatus, c] as const);
const deviationRows = (cases: ReadonlyArray<Case & Deviation>) =>
  cases.map((c) => [c.name, c.status, c.kstatus, c.why, c] as const);

function assess(yaml: string) {
  const object = objectOf(yaml);
  const health = assessHealth(object);
  // Every message names the object.
  expect(health.message.startsWith(`${describeObject(object)}: `)).toBe(true);
  return health;
}

describe('kstatus conformance', () => {
  const conforming = UPSTREAM.filter((c) => !(c.name in DEVIATIONS));

  it.each(rows(conforming))('%s → %s', (_name, kstatus, { yaml }) => {
    expect(assess(yaml).status).toBe(kstatus);
  });

  it.each(rows(UNTESTED_UPSTREAM))('%s → %s (kstatus code, no upstream test)', (_name, kstatus, { yaml }) => {
    expect(assess(yaml).status).toBe(kstatus);
  });

  it('ports every case of the upstream tables', () => {
    expect(UPSTREAM).toHaveLength(63);
    expect(new Set(UPSTREAM.map((c) => c.name)).size).toBe(UPSTREAM.length);
  });
});

describe('deliberate deviations from kstatus', () => {
  const upstreamDeviations = Object.entries(DEVIATIONS).map(([name, deviation]) => {
    const found = UPSTREAM.find((c) => c.name === name);
    if (!found) throw new Error(`DEVIATIONS names ${name}, which is no upstream case`);
    return { ...found, ...deviation };
  });

  it.each(deviationRows([...upstreamDeviations, ...OWN_DEVIATIONS]))(
    '%s → %s, where kstatus says %s: %s',
    (_name, status, kstatus, _why, { yaml }) => {
      expect(status).not.toBe(kstatus);
      expect(assess(yaml).status).toBe(status);
    },
  );

  it('a started Job stays InProgress until it completes, also after a resume from suspension', () => {
    const job = objectOf(`
apiVersion: batch/v1
kind: Job
metadata:
  name: migrate
  namespace: qual
spec:
  suspend: false
status:
  startTime: "2024-05-17T09:30:05Z"
  active: 1
  conditions:
    - type: Suspended
      status: "True"
`);
    expect(assessHealth(job)).toEqual({
      status: 'InProgress',
      message: 'Job/qual/migrate: running, 1 active, 0 of 1 succeeded, 0 failed',
    });
  });

  it('a failed Pod names its reason', () => {
    const failed = objectOf(`
apiVersion: v1
kind: Pod
metadata:
  name: web-0
  namespace: qual
status:
  phase: Failed
  reason: Evicted
  message: "The node was low on resource: memory."
`);
    expect(assessHealth(failed)).toEqual({
      status: 'Failed',
      message: 'Pod/qual/web-0: Failed: Evicted: The node was low on resource: memory.',
    });
  });

  it('an unschedulable Pod created long ago still waits for a node', () => {
    const pending = objectOf(`
apiVersion: v1
kind: Pod
metadata:
  name: web-0
  namespace: qual
  creationTimestamp: "2020-01-01T00:00:00Z"
status:
  phase: Pending
  conditions:
    - type: PodScheduled
      status: "False"
      reason: Unschedulable
      message: "0/3 nodes are available: 3 Insufficient cpu."
`);
    expect(assessHealth(pending)).toEqual({
      status: 'InProgress',
      message: 'Pod/qual/web-0: not scheduled: 0/3 nodes are available: 3 Insufficient cpu.',
    });
  });

  it('a LoadBalancer Service with an address is Current', () => {
    const service = objectOf(`
apiVersion: v1
kind: Service
metadata:
  name: web
  namespace: qual
spec:
  type: LoadBalancer
  clusterIP: 10.100.0.7
status:
  loadBalancer:
    ingress:
      - hostname: k8s-web-1234.elb.eu-west-1.amazonaws.com
`);
    expect(assessHealth(service)).toEqual({ status: 'Current', message: 'Service/qual/web: ready' });
  });
});
