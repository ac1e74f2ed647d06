import { stringify } from 'yaml';
import { namespacedCrd } from '../test/support/crd.ts';

/** How many namespaces the realistic mix spreads its objects over. */
export const MIX_NAMESPACES = 20;

export interface MixOptions {
  /** Objects in total, the CRD and the namespaces included. */
  readonly count: number;
  /** Keeps runs apart: names the namespaces (`<prefix>-00`…) and the CRD's group. */
  readonly prefix: string;
  /** Changes the data of the first ConfigMap, to make a new revision of the same set. */
  readonly revision?: number;
}

/** An object of the mix, as YAML would give it. */
export type MixObject = Record<string, unknown> & {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
};
type Obj = MixObject;

/** Kinds of the namespaced objects, in the proportions of a typical application artifact. */
const PATTERN = ['cm', 'svc', 'deploy', 'widget', 'cm', 'cm', 'deploy', 'widget', 'svc', 'cm'] as const;

export const crdGroup = (prefix: string) => `${prefix}.bench.sluice.io`;
export const namespaceOf = (prefix: string, i: number) => `${prefix}-${String(i).padStart(2, '0')}`;

function crd(prefix: string): Obj {
  return namespacedCrd({
    group: crdGroup(prefix),
    kind: 'Widget',
    plural: 'widgets',
    listKind: 'WidgetList',
    specProperties: {
      size: { type: 'integer' },
      color: { type: 'string' },
      replicas: { type: 'integer', default: 1 },
      tags: { type: 'array', items: { type: 'string' } },
    },
  });
}

function namespaced(kind: (typeof PATTERN)[number], k: number, namespace: string, options: MixOptions): Obj {
  const app = `app-${k % 7}`;
  const labels = { 'app.kubernetes.io/name': app, 'app.kubernetes.io/part-of': 'bench' };
  switch (kind) {
    case 'cm':
      return {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: `config-${k}`, namespace, labels },
        data: {
          LOG_LEVEL: 'info',
          FEATURE_FLAGS: 'search,checkout,recommendations',
          revision: String(k === 0 ? (options.revision ?? 1) : 1),
          'app.properties': `server.port=8080\nserver.name=${app}\ncache.ttl=300\n`,
        },
      };
    case 'svc':
      return {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name: `svc-${k}`, namespace, labels },
        // Headless: the local API server's service range is a /24, too small for thousands of ClusterIPs.
        spec: {
          clusterIP: 'None',
          selector: { 'app.kubernetes.io/name': app },
          ports: [
            { name: 'http', port: 80, targetPort: 8080 },
            { name: 'metrics', port: 9090, targetPort: 'metrics' },
          ],
        },
      };
    case 'deploy':
      return {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: `web-${k}`, namespace, labels },
        spec: {
          replicas: 2,
          selector: { matchLabels: { 'app.kubernetes.io/name': app, instance: `web-${k}` } },
          template: {
            metadata: { labels: { ...labels, instance: `web-${k}` } },
            spec: {
              containers: [
                {
                  name: 'web',
                  image: `registry.example.com/${app}:1.${k % 10}.0`,
                  ports: [
                    { name: 'http', containerPort: 8080 },
                    { name: 'metrics', containerPort: 9090 },
                  ],
                  env: [
                    { name: 'LOG_LEVEL', value: 'info' },
                    { name: 'WORKERS', value: '4' },
                  ],
                  // As people write them: the API server stores 0.5 as 500m and 1 as "1".
                  resources: {
                    requests: { cpu: 0.25, memory: '256Mi' },
                    limits: { cpu: k % 2 === 0 ? 0.5 : 1, memory: '1Gi' },
                  },
                  readinessProbe: { httpGet: { path: '/healthz', port: 'http' }, periodSeconds: 10 },
                },
              ],
            },
          },
        },
      };
    case 'widget':
      return {
        apiVersion: `${crdGroup(options.prefix)}/v1`,
        kind: 'Widget',
        metadata: { name: `widget-${k}`, namespace, labels },
        spec: { size: k % 13, color: ['red', 'green', 'blue'][k % 3], tags: ['bench', app] },
      };
  }
}

/** The objects of the mix: the CRD, the namespaces, then ConfigMaps, Services, Deployments and Widgets. */
export function mixObjects(options: MixOptions): Obj[] {
  const { count, prefix } = options;
  const objects: Obj[] = [crd(prefix)];
  for (let i = 0; i < MIX_NAMESPACES; i++)
    objects.push({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespaceOf(prefix, i) } });
  for (let k = 0; objects.length < count; k++) {
    objects.push(
      namespaced(PATTERN[k % PATTERN.length]!, k, namespaceOf(prefix, k % MIX_NAMESPACES), options),
    );
  }
  return objects;
}

/**
 * The mix as an artifact's files: `cluster.yaml` (CRD and namespaces) and one multi-document
 * file per namespace, `apps/<namespace>.yaml`.
 */
export function mixFiles(options: MixOptions): Record<string, string> {
  return filesOf(mixObjects(options));
}

/** Objects as files: cluster-scoped ones in `cluster.yaml`, the rest by namespace. */
export function filesOf(objects: readonly Obj[]): Record<string, string> {
  const byFile = new Map<string, Obj[]>();
  for (const object of objects) {
    const ns = object.metadata.namespace;
    const file = ns ? `apps/${ns}.yaml` : 'cluster.yaml';
    byFile.set(file, [...(byFile.get(file) ?? []), object]);
  }
  return Object.fromEntries(
    [...byFile].map(([file, list]) => [file, list.map((o) => stringify(o)).join('---\n')]),
  );
}
