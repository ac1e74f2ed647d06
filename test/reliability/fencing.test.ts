// One writer per delivery, on the real components: a run whose clock is far ahead never takes over
// a live run, and a run frozen past its lease (a paused Lambda) resumes to find itself fenced off:
// no further cluster write, and none of its status, event or inventory writes land.
import { systemClock } from '../../functions/core/clock.ts';
import { CoreV1Api } from '@kubernetes/client-node';
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OWNER_LABEL } from '../../functions/core/manifests/objects.ts';
import type { ReconcileResult } from '../../functions/core/reconcile/reconcile.ts';
import { listEvents } from '../../functions/core/store/events.ts';
import { readInventory } from '../../functions/core/store/inventory.ts';
import { getStatus } from '../../functions/core/store/status.ts';
import { componentsEnv } from '../../dev/components.ts';
import { engineDeps, pushFiles, registerDelivery, run } from '../support/deliveries.ts';
import { startKubeFaultProxy, type KubeFaultProxy } from '../support/kube-fault-proxy.ts';
import { createNamespace, testbed, uniqueName } from '../support/testbed.ts';

const bed = testbed();
const kc = bed.kubeConfig();
const core = kc.makeApiClient(CoreV1Api);
let proxy: KubeFaultProxy;
beforeAll(async () => {
  proxy = await startKubeFaultProxy(bed);
});
afterAll(() => proxy.close());

const configMap = (ns: string, name: string, value: string) =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\n  namespace: ${ns}\ndata:\n  v: "${value}"\n`;
const revision = (ns: string, objects: Record<string, string>) => ({
  'app.yaml': Object.entries(objects)
    .map(([name, value]) => configMap(ns, name, value))
    .join('---\n'),
});
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Our ConfigMaps in `ns`: name → value. */
async function ours(ns: string, name: string): Promise<Record<string, string>> {
  const list = await core.listNamespacedConfigMap({ namespace: ns, labelSelector: `${OWNER_LABEL}=${name}` });
  return Object.fromEntries(list.items.map((cm) => [cm.metadata!.name!, cm.data?.v ?? '']));
}

async function delivery(prefix: string) {
  const ns = uniqueName(prefix);
  const repository = uniqueName(`fencing/${prefix}`);
  const name = uniqueName(prefix);
  await createNamespace(kc, ns);
  await registerDelivery(engineDeps(), bed, { name, repository, prune: true, pruneLimit: '100%' });
  return {
    ns,
    name,
    push: (objects: Record<string, string>) => pushFiles(bed, repository, 'main', revision(ns, objects)),
  };
}

describe('a run whose clock is 90 s ahead', () => {
  it('skips while the holder is mid-apply, and changes nothing', async () => {
    const { ns, name, push } = await delivery('skew');
    await push({ keep: '1' });
    expect((await run(name, engineDeps())).outcome).toBe('Succeeded');
    await push({ keep: '2', added: '2' });

    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let holding = false;
    proxy.plan({
      beforeForward: async (request) => {
        if (!request.write || holding) return;
        holding = true;
        await held; // the holder is stuck on its first write, renewing its lease meanwhile
      },
    });
    const holder = run(name, { ...engineDeps(), leaseTtlMs: 900, connect: async () => proxy.kubeConfig() });
    await expect.poll(() => holding, { timeout: 20_000 }).toBe(true);

    await push({ keep: '3' });
    const ahead = { ...systemClock, now: () => new Date(Date.now() + 90_000) };
    const skewed = await run(name, { ...engineDeps(), clock: ahead });
    expect(skewed).toMatchObject({ outcome: 'Skipped', reason: 'LeaseHeld' });
    release();
    proxy.plan({});
    expect(await holder).toMatchObject({ outcome: 'Succeeded' });
    expect(await ours(ns, name)).toEqual({ keep: '2', added: '2' });
  });
});

describe('a run frozen past its lease (SIGSTOP), then resumed', () => {
  it('is fenced off: the newer run’s objects, inventory, status and events stand', async () => {
    const { ns, name, push } = await delivery('frozen');
    await push({ keep: '1', dropped: '1' });
    expect((await run(name, engineDeps())).outcome).toBe('Succeeded');

    // The frozen run applies revision 2 (one write: a write that passed its lease check an instant
    // before a freeze is sent on resume, which Kubernetes cannot refuse; see docs/security.md);
    // it is stopped at that write, which goes through before the newer run starts.
    await push({ keep: '2', dropped: '1' });
    const kubeconfig = join(mkdtempSync(join(tmpdir(), 'sluice-fencing-')), 'kubeconfig');
    writeFileSync(kubeconfig, proxy.kubeConfig().exportConfig());
    let frozen = false;
    const child = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        join(import.meta.dirname, '../support/reconcile-main.ts'),
        name,
        kubeconfig,
        '1000',
      ],
      {
        env: { ...process.env, ...componentsEnv(bed), POWERTOOLS_LOG_LEVEL: 'WARN' },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    proxy.plan({
      beforeForward: async (request) => {
        if (!request.write || frozen) return;
        frozen = true;
        child.kill('SIGSTOP'); // the writes it already sent still go through, before the newer run
        await sleep(300);
      },
    });
    await expect.poll(() => frozen, { timeout: 30_000, interval: 50 }).toBe(true);
    await sleep(500);
    proxy.plan({});

    // The newer run watches the frozen run's lease go unrenewed for its TTL, then applies revision 3.
    await push({ keep: '3', later: '3' });
    const newer = await run(name, engineDeps());
    expect(newer, newer.message).toMatchObject({ outcome: 'Succeeded' });
    const wanted = { keep: '3', later: '3' };
    expect(await ours(ns, name)).toEqual(wanted);
    const status = await getStatus(engineDeps().db, name);
    const inventory = await readInventory(engineDeps().db, name);
    const events = await listEvents(engineDeps().db, name);

    child.kill('SIGCONT');
    expect(await exited, stderr).toBe(0);
    const frozenResult = JSON.parse(stdout.trim().split('\n').pop()!) as ReconcileResult;
    expect(frozenResult).toMatchObject({ outcome: 'Skipped', reason: 'LeaseLost' });
    expect(await ours(ns, name)).toEqual(wanted);
    expect(await readInventory(engineDeps().db, name)).toEqual(inventory);
    expect(await getStatus(engineDeps().db, name)).toEqual(status);
    expect(await listEvents(engineDeps().db, name)).toEqual(events);
    expect(status?.lastAppliedRevision).toBe(newer.revision);
  });
});
