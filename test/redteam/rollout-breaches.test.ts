// Red team: rollouts (issue 33) on the real components, as someone with push rights to the
// rollout's repository.
//
// 1. A rollout's `source.verify` (cosign public keys) was accepted by the schema and never
//    checked: the rollout resolves its tag and starts a generation of whatever digest it names,
//    and each member pulls that digest with its own source (without `verify`). An unsigned push
//    went through the whole fleet.
// 2. A member whose run took the digest of a generation that a rollback replaced while the run was
//    applying it (its lease held off the rollback's reconcile) kept the rolled-back digest: the
//    run that follows the rollout reconciled every admitted member but the one that just ran.
import { CoreV1Api } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import type { KubeConfig } from '@kubernetes/client-node';
import { parseRollout } from '../../functions/core/config/index.ts';
import { reconcile } from '../../functions/core/reconcile/reconcile.ts';
import { getGeneration, putRollout } from '../../functions/core/store/rollouts.ts';
import { engineDeps, pushFiles, registerDelivery, run } from '../support/deliveries.ts';
import { fleet } from '../support/rollouts.ts';
import { pushSignedFixture, SIGNED } from '../support/signed-fixture.ts';
import { createNamespace, testbed, uniqueName } from '../support/testbed.ts';

const bed = testbed();

describe('a rollout whose source has verify', () => {
  it('starts no generation of an unsigned push, and no member applies it', async () => {
    const deps = engineDeps();
    const core = bed.kubeConfig().makeApiClient(CoreV1Api);
    const repository = uniqueName('rt-rollout/signed');
    const member = uniqueName('rt-signed');
    await createNamespace(bed.kubeConfig(), member);
    const signed = await pushSignedFixture(bed, repository, 'main');
    // The member's own source has no verify: the rollout's names the keys.
    await registerDelivery(deps, bed, { name: member, repository, targetNamespace: member });
    const name = uniqueName('rt-rollout');
    await putRollout(
      deps.db,
      parseRollout({
        name,
        source: {
          url: `oci://${bed.registry.host}/${repository}`,
          tag: 'main',
          provider: 'aws',
          verify: { provider: 'cosign', publicKeys: [SIGNED.publicKey] },
        },
        waves: [{ deliveries: [member] }],
      }),
      new Date(),
    );
    expect(await run(member, deps)).toMatchObject({ outcome: 'Succeeded' });
    expect((await getGeneration(deps.db, name))?.digest).toBe(signed);
    const configMap = async () =>
      (await core.readNamespacedConfigMap({ name: 'signed', namespace: member }).catch(() => undefined))
        ?.data;
    expect(await configMap()).toEqual({ release: '1.0.0' });

    // Someone with push rights moves the tag to an unsigned artifact that drops the ConfigMap.
    await pushFiles(bed, repository, 'main', {
      'cm.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: signed\ndata:\n  release: evil\n',
    });
    const result = await run(member, deps);
    expect((await getGeneration(deps.db, name))?.digest).toBe(signed);
    expect(await configMap()).toEqual({ release: '1.0.0' });
    expect(result.outcome).not.toBe('Failed');
  });
});

describe('a rollback while a member is applying the digest it rolls back', () => {
  it('does not leave that member at the rejected digest', async () => {
    let hold: Promise<void> | undefined;
    let release = () => {};
    let paused = () => {};
    const base = engineDeps();
    const f = await fleet(bed, {
      waves: [1, 1],
      start: new Date().toISOString(),
      deps: {
        connect: async (cluster): Promise<KubeConfig> => {
          const waiting = hold;
          hold = undefined;
          if (waiting) {
            paused();
            await waiting;
          }
          return base.connect(cluster);
        },
      },
    });
    const [[first], [second]] = f.waves as [[string], [string]];
    expect(await reconcile(first!, f.deps)).toMatchObject({ outcome: 'Succeeded' });
    // v1 goes through both waves: the generation the rollback returns to.
    expect(await reconcile(second!, f.deps)).toMatchObject({ outcome: 'Succeeded' });
    expect((await f.state()).phase).toBe('Complete');

    await f.push('v2');
    // The first wave's member resolves v2 and takes it; its apply is held until the rollback is done.
    hold = new Promise((resolve) => {
      release = resolve;
    });
    const atConnect = new Promise<void>((resolve) => {
      paused = resolve;
    });
    const running = reconcile(first!, f.deps);
    await atConnect;
    const rolledBack = await f.act('rollback', 'INC-9: v2 breaks checkout');
    expect(rolledBack.outcome).toBe('accepted');
    release();
    await running;

    // The rollback's own reconcile of that member found its lease held; v2 is rejected.
    const generation = (await getGeneration(f.deps.db, f.name))!;
    expect(generation.kind).toBe('rollback');
    expect(await f.value(first!)).toBe('v1');
    expect(await f.value(second!)).toBe('v1');
    expect((await f.state()).phase).toBe('Complete');
  });
});
