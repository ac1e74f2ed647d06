// The limits on what a build reads (functions/core/limits.ts), through whole reconciles on the real
// components, made small through ReconcileDeps.limits: an artifact past a limit fails naming the
// file, the count and the limit, and changes nothing; one at the limit is applied.
import { describe, expect, it } from 'vitest';
import { DEFAULT_LIMITS, type ArtifactLimits } from '../../functions/core/limits.ts';
import type { ReconcileDeps } from '../../functions/core/reconcile/deps.ts';
import { engineDeps, pushFiles, registerDelivery, run } from '../support/deliveries.ts';
import { createNamespace, testbed, uniqueName } from '../support/testbed.ts';
import { GOOD_OBJECTS, hostileSuite, type Hostile, type HostileCase } from './hostile.ts';

const bed = testbed();
/** The good revision of the hostile suite (GOOD_OBJECTS ConfigMaps) is within these. */
const small: ArtifactLimits = {
  ...DEFAULT_LIMITS,
  maxObjects: GOOD_OBJECTS + 2,
  maxManifestBytes: 4096,
  maxTotalBytes: 16 * 1024,
};
const withLimits = (h: Hostile): ReconcileDeps => ({ ...h.deps, limits: small });
const configMaps = (h: Hostile, count: number, prefix = 'cm') =>
  Array.from({ length: count }, (_, i) => h.configMap(`${prefix}-${i}`)).join('---\n');

const cases: HostileCase[] = [
  {
    name: 'one YAML document more than maxObjects, counted before parsing',
    push: (h) => h.push({ 'deploy/a.yaml': configMaps(h, 10), 'deploy/b.yaml': configMaps(h, 5, 'b') }),
    deps: withLimits,
    reason: 'BuildFailed',
    message: new RegExp(
      `^artifact .*@sha256:[a-f0-9]{64}: path 'deploy' holds 15 YAML documents \\(10 in deploy/a\\.yaml, 5 in deploy/b\\.yaml\\), more than the limit maxObjects \\(14 objects\\); nothing was parsed$`,
    ),
  },
  {
    name: 'a List that takes the build past maxObjects, counted while parsing',
    push: (h) =>
      h.push({
        'deploy/list.yaml': `apiVersion: v1\nkind: List\nitems:\n${Array.from(
          { length: 15 },
          (_, i) => `  - {apiVersion: v1, kind: ConfigMap, metadata: {name: item-${i}, namespace: ${h.ns}}}`,
        ).join('\n')}\n`,
      }),
    deps: withLimits,
    reason: 'BuildFailed',
    message:
      /^deploy\/list\.yaml items\[14\]: object 15 of the build is more than the limit maxObjects \(14 objects\); parsing stopped here$/,
  },
  {
    name: 'manifests one byte past maxManifestBytes',
    push: (h) => {
      const a = configMaps(h, 2);
      // A comment: the file holds no object, but its bytes count.
      return h.push({
        'deploy/a.yaml': a,
        'deploy/pad.yaml': `#${'x'.repeat(small.maxManifestBytes - a.length - 1)}\n`,
      });
    },
    deps: withLimits,
    reason: 'BuildFailed',
    message:
      /^artifact .*: path 'deploy' holds 4 KiB of manifests \(.* in deploy\/pad\.yaml, .* in deploy\/a\.yaml\), more than the limit maxManifestBytes \(4 KiB\); nothing was parsed$/,
  },
  {
    name: 'files a kustomize build would read holding more documents than maxObjects',
    push: (h) =>
      h.push({
        'deploy/kustomization.yaml': 'resources: [a.yaml]\n',
        'deploy/a.yaml': configMaps(h, 15),
      }),
    deps: withLimits,
    reason: 'BuildFailed',
    message:
      /^the files kustomize would read hold more than 14 YAML documents \(maxObjects\), deploy\/a\.yaml among them; kustomize was not run$/,
  },
  {
    name: 'a kustomize build whose output holds more documents than maxObjects',
    push: (h) =>
      h.push({
        // One input document, fifteen small objects out.
        'deploy/kustomization.yaml': `namespace: ${h.ns}\ngeneratorOptions: {disableNameSuffixHash: true}\nconfigMapGenerator:\n${Array.from(
          { length: 15 },
          (_, i) => `  - {name: item-${i}}`,
        ).join('\n')}\n`,
      }),
    // Room for the bytes of its output (kustomize annotates each object's origin for sluice).
    deps: (h) => ({ ...h.deps, limits: { ...small, maxManifestBytes: 64 * 1024 } }),
    reason: 'BuildFailed',
    message:
      /^kustomize build of deploy\/kustomization\.yaml: its output holds 15 YAML documents, more than the limit maxObjects \(14 objects\); nothing was parsed$/,
  },
  {
    name: 'an artifact past maxTotalBytes (files outside the path count too)',
    push: (h) =>
      h.push({ 'deploy/a.yaml': configMaps(h, 2), 'docs/big.txt': 'x'.repeat(small.maxTotalBytes) }),
    deps: withLimits,
    reason: 'ArtifactFailed',
    message: /entry "docs\/big\.txt" takes the files past the limit maxTotalBytes \(16 KiB uncompressed\)/,
  },
];

hostileSuite(
  'artifacts past the build limits change nothing and the status names the limit',
  { bed, kc: bed.kubeConfig(), registryHost: () => bed.registry.host },
  cases,
);

describe('artifacts at the build limits are applied', () => {
  const deps: ReconcileDeps = { ...engineDeps(), limits: small };

  it('applies exactly maxObjects objects, in manifests of exactly maxManifestBytes, in an artifact of exactly maxTotalBytes', async () => {
    const kc = bed.kubeConfig();
    const ns = uniqueName('limits');
    await createNamespace(kc, ns);
    const configMap = (name: string) =>
      `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\n  namespace: ${ns}\ndata:\n  key: ${name}\n`;
    const docs = Array.from({ length: small.maxObjects }, (_, i) => configMap(`cm-${i}`)).join('---\n');
    const padding = small.maxManifestBytes - Buffer.byteLength(docs) - 2;
    expect(padding).toBeGreaterThan(0);
    const repository = uniqueName('limits/app');
    const name = uniqueName('limits');
    await pushFiles(bed, repository, 'main', {
      'deploy/app.yaml': docs,
      'deploy/pad.yaml': `#${'x'.repeat(padding)}\n`,
      'docs/big.txt': 'x'.repeat(small.maxTotalBytes - small.maxManifestBytes),
    });
    await registerDelivery(deps, bed, { name, repository, path: 'deploy', prune: true });
    const result = await run(name, deps);
    expect(result).toMatchObject({ outcome: 'Succeeded', changes: { created: small.maxObjects } });
  });
});
