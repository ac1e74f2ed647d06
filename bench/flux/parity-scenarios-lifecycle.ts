// Scenarios of what happens to objects over time: a field dropped from an object that stays, drift
// corrected, a Namespace and a CRD pruned, an immutable change forced, health waited for.
import { namespacedCrd } from '../../test/support/crd.ts';
import { groupOf, yaml, type Kubectl, type Scenario, type Side } from './parity-scenarios.ts';

const labels = { app: 'web' };
const image = 'registry.k8s.io/pause:3.10';

/** The Deployment `web` with `spec` fields added and its container's fields added. */
function deployment(spec: Record<string, unknown> = {}, container: Record<string, unknown> = {}) {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'web', labels },
    spec: {
      replicas: 1,
      selector: { matchLabels: labels },
      template: { metadata: { labels }, spec: { containers: [{ name: 'web', image, ...container }] } },
      ...spec,
    },
  };
}

const pathOf = (side: Side) => (side === 'sluice' ? '.' : './');
const namespaced = (scenario: string) => (side: Side) => ({
  path: pathOf(side),
  prune: true,
  targetNamespace: `${side}-${scenario}`,
});

/**
 * Fields written in revision 1 and dropped in revision 2 from objects that stay: a Deployment's
 * `strategy`, a container's `resources` and port `protocol`, a Service port's `protocol`, a Secret's
 * `stringData` key, a ConfigMap's key and label. Flux's build adds `strategy: {}`, `resources: {}`
 * and `protocol: TCP` (docs/flux-parity.md, "Field ownership").
 */
function removalFiles(revision: 1 | 2): Record<string, string> {
  const first = revision === 1;
  return {
    'all.yaml': yaml(
      deployment(first ? { strategy: { type: 'Recreate' } } : {}, {
        ports: [{ containerPort: 53, ...(first && { protocol: 'UDP' }) }],
        ...(first && { resources: { limits: { cpu: '100m' } } }),
      }),
      {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name: 'web' },
        spec: { selector: labels, ports: [{ port: 53, ...(first && { protocol: 'UDP' }) }] },
      },
      {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: 'creds' },
        stringData: first ? { kept: 'k', dropped: 'd' } : { kept: 'k' },
      },
      {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'settings', ...(first && { labels: { tier: 'a' } }) },
        data: first ? { kept: 'k', dropped: 'd' } : { kept: 'k' },
      },
    ),
  };
}

const removal: Scenario = {
  name: 'removal',
  steps: [
    { name: 'r1', files: () => removalFiles(1) },
    { name: 'r2 drops fields', files: () => removalFiles(2) },
  ],
  settings: namespaced('removal'),
  namespaces: (side) => [`${side}-removal`],
};

/** By hand, as another field manager: a ConfigMap value and a Deployment's replicas changed, a label added. */
async function drift(side: Side, kubectl: Kubectl): Promise<void> {
  const ns = `${side}-drift`;
  const patch = (target: string, body: object) =>
    kubectl(['patch', target, '-n', ns, '--type=merge', '--field-manager=hand', '-p', JSON.stringify(body)]);
  await patch('configmap/settings', {
    data: { mode: 'changed by hand' },
    metadata: { labels: { hand: 'yes' } },
  });
  await patch('deployment/web', { spec: { replicas: 5 } });
}

/** Drift: a field changed by hand is restored by the next reconcile of the same revision; a field added by hand stays. */
const driftScenario: Scenario = {
  name: 'drift',
  steps: [
    {
      name: 'r1',
      files: () => ({
        'all.yaml': yaml(deployment({ replicas: 2 }), {
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { name: 'settings' },
          data: { mode: 'a' },
        }),
      }),
    },
    { name: 'drifted by hand, reconciled', byHand: drift },
  ],
  settings: namespaced('drift'),
  namespaces: (side) => [`${side}-drift`],
};

/**
 * A Namespace holding a ConfigMap, and a CRD with a custom resource, pruned in revision 2; a
 * ConfigMap in a namespace made by hand stays. No controller-manager runs here: a deleted
 * Namespace stays Terminating.
 */
