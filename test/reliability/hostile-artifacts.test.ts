// Hostile and broken artifacts beyond test/core/reconcile/bad-input.test.ts: tarballs, builds,
// objects the API server refuses, sources that resolve to nothing, and a mass deletion. Each
// leaves the cluster, the inventory and the last applied revision as they were.
import { gzipSync } from 'node:zlib';
import { DEFAULT_UNPACK_LIMITS } from '../../functions/core/limits.ts';
import { headerBlock, tarOf, tgzOf } from '../core/oci/tar-fixtures.ts';
import { testbed } from '../support/testbed.ts';
import { GOOD_OBJECTS, hostileSuite, type HostileCase } from './hostile.ts';

const bed = testbed();
const MiB = 1024 * 1024;
const ok = (h: { configMap: (n: string) => string }) => ({ path: 'deploy/ok.yaml', body: h.configMap('ok') });

const cases: HostileCase[] = [
  // The tarball.
  {
    name: 'a FIFO in the tarball',
    push: (h) => h.pushLayer(tgzOf([ok(h), { path: 'deploy/pipe', type: 'FIFO' }])),
    reason: 'ArtifactFailed',
    message: /entry "deploy\/pipe" is a FIFO entry/,
  },
  {
    name: 'a backslash in a tarball path',
    push: (h) => h.pushLayer(tgzOf([ok(h), { path: 'deploy\\..\\..\\evil.yaml', body: h.configMap('x') }])),
    reason: 'ArtifactFailed',
    message: /has a NUL or backslash in its path/,
  },
  {
    name: 'too many files (10 001)',
    push: (h) =>
      h.pushLayer(
        gzipSync(tarOf(Array.from({ length: 10_001 }, (_, i) => ({ path: `deploy/f${i}.txt`, body: 'x' })))),
      ),
    reason: 'ArtifactFailed',
    message: /is one more than the limit maxFiles \(10000 files and directories\)/,
  },
  {
    name: 'a huge single file (10 MiB + 1 byte)',
    push: (h) =>
      h.pushLayer(
        gzipSync(tarOf([ok(h), { path: 'deploy/huge.yaml', body: Buffer.alloc(10 * MiB + 1, 0x20) }])),
      ),
    reason: 'ArtifactFailed',
    message: /entry "deploy\/huge\.yaml" is 10 MiB, more than the limit maxFileBytes \(10 MiB\)/,
  },
  {
    name: 'a layer that is a plain tar, not gzip',
    push: (h) => h.pushLayer(tarOf([ok(h)])),
    reason: 'ArtifactFailed',
    message: /the layer is not valid gzip/,
  },
  {
    name: 'gzip inside gzip',
    push: (h) => h.pushLayer(gzipSync(tgzOf([ok(h)]))),
    reason: 'ArtifactFailed',
    message: /holds a compressed stream inside gzip, not a tar archive/,
  },
  {
    name: 'a gzip stream cut short',
    push: (h) => {
      const whole = tgzOf([ok(h), { path: 'deploy/more.yaml', body: h.configMap('more').repeat(50) }]);
      return h.pushLayer(whole.subarray(0, Math.floor(whole.length / 2)));
    },
    reason: 'ArtifactFailed',
    message: /layer sha256:[a-f0-9]{64}: the layer is not valid gzip: unexpected end of file/,
  },
  {
    name: 'a tar header that lies about its size (body shorter than declared)',
    push: (h) =>
      h.pushLayer(
        gzipSync(
          Buffer.concat([
            headerBlock({ path: 'deploy/liar.yaml', size: 4096 }),
            Buffer.from(h.configMap('x')),
          ]),
        ),
      ),
    reason: 'ArtifactFailed',
    message: /not a valid tar archive: TAR_BAD_ARCHIVE: Truncated input \(needed 4096 more bytes/,
  },
  {
    name: 'a layer descriptor larger than maxCompressedBytes',
    push: (h) => h.pushLayer(tgzOf([ok(h)]), { sizeDelta: DEFAULT_UNPACK_LIMITS.maxCompressedBytes + MiB }),
    reason: 'ArtifactFailed',
    message: new RegExp(
      `more than the limit maxCompressedBytes \\(${DEFAULT_UNPACK_LIMITS.maxCompressedBytes} bytes\\)`,
    ),
  },
  // The source.
  {
    name: 'a semver range no tag matches',
    push: async () => undefined,
    source: () => ({ tag: undefined, semver: '>=99.0.0' }),
    reason: 'ArtifactFailed',
    message: /no tag matches semver range ">=99\.0\.0"/,
  },
  {
    name: 'a digest the registry does not have',
    push: async () => undefined,
    source: () => ({ tag: undefined, digest: `sha256:${'0'.repeat(64)}` }),
    reason: 'ArtifactFailed',
    message: /manifest digest not found/,
  },
  {
    name: 'a repository that does not exist',
    push: async () => undefined,
    source: (h) => ({ url: `oci://${h.bed.registry.host}/no/such/repository` }),
    reason: 'ArtifactFailed',
    message: /no\/such\/repository.*repository not found/,
  },
  // The build.
  {
    name: 'a duplicate key in a mapping',
    push: (h) =>
      h.push({
        'deploy/a.yaml': 'apiVersion: v1\nkind: ConfigMap\nkind: Secret\nmetadata:\n  name: twice\n',
      }),
    reason: 'BuildFailed',
    message: /deploy\/a\.yaml:.*invalid YAML: Map keys must be unique/,
  },
  {
    name: 'a YAML alias bomb ("billion laughs")',
    push: (h) => {
      const levels = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]'];
      for (let i = 1; i < 9; i++) {
        const previous = String.fromCharCode(96 + i);
        const refs = Array.from({ length: 9 }, () => `*${previous}`).join(',');
        levels.push(`${String.fromCharCode(97 + i)}: &${String.fromCharCode(97 + i)} [${refs}]`);
      }
      return h.push({
        'deploy/bomb.yaml': `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: bomb\ndata:\n  ${levels.join('\n  ')}\n`,
      });
    },
    reason: 'BuildFailed',
    message: /deploy\/bomb\.yaml: invalid YAML: Excessive alias count/,
  },
  {
    name: 'a top-level JSON array',
    push: (h) => h.push({ 'deploy/list.json': '[{"apiVersion":"v1","kind":"ConfigMap"}]' }),
    reason: 'BuildFailed',
    message: /deploy\/list\.json: a manifest must be an object, not a list/,
  },
  {
    name: 'a kustomize generator reading a file outside the artifact',
    push: (h) =>
      h.push({
        'deploy/kustomization.yaml':
          'configMapGenerator:\n  - name: stolen\n    files:\n      - ../../../../etc/passwd\n',
      }),
    reason: 'BuildFailed',
    message:
      /deploy\/kustomization\.yaml: configMapGenerator.*"\.\.\/\.\.\/\.\.\/\.\.\/etc\/passwd" points outside the artifact/,
  },
  // Objects the API server refuses: validation (server-side dry-run) stops them all.
  {
    name: 'an invalid object name',
    push: (h) => h.push({ 'deploy/a.yaml': h.configMap('ok'), 'deploy/b.yaml': h.configMap('Not_A_Name') }),
    reason: 'ValidationFailed',
    message: /deploy\/b\.yaml: ConfigMap\/.*\/Not_A_Name: /,
  },
  {
    name: 'a Secret whose data is not base64',
    push: (h) =>
      h.push({
        'deploy/a.yaml': h.configMap('ok'),
        'deploy/s.yaml': `apiVersion: v1\nkind: Secret\nmetadata:\n  name: s\n  namespace: ${h.ns}\ndata:\n  password: "%%% not base64 %%%"\n`,
      }),
    reason: 'ValidationFailed',
    message: /deploy\/s\.yaml: Secret\/.*\/s: /,
  },
  {
    name: 'a ConfigMap over the 1 MiB object limit',
    push: (h) =>
      h.push({
        'deploy/a.yaml': h.configMap('ok'),
        'deploy/big.yaml': `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: big\n  namespace: ${h.ns}\ndata:\n  blob: "${'x'.repeat(MiB + 16)}"\n`,
      }),
    reason: 'ValidationFailed',
    message: /deploy\/big\.yaml: ConfigMap\/.*\/big: .*(Too long|too long|1048576)/,
  },
  {
    name: 'a known kind at a version the cluster does not serve',
    push: (h) =>
      h.push({
        'deploy/a.yaml': h.configMap('ok'),
        'deploy/d.yaml': `apiVersion: apps/v9\nkind: Deployment\nmetadata:\n  name: d\n  namespace: ${h.ns}\n`,
      }),
    reason: 'ValidationFailed',
    message:
      /deploy\/d\.yaml: Deployment\/.*d: kind Deployment is not served by the cluster in apiVersion apps\/v9/,
  },
  // The mass-deletion brake (pruneLimit, default 50% of an inventory of 10 or more).
  {
    name: 'a revision that would prune most of the inventory',
    push: (h) => h.push({ 'deploy/app.yaml': [0, 1, 2].map((i) => h.configMap(`app-${i}`)).join('---\n') }),
    outcome: 'Blocked',
    reason: 'PruneLimitExceeded',
    message: new RegExp(
      `would delete ${GOOD_OBJECTS - 3} of the ${GOOD_OBJECTS} objects .*more than pruneLimit 50%; nothing was applied or pruned`,
    ),
  },
];

hostileSuite(
  'hostile artifacts change nothing and the status says why',
  {
    bed,
    kc: bed.kubeConfig(),
    registryHost: () => bed.registry.host,
  },
  cases,
);
