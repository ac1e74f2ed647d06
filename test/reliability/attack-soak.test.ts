// The attacks of issue 13 (test/support/attack-scenarios.ts) on fixed seeds, chosen so each scenario
// type takes its main branches: a CRD or Namespace left out that is kept (hand-made objects,
// another delivery's, an object the revision still applies) while the rest is pruned, held by the
// brake, or pruned past furniture and dependents; a
// rename behind a closed gate or none, with the tag moved to a smaller revision; a tag moved before
// the manifest or the blob; claimants (reconciles and removals) with clocks minutes off.
// `npm run soak` runs many random seeds of the same scenarios.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runAttackScenario, type AttackEnv, type AttackKind } from '../support/attack-scenarios.ts';
import { scenarioDeps } from '../support/kill-scenario.ts';
import { startKubeFaultProxy, type KubeFaultProxy } from '../support/kube-fault-proxy.ts';
import { startRegistryFaultProxy, type RegistryFaultProxy } from '../support/registry-fault-proxy.ts';
import { testbed } from '../support/testbed.ts';

const bed = testbed();
let proxy: KubeFaultProxy;
let registryProxy: RegistryFaultProxy;
let env: AttackEnv;

beforeAll(async () => {
  proxy = await startKubeFaultProxy(bed);
  registryProxy = await startRegistryFaultProxy(bed);
  env = { bed, proxy, registryProxy, kubeConfig: bed.kubeConfig(), deps: scenarioDeps(bed) };
});
afterAll(async () => {
  await proxy.close();
  await registryProxy.close();
});

/** Per type, seeds whose choices take its main branches (see each seed's comment). */
const SEEDS: Record<AttackKind, readonly number[]> = {
  // (chosen when such a container held the run; it is now kept, the rest pruned) pruned; kept for
  // hand-made objects; kept for a prune: disabled object, another delivery's, dependents and a
  // dependent of what stays; held by the brake.
  'crd-removal': [4, 9, 12, 30],
  // pruned past furniture; kept for hand-made objects, another delivery's, dependents; kept for
  // hand-made objects and a dependent of what stays; the same, or held by the brake (its
  // dependent counted).
  'namespace-removal': [1, 6, 10, 40],
  // tag moved to 1 of 5 objects behind blocks: all; CRD and tag moved behind blocks: revisions;
  // the new delivery refused (OwnershipConflict) before the removal, no gate.
  rename: [10, 12, 17],
  // tag already moved, moved again before the blob, drift, opened; at applied, moved before the
  // manifest, drift, opened; already moved, moved before the blob, kept closed.
  'tag-move': [1, 3, 12],
  // a removal and a reconcile claimant, clocks +24 s and +226 s; the same, the holder's clock +273 s.
  'clock-skew': [3, 8],
};

describe('the attacks of issue 13 on fixed seeds', () => {
  const cases = Object.entries(SEEDS).flatMap(([kind, seeds]) =>
    seeds.map((seed) => [kind as AttackKind, seed] as const),
  );
  it.each(cases)(
    '%s, seed %i: nothing wrongly deleted, no orphans, the last applied revision stands',
    async (kind, seed) => {
      const report = await runAttackScenario(env, kind, seed);
      expect(report, JSON.stringify(report, null, 2)).toMatchObject({
        wrongfulDeletions: [],
        orphans: [],
        unexpected: [],
        converged: true,
      });
    },
  );
});
