// A closed `blocks: revisions` gate holds even when the tag moves while a run is going on: the run
// resolves the tag once and pulls exactly the digest it checked against its gates.
import { CoreV1Api } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getStatus } from '../../functions/core/store/status.ts';
import { engineDeps, pushFiles, registerDelivery, run } from '../support/deliveries.ts';
import { registerGate } from '../support/gates.ts';
import { startRegistryFaultProxy, type RegistryFaultProxy } from '../support/registry-fault-proxy.ts';
import { createNamespace, kubeconfigCopy, testbed, uniqueName } from '../support/testbed.ts';

const bed = testbed();
const kc = bed.kubeConfig();
const core = kc.makeApiClient(CoreV1Api);
let proxy: RegistryFaultProxy;
beforeAll(async () => {
  proxy = await startRegistryFaultProxy(bed);
});
afterAll(() => proxy.close());

const configMap = (ns: string, value: string) =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\n  namespace: ${ns}\ndata:\n  v: "${value}"\n`;

describe('a tag moved between the gate check and the pull', () => {
  it('under a closed blocks: revisions gate, the run applies the digest it checked, never the new one', async () => {
    const deps = engineDeps();
    const ns = uniqueName('tagmove');
    const repository = uniqueName('tagmove/app');
    const name = uniqueName('tagmove');
    const gate = uniqueName('freeze');
    await createNamespace(kc, ns);
    await registerGate(deps, { name: gate, default: 'closed' });
    const first = await pushFiles(bed, repository, 'main', { 'cm.yaml': configMap(ns, 'approved') });
    await registerDelivery(deps, bed, {
      name,
      repository,
      prune: true,
      source: { url: `oci://${proxy.host}/${repository}`, tag: 'main', provider: 'aws' },
      cluster: { kubeconfig: kubeconfigCopy() },
      gates: [{ name: gate, blocks: 'revisions' }],
    });
    // The first revision went out before the freeze (its last applied revision is `first`).
    await registerGate(deps, { name: gate, default: 'open' });
    expect((await run(name, deps)).outcome).toBe('Succeeded');
    await registerGate(deps, { name: gate, default: 'closed' });

    // The run resolves `main` (still `first`: nothing to hold); the attacker moves the tag at once.
    let resolved = false;
    let moved: string | undefined;
    proxy.tamper(({ path }, answer) => {
      if (path.includes('/manifests/') && answer.status === 200) resolved = true;
      return undefined;
    });
    proxy.beforeForward(async ({ path }) => {
      if (path.includes('/manifests/') && resolved && !moved)
        moved = await pushFiles(bed, repository, 'main', { 'cm.yaml': configMap(ns, 'unreviewed') });
    });
    const result = await run(name, deps);
    proxy.beforeForward(undefined);
    proxy.tamper(undefined);
    expect(moved).toBeDefined();
    expect(result.revision).toBe(`main@${first}`);
    const cm = await core.readNamespacedConfigMap({ name: 'app', namespace: ns });
    expect(cm.data?.v).toBe('approved');
    expect((await getStatus(deps.db, name))?.lastAppliedRevision).toBe(`main@${first}`);

    // The next run sees the moved tag and holds it.
    const held = await run(name, deps);
    expect(held).toMatchObject({ outcome: 'Blocked', reason: 'GateClosed', revision: `main@${moved}` });
    expect((await core.readNamespacedConfigMap({ name: 'app', namespace: ns })).data?.v).toBe('approved');
  });
});
