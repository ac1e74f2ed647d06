// `sluice diff`: what a reconcile would do, found on the real components without writing anything.
import { describe, expect, it } from 'vitest';
import { diffDelivery } from '../../../functions/core/reconcile/diff.ts';
import { readInventory } from '../../../functions/core/store/inventory.ts';
import { sluice } from '../../support/cli.ts';
import { engineDeps, pushFiles, registerDelivery, run } from '../../support/deliveries.ts';
import { registerGate } from '../../support/gates.ts';
import { writesSince } from '../../support/audit.ts';
import { createNamespace, testbed, uniqueName } from '../../support/testbed.ts';

const bed = testbed();
const deps = engineDeps();

const configMap = (name: string, ns: string, value: string) =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\n  namespace: ${ns}\ndata:\n  value: "${value}"\n`;

async function setup(extra: Record<string, unknown> = {}) {
  const ns = uniqueName('diff');
  const name = uniqueName('diff');
  const repository = uniqueName('diff/app');
  await createNamespace(bed.kubeConfig(), ns);
  await registerDelivery(deps, bed, { name, repository, prune: true, ...extra });
  return {
    ns,
    name,
    push: (tag: string, files: Record<string, string>) => pushFiles(bed, repository, tag, files),
  };
}

describe('diffDelivery', () => {
  it('lists objects to create for a delivery never applied, and writes nothing', async () => {
    const { ns, name, push } = await setup();
    const digest = await push('main', {
      'a.yaml': configMap('a', ns, '1'),
      'b.yaml': configMap('b', ns, '1'),
    });
    const since = new Date().toISOString();
    const diff = await diffDelivery(name, deps);
    expect(diff).toMatchObject({
      revision: `main@${digest}`,
      create: [`ConfigMap/${ns}/a`, `ConfigMap/${ns}/b`],
      change: [],
      prune: [],
      unchanged: 0,
      blockedBy: [],
      waitingFor: [],
    });
    expect(writesSince(bed, ns, since)).toEqual([]);
    expect(await readInventory(deps.db, name)).toEqual([]);
  });

  it('shows changed fields from a server-side dry-run, objects to prune, and the unchanged count', async () => {
    const { ns, name, push } = await setup();
    await push('main', {
      'a.yaml': configMap('a', ns, '1'),
      'b.yaml': configMap('b', ns, '1'),
      'c.yaml': configMap('c', ns, '1'),
    });
    await run(name, deps);
    const inventory = await readInventory(deps.db, name);
    await push('main', {
      'a.yaml': configMap('a', ns, '2'),
      'b.yaml': configMap('b', ns, '1'),
      'd.yaml': configMap('d', ns, '1'),
    });
    const since = new Date().toISOString();
    const diff = await diffDelivery(name, deps);
    expect(diff).toMatchObject({
      create: [`ConfigMap/${ns}/d`],
      change: [{ object: `ConfigMap/${ns}/a`, fields: [{ path: 'data.value', before: '1', after: '2' }] }],
      prune: [`ConfigMap/${ns}/c`],
      pruneEnabled: true,
      unchanged: 1,
    });
    expect(writesSince(bed, ns, since)).toEqual([]);
    expect(await readInventory(deps.db, name)).toEqual(inventory);
  });

  it('compares another revision: a tag or a digest', async () => {
    const { ns, name, push } = await setup();
    const v1 = await push('v1', { 'a.yaml': configMap('a', ns, '1') });
    await push('main', { 'a.yaml': configMap('a', ns, '2') });
    await run(name, deps);
    const expected = [
      { object: `ConfigMap/${ns}/a`, fields: [{ path: 'data.value', before: '2', after: '1' }] },
    ];
    expect(await diffDelivery(name, deps, { revision: 'v1' })).toMatchObject({
      revision: `v1@${v1}`,
      change: expected,
    });
    expect(await diffDelivery(name, deps, { revision: v1 })).toMatchObject({
      revision: v1,
      change: expected,
    });
  });

  it('sluice diff prints the plan and, with --exit-code, exits 5 when something would change', async () => {
    const { ns, name, push } = await setup();
    await push('main', { 'a.yaml': configMap('a', ns, '1'), 'b.yaml': configMap('b', ns, '1') });
    await run(name, deps);
    await push('main', { 'a.yaml': configMap('a', ns, '2'), 'c.yaml': configMap('c', ns, '1') });
    const printed = await sluice('diff', name, '--exit-code');
    expect(printed.code).toBe(5);
    expect(printed.stdout.split('\n')).toEqual([
      expect.stringMatching(new RegExp(`^delivery ${name} → main@sha256:[0-9a-f]{64}$`)),
      `+ create  ConfigMap/${ns}/c`,
      `~ change  ConfigMap/${ns}/a`,
      '      data.value: "1" → "2"',
      `- prune   ConfigMap/${ns}/b`,
      '  0 unchanged',
      '',
    ]);
    await run(name, deps);
    expect((await sluice('diff', name, '--exit-code')).code).toBe(0);
  });

  it('names the dependencies and the closed gates that would hold the run', async () => {
    const gate = uniqueName('hold');
    await registerGate(deps, { name: gate, default: 'closed' });
    const dependency = uniqueName('infra');
    const { ns, name, push } = await setup({ gates: [{ name: gate }], dependsOn: [dependency] });
    await push('main', { 'a.yaml': configMap('a', ns, '1') });
    const diff = await diffDelivery(name, deps);
    expect(diff.waitingFor).toEqual([{ name: dependency, why: 'not registered' }]);
    expect(diff.blockedMessage).toBe(
      `waiting for dependency '${dependency}' (not registered); waiting for gate '${gate}' (closed; no opening scheduled: open it with sluice gate open)`,
    );
  });

  it('names the closed gates that would hold the run', async () => {
    const gate = uniqueName('hold');
    await registerGate(deps, { name: gate, default: 'closed' });
    const { ns, name, push } = await setup({ gates: [{ name: gate, blocks: 'all' }] });
    await push('main', { 'a.yaml': configMap('a', ns, '1') });
    const diff = await diffDelivery(name, deps);
    expect(diff.create).toEqual([`ConfigMap/${ns}/a`]);
    expect(diff.blockedBy).toEqual([{ name: gate, blocks: 'all' }]);
    expect(diff.blockedMessage).toBe(
      `waiting for gate '${gate}' (closed; no opening scheduled: open it with sluice gate open)`,
    );
  });
});
