import { stringify } from 'yaml';
import { namespacedCrd } from '../../test/support/crd.ts';

export type Side = 'sluice' | 'flux';

/** Runs kubectl against the bed (the hand changes of a step). */
export type Kubectl = (args: string[]) => Promise<string>;

/** One thing both sides are put through, then compared. */
export interface Step {
  readonly name: string;
  /** The artifact's files pushed for this step; none: the last revision is reconciled again. */
  files?(side: Side): Record<string, string>;
  /** Done by hand to the side's objects before both reconcile: drift, a status written. */
  byHand?(side: Side, kubectl: Kubectl): Promise<void>;
  /** Whether both must report the delivery ready afterwards (default true). */
  readonly ready?: boolean;
}

/**
 * One artifact and one set of delivery settings, given to both sides under their own names. Its
 * objects are those in namespaces `<side>-<name>…`, or cluster-scoped named so or in the API group
 * `<name>.sp.sluice.io` (sluice) or `<name>.fp.sluice.io` (Flux).
 */
export interface Scenario {
  readonly name: string;
  readonly steps: readonly Step[];
  /** The delivery's fields: sluice's config-file form, or the Flux Kustomization's spec. */
  settings(side: Side): Record<string, unknown>;
  /** Namespaces that must exist before the first apply (targetNamespace). */
  namespaces(side: Side): string[];
}

export const yaml = (...docs: object[]) => docs.map((d) => stringify(d)).join('---\n');
/** A scenario's CRD group on each side, so the two never share a cluster-scoped object. */
export const groupOf = (scenario: string, side: Side) =>
  `${scenario}.${side === 'sluice' ? 'sp' : 'fp'}.sluice.io`;

/**
 * A plain directory (no kustomization.yaml): a CRD and a custom resource of it, a Deployment, a
 * Service, ConfigMaps; with targetNamespace, commonMetadata, a strategic-merge and a JSON6902
 * patch, an image override, postBuild.substitute (a number and a string), Flux's substitute and
 * prune annotations, and a revision that drops two ConfigMaps (one annotated prune: disabled) and
 * changes another.
 */
function plainFiles(side: Side, revision: 1 | 2): Record<string, string> {
  const group = groupOf('plain', side);
  const labels = { app: 'web' };
  const files: Record<string, string> = {
    'crd.yaml': yaml(
      namespacedCrd({
        group,
        kind: 'Gadget',
        plural: 'gadgets',
        listKind: 'GadgetList',
        specProperties: { size: { type: 'integer' }, color: { type: 'string', default: 'blue' } },
      }),
    ),
    'gadget.yaml': `apiVersion: ${group}/v1\nkind: Gadget\nmetadata:\n  name: g1\nspec:\n  size: \${SIZE}\n`,
    'app.yaml': yaml(
      {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'web', labels },
        spec: {
          replicas: 1,
          selector: { matchLabels: labels },
          template: { metadata: { labels }, spec: { containers: [{ name: 'web', image: 'nginx:1.25' }] } },
        },
      },
      {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name: 'web', labels },
        spec: { selector: labels, ports: [{ port: 80, targetPort: 8080 }] },
      },
    ),
    'config.yaml': yaml({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'settings' },
      data: {
        greeting: revision === 1 ? '${GREETING}' : '${GREETING}, again',
        fallback: '${UNSET:=default}',
      },
    }),
  };
  // Flux's own annotations, which sluice honours too: a literal `${...}`, and an object kept when it leaves.
  files['script.yaml'] = yaml({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'script', annotations: { 'kustomize.toolkit.fluxcd.io/substitute': 'disabled' } },
    data: { 'run.sh': 'echo ${HOME}' },
  });
  if (revision === 1) {
    files['extra.yaml'] = yaml({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'extra' },
      data: { k: 'v' },
    });
    files['kept.yaml'] = yaml({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'kept', annotations: { 'kustomize.toolkit.fluxcd.io/prune': 'disabled' } },
      data: { k: 'v' },
    });
  }
  return files;
}

const plain: Scenario = {
  name: 'plain',
  steps: [
    { name: 'r1', files: (side) => plainFiles(side, 1) },
    { name: 'r2', files: (side) => plainFiles(side, 2) },
  ],
  settings(side) {
    return {
      path: side === 'sluice' ? '.' : './',
      prune: true,
      targetNamespace: `${side}-plain`,
      commonMetadata: { labels: { team: 'platform' }, annotations: { owner: 'sre' } },
      patches: [
        {
          patch: 'apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: 2\n',
          target: { kind: 'Deployment' },
        },
        {
          patch: '- op: add\n  path: /metadata/annotations/patched\n  value: "yes"\n',
          target: { kind: 'ConfigMap', name: 'settings' },
        },
      ],
      images: [{ name: 'nginx', newTag: '1.27' }],
      postBuild: { substitute: { GREETING: 'hello', SIZE: '3' } },
    };
  },
  namespaces: (side) => [`${side}-plain`],
};

/**
 * A kustomize overlay: a base with a configMapGenerator (hash-suffixed names) and a component
 * adding a label and a Secret, a namePrefix; the second revision drops a resource.
 */
function overlayFiles(revision: 1 | 2): Record<string, string> {
  return {
    'base/kustomization.yaml': yaml({
      resources: revision === 1 ? ['deploy.yaml', 'extra.yaml'] : ['deploy.yaml'],
      components: ['../components/audit'],
      namePrefix: 'shop-',
      configMapGenerator: [{ name: 'env', literals: ['MODE=prod', `REVISION=${revision}`] }],
    }),
    'base/deploy.yaml': yaml({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'api' },
      spec: {
        selector: { matchLabels: { app: 'api' } },
        template: {
          metadata: { labels: { app: 'api' } },
          spec: {
            containers: [
              {
                name: 'api',
                image: 'ghcr.io/example/api:1.0',
                envFrom: [{ configMapRef: { name: 'env' } }],
              },
            ],
          },
        },
      },
    }),
    'base/extra.yaml': yaml({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'worker' } }),
    'components/audit/kustomization.yaml': yaml({
      apiVersion: 'kustomize.config.k8s.io/v1alpha1',
      kind: 'Component',
      labels: [{ pairs: { audited: 'true' } }],
      secretGenerator: [{ name: 'audit-token', literals: ['token=abc'] }],
    }),
  };
}

const overlay: Scenario = {
  name: 'overlay',
  steps: [
    { name: 'r1', files: () => overlayFiles(1) },
    { name: 'r2', files: () => overlayFiles(2) },
  ],
  settings(side) {
    return { path: side === 'sluice' ? 'base' : './base', prune: true, targetNamespace: `${side}-overlay` };
  },
  namespaces: (side) => [`${side}-overlay`],
};

/** The build scenarios: what each tool's build and transforms make of the same files. */
export const buildScenarios = (): Scenario[] => [plain, overlay];
