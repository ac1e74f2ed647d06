// Red team: the build must not reach the network. Found: inspectKustomizations
// (manifests/kustomization.ts) read only some references (plugin config files, `paths:`), and
// matched kustomization keys exactly where kustomize folds their case. kustomize's
// builtin plugins load those references with its file loader, which fetches http(s) URLs. Go does
// not proxy loopback hosts, so the dead proxies do not stop a loopback URL (on Lambda: the Runtime
// API on 127.0.0.1:9001, extensions, any local listener).
import { CoreV1Api } from '@kubernetes/client-node';
import { createServer, type Server } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { engineDeps, pushFiles, registerDelivery, run } from '../support/deliveries.ts';
import { createNamespace, kubeconfigCopy, testbed, uniqueName } from '../support/testbed.ts';

const bed = testbed();
const kc = bed.kubeConfig();
const core = kc.makeApiClient(CoreV1Api);
const deps = engineDeps();

let trap: Server;
let port = 0;
let connections = 0;

beforeAll(async () => {
  trap = createServer((socket) => {
    connections++;
    socket.once('data', (request) => {
      // A YAML object for resources: URLs, a key=value line for generator files.
      const body = request.toString().includes('.yaml')
        ? 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: fetched\ndata:\n  k: STOLEN\n'
        : 'LOOT=STOLEN\n';
      socket.end(`HTTP/1.1 200 OK\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`);
    });
  });
  await new Promise<void>((done) => trap.listen(0, '127.0.0.1', done));
  port = (trap.address() as { port: number }).port;
});
afterAll(() => new Promise<void>((done) => trap.close(() => done())));

const cases: [string, (url: string) => Record<string, string>][] = [
  [
    // inlineConfig() parses every string entry holding ':' as YAML; `x: y` makes it a mapping,
    // so the entry is taken for an inline config and the URL itself is never checked.
    'a plain resources: URL holding ": " (read as an inline config, never checked)',
    (url) => ({
      'deploy/kustomization.yaml': `resources:\n- "${url}.yaml?a=1 b: c"\n`,
    }),
  ],
  [
    'a ConfigMapGenerator config file listed in generators: reading a URL',
    (url) => ({
      'deploy/kustomization.yaml': 'generators:\n- gen.yaml\n',
      'deploy/gen.yaml': `apiVersion: builtin\nkind: ConfigMapGenerator\nmetadata:\n  name: loot\nfiles:\n- ${url}\n`,
    }),
  ],
  [
    'a PatchTransformer config file listed in transformers: with a URL path',
    (url) => ({
      'deploy/kustomization.yaml': 'resources:\n- cm.yaml\ntransformers:\n- t.yaml\n',
      'deploy/cm.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  k: v\n',
      'deploy/t.yaml': `apiVersion: builtin\nkind: PatchTransformer\nmetadata:\n  name: p\npath: ${url}\n`,
    }),
  ],
  [
    'an inline PatchStrategicMergeTransformer with a URL in paths:',
    (url) => ({
      'deploy/kustomization.yaml':
        'resources:\n- cm.yaml\ntransformers:\n- |-\n  apiVersion: builtin\n  kind: PatchStrategicMergeTransformer\n  metadata:\n    name: p\n  paths:\n' +
        `  - ${url}\n`,
      'deploy/cm.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  k: v\n',
    }),
  ],
  // kustomize reads kustomization keys as encoding/json does: case-insensitively. A check that
  // matched them exactly skipped these, and kustomize fetched the URLs.
  ['`Resources:` with a URL', (url) => ({ 'deploy/kustomization.yaml': `Resources:\n- ${url}.yaml\n` })],
  [
    '`Components:` naming a component whose resources are a URL',
    (url) => ({
      'deploy/kustomization.yaml': 'resources:\n- cm.yaml\nComponents:\n- ../component\n',
      'deploy/cm.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  k: v\n',
      'component/kustomization.yaml': `apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\nresources:\n- ${url}.yaml\n`,
    }),
  ],
  [
    '`OpenAPI:` with a URL path',
    (url) => ({
      'deploy/kustomization.yaml': `resources:\n- cm.yaml\nOpenAPI:\n  path: ${url}.json\n`,
      'deploy/cm.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  k: v\n',
    }),
  ],
  ['`Bases:` with a URL', (url) => ({ 'deploy/kustomization.yaml': `Bases:\n- ${url}.yaml\n` })],
  [
    'a mixed-case nested key: `configMapGenerator[0].Files` with a URL',
    (url) => ({
      'deploy/kustomization.yaml': `configMapGenerator:\n- name: loot\n  Files:\n  - loot=${url}\n`,
    }),
  ],
  [
    'a key folded by Unicode: `reſources:` (U+017F) with a URL',
    (url) => ({ 'deploy/kustomization.yaml': `re\u017fources:\n- ${url}.yaml\n` }),
  ],
];

describe('kustomize references the pre-check does not read', () => {
  for (const [title, files] of cases) {
    it(`${title}: no connection is made`, async () => {
      const ns = uniqueName('rt-out');
      await createNamespace(kc, ns);
      const name = uniqueName('rt-out');
      const repository = uniqueName('redteam/out');
      await registerDelivery(deps, bed, {
        name,
        repository,
        path: 'deploy',
        targetNamespace: ns,
        prune: true,
        cluster: { kubeconfig: kubeconfigCopy() },
      });
      await pushFiles(bed, repository, 'main', files(`http://127.0.0.1:${port}/loot`));
      const before = connections;
      const result = await run(name, deps);
      const loot = await core
        .listNamespacedConfigMap({ namespace: ns })
        .then((list) => list.items.filter((cm) => JSON.stringify(cm.data ?? {}).includes('STOLEN')));
      // Secure behaviour: refused before kustomize runs, and nothing reached the trap.
      expect({ connections: connections - before, loot: loot.map((cm) => cm.metadata?.name) }).toEqual({
        connections: 0,
        loot: [],
      });
      expect(result.outcome).toBe('Failed');
    });
  }
});