function pruneFiles(side: Side, revision: 1 | 2): Record<string, string> {
  const group = groupOf('prune', side);
  const kept = `${side}-prune-kept`;
  const files: Record<string, string> = {
    'kept.yaml': yaml({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'kept', namespace: kept },
      data: { k: 'v' },
    }),
  };
  if (revision === 2) return files;
  const gone = `${side}-prune-gone`;
  files['namespace.yaml'] = yaml(
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: gone } },
    { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'inside', namespace: gone }, data: { k: 'v' } },
  );
  files['crd.yaml'] = yaml(
    namespacedCrd({
      group,
      kind: 'Gizmo',
      plural: 'gizmos',
      listKind: 'GizmoList',
      specProperties: { size: { type: 'integer' } },
    }),
    {
      apiVersion: `${group}/v1`,
      kind: 'Gizmo',
      metadata: { name: 'g1', namespace: kept },
      spec: { size: 1 },
    },
  );
  return files;
}

const prune: Scenario = {
  name: 'prune',
  steps: [
    { name: 'r1', files: (side) => pruneFiles(side, 1) },
    { name: 'r2 prunes a Namespace and a CRD', files: (side) => pruneFiles(side, 2) },
  ],
  settings: (side) => ({ path: pathOf(side), prune: true }),
  namespaces: (side) => [`${side}-prune-kept`],
};

const FORCE = { 'kustomize.toolkit.fluxcd.io/force': 'enabled' };

/** An immutable ConfigMap's data and a Deployment's selector changed, both annotated force: recreated. */
function forceFiles(revision: 1 | 2): Record<string, string> {
  const selector = revision === 1 ? labels : { ...labels, track: 'stable' };
  const web = deployment({ selector: { matchLabels: selector } });
  return {
    'all.yaml': yaml(
      {
        ...web,
        metadata: { ...web.metadata, annotations: FORCE },
        spec: { ...web.spec, template: { ...web.spec.template, metadata: { labels: selector } } },
      },
      {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'frozen', annotations: FORCE },
        immutable: true,
        data: { v: String(revision) },
      },
    ),
  };
}

const force: Scenario = {
  name: 'force',
  steps: [
    { name: 'r1', files: () => forceFiles(1) },
    { name: 'r2 changes immutable fields', files: () => forceFiles(2) },
  ],
  settings: namespaced('force'),
  namespaces: (side) => [`${side}-force`],
};

/** The Deployment's status as its controller would write it once its one replica is available. */
async function available(side: Side, kubectl: Kubectl): Promise<void> {
  const ns = `${side}-health`;
  const generation = Number(
    await kubectl(['get', 'deployment/web', '-n', ns, '-o', 'jsonpath={.metadata.generation}']),
  );
  const status = {
    observedGeneration: generation,
    replicas: 1,
    updatedReplicas: 1,
    readyReplicas: 1,
    availableReplicas: 1,
    conditions: [
      { type: 'Available', status: 'True', reason: 'MinimumReplicasAvailable', message: 'available' },
      { type: 'Progressing', status: 'True', reason: 'NewReplicaSetAvailable', message: 'progressed' },
    ],
  };
  await kubectl([
    'patch',
    'deployment/web',
    '-n',
    ns,
    '--subresource=status',
    '--type=merge',
    '--field-manager=hand',
    '-p',
    JSON.stringify({ status }),
  ]);
}

/**
 * Health waiting (Flux `wait: true`, sluice `wait: true`): no controller-manager runs, so the
 * Deployment is not ready until its status is written by hand; both must say not ready, then ready.
 */
const health: Scenario = {
  name: 'health',
  steps: [
    { name: 'r1, no replica available', files: () => ({ 'all.yaml': yaml(deployment()) }), ready: false },
    { name: 'status available, reconciled', byHand: available, ready: true },
  ],
  // 30s: Flux's least (a shorter spec.timeout counts as 30s).
  settings: (side) => ({ ...namespaced('health')(side), wait: true, timeout: '30s' }),
  namespaces: (side) => [`${side}-health`],
};

export const lifecycleScenarios = (): Scenario[] => [removal, driftScenario, prune, force, health];
