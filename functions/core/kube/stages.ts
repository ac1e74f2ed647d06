import type { KubernetesObject } from '@kubernetes/client-node';

/**
 * Apply stages, much as Flux's kustomize-controller stages them: definitions first (CRDs, waited
 * on until Established, and Namespaces), then cluster roles and their bindings with the classes,
 * then everything else. The definitions stage holds only what other objects cannot be dry-run
 * without, because the objects that need it are dry-run only once it is applied: whatever else it
 * held would stay applied when one of them fails. Prune goes in the reverse order.
 */
export type Stage = 'definitions' | 'classes' | 'workloads';
export const STAGES: readonly Stage[] = ['definitions', 'classes', 'workloads'];

const DEFINITION_KINDS = new Set(['CustomResourceDefinition', 'Namespace']);
/** Cluster-wide RBAC, at the front of the classes stage: in place before any workload runs. */
const CLUSTER_RBAC_KINDS = new Set(['ClusterRole', 'ClusterRoleBinding']);

/** Kinds ahead of all others in their stage, in this order. */
const FIRST_KINDS = ['CustomResourceDefinition', 'Namespace', 'ClusterRole', 'ClusterRoleBinding'];

/** Within the last stage, kinds go in this order (kustomize's); unknown kinds after, by name. */
const KIND_ORDER = [
  'ResourceQuota',
  'LimitRange',
  'PriorityClass',
  'ServiceAccount',
  'Role',
  'RoleBinding',
  'Secret',
  'ConfigMap',
  'PersistentVolume',
  'PersistentVolumeClaim',
  'Service',
  'Endpoints',
  'EndpointSlice',
  'DaemonSet',
  'Pod',
  'ReplicaSet',
  'Deployment',
  'StatefulSet',
  'Job',
  'CronJob',
  'HorizontalPodAutoscaler',
  'PodDisruptionBudget',
  'NetworkPolicy',
  'Ingress',
  'APIService',
];
const LAST_KINDS = ['MutatingWebhookConfiguration', 'ValidatingWebhookConfiguration'];

export function stageOf(object: KubernetesObject): Stage {
  const kind = object.kind ?? '';
  if (DEFINITION_KINDS.has(kind)) return 'definitions';
  if (CLUSTER_RBAC_KINDS.has(kind) || kind.endsWith('Class')) return 'classes';
  return 'workloads';
}

function kindRank(kind: string): number {
  const first = FIRST_KINDS.indexOf(kind);
  if (first !== -1) return first - FIRST_KINDS.length;
  const last = LAST_KINDS.indexOf(kind);
  if (last !== -1) return 1000 + last;
  const known = KIND_ORDER.indexOf(kind);
  return known === -1 ? KIND_ORDER.length : known;
}

/** Stable apply order: stage, then kind order, then kind name, namespace and name. */
export function compareApplyOrder(a: KubernetesObject, b: KubernetesObject): number {
  const stage = STAGES.indexOf(stageOf(a)) - STAGES.indexOf(stageOf(b));
  if (stage !== 0) return stage;
  const rank = kindRank(a.kind ?? '') - kindRank(b.kind ?? '');
  if (rank !== 0) return rank;
  return (
    (a.kind ?? '').localeCompare(b.kind ?? '') ||
    (a.metadata?.namespace ?? '').localeCompare(b.metadata?.namespace ?? '') ||
    (a.metadata?.name ?? '').localeCompare(b.metadata?.name ?? '')
  );
}
