// Reconcile behaviours beyond the seed scenario, on the real components.
import { BatchV1Api, CoreV1Api, CustomObjectsApi, KubernetesObjectApi } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { systemClock, type Clock } from '../../../functions/core/clock.ts';
import { acquireLease, LEASE_TTL_MS } from '../../../functions/core/store/lease.ts';
import { namespacedCrd } from '../../support/crd.ts';
import { engineDeps, pushFiles, registerDelivery, run } from '../../support/deliveries.ts';
import { leaveLease } from '../../support/lease.ts';
import { createNamespace, testbed, uniqueName } from '../../support/testbed.ts';

const bed = testbed();
const deps = engineDeps();
const kc = bed.kubeConfig();
const core = kc.makeApiClient(CoreV1Api);

const configMap = (name: string, ns: string, extra = '') => `apiVersion: v1
kind: ConfigMap
metadata:
  name: ${name}
  namespace: ${ns}
${extra}data:
  key: ${name}
`;

async function exists(read: () => Promise<unknown>): Promise<boolean> {
  try {
    await read();
    return true;
  } catch {
    return false;
  }
}

describe('CRDs', () => {
  it('applies a CRD, a namespace and custom resources of that CRD in one run', async () => {
    const group = `${uniqueName('g')}.sluice.test`;
    const ns = uniqueName('crd');
    const repository = uniqueName('engine/crd');
    const name = uniqueName('crd');
    await pushFiles(bed, repository, 'main', {
      'crd.yaml': `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: gadgets.${group}
spec:
  group: ${group}
  scope: Namespaced
  names: { plural: gadgets, singular: gadget, kind: Gadget }
  versions:
    - name: v1
      served: true
      storage: true
      schema:
        openAPIV3Schema:
          type: object
          properties:
            spec: { type: object, properties: { size: { type: integer } } }
`,
      'ns.yaml': `apiVersion: v1\nkind: Namespace\nmetadata:\n  name: ${ns}\n`,
      'gadgets.yaml': [1, 2, 3]
        .map(
          (i) =>
            `apiVersion: ${group}/v1\nkind: Gadget\nmetadata:\n  name: g${i}\n  namespace: ${ns}\nspec:\n  size: ${i}\n`,
        )
        .join('---\n'),
    });
    await registerDelivery(deps, bed, { name, repository, prune: true });
    const result = await run(name, deps);
    expect(result, result.message).toMatchObject({
      outcome: 'Succeeded',
      changes: { created: 5, deleted: 0 },
    });
    const objects = KubernetesObjectApi.makeApiClient(kc);
    const gadget = await objects.read({
      apiVersion: `${group}/v1`,
      kind: 'Gadget',
      metadata: { name: 'g2', namespace: ns },
    });
    expect((gadget as { spec?: { size?: number } }).spec?.size).toBe(2);
    // The second run sees everything unchanged.
    expect((await run(name, deps)).changes).toEqual({ created: 0, configured: 0, unchanged: 5, deleted: 0 });
  });

  it('refuses a custom resource whose CRD is neither served nor in the artifact, before applying anything', async () => {
    const ns = uniqueName('nocrd');
    const repository = uniqueName('engine/nocrd');
    const name = uniqueName('nocrd');
    await createNamespace(kc, ns);
    await pushFiles(bed, repository, 'main', {
      'cm.yaml': configMap('first', ns),
      'x.yaml': `apiVersion: nothing.sluice.test/v1\nkind: Thing\nmetadata:\n  name: t\n  namespace: ${ns}\n`,
    });
    await registerDelivery(deps, bed, { name, repository, prune: true });
    const result = await run(name, deps);
    expect(result).toMatchObject({ outcome: 'Failed', reason: 'ValidationFailed' });
    expect(result.message).toContain('x.yaml: Thing/');
    expect(await exists(() => core.readNamespacedConfigMap({ name: 'first', namespace: ns }))).toBe(false);
  });
});

describe('prune safety', () => {
  it('never prunes an object without our label, nor one annotated sluice.io/prune: disabled (or kustomize.toolkit.fluxcd.io/prune: disabled, as Flux)', async () => {
    const ns = uniqueName('safe');
    const repository = uniqueName('engine/safe');
    const name = uniqueName('safe');
    await createNamespace(kc, ns);
    await pushFiles(bed, repository, 'main', {
      'a.yaml': [
        configMap('replaced-by-hand', ns),
        configMap('kept', ns, '  annotations:\n    sluice.io/prune: disabled\n'),
        configMap('kept-for-flux', ns, '  annotations:\n    kustomize.toolkit.fluxcd.io/prune: disabled\n'),
        configMap('pruned', ns),
      ].join('---\n'),
    });
    await registerDelivery(deps, bed, { name, repository, prune: true });
    expect((await run(name, deps)).outcome).toBe('Succeeded');
    // Someone replaces our object with their own of the same name, without our label.
    await core.deleteNamespacedConfigMap({ name: 'replaced-by-hand', namespace: ns });
    await core.createNamespacedConfigMap({
      namespace: ns,
      body: { metadata: { name: 'replaced-by-hand' }, data: { mine: 'yes' } },
    });

    await pushFiles(bed, repository, 'main', { 'a.yaml': configMap('new', ns) });
    const result = await run(name, deps);
    expect(result).toMatchObject({ outcome: 'Succeeded', changes: { created: 1, deleted: 1 } });
    expect(await exists(() => core.readNamespacedConfigMap({ name: 'pruned', namespace: ns }))).toBe(false);
    expect((await core.readNamespacedConfigMap({ name: 'replaced-by-hand', namespace: ns })).data).toEqual({
      mine: 'yes',
    });
    expect(await exists(() => core.readNamespacedConfigMap({ name: 'kept', namespace: ns }))).toBe(true);
    expect(await exists(() => core.readNamespacedConfigMap({ name: 'kept-for-flux', namespace: ns }))).toBe(
      true,
    );
  });

  it('an artifact with no objects prunes everything only with allowEmpty: true', async () => {
    const ns = uniqueName('empty');
    const repository = uniqueName('engine/empty');
    const name = uniqueName('empty');
    await createNamespace(kc, ns);
    await pushFiles(bed, repository, 'main', { 'a.yaml': configMap('one', ns) });
    await registerDelivery(deps, bed, { name, repository, prune: true, allowEmpty: true });
    expect((await run(name, deps)).outcome).toBe('Succeeded');
    await pushFiles(bed, repository, 'main', { 'README.md': 'empty on purpose' });
    expect(await run(name, deps)).toMatchObject({ outcome: 'Succeeded', changes: { deleted: 1 } });
    expect(await exists(() => core.readNamespacedConfigMap({ name: 'one', namespace: ns }))).toBe(false);
  });
});

describe('immutable fields', () => {
  const job = (ns: string, image: string, force: boolean | string) => `apiVersion: batch/v1
kind: Job
metadata:
  name: migrate
  namespace: ${ns}
${force ? `  annotations:\n    ${force === true ? 'sluice.io/force' : force}: enabled\n` : ''}spec:
  template:
    spec:
      restartPolicy: Never
      containers:
        - name: migrate
          image: ${image}
`;

  it('fails naming the object without sluice.io/force, recreates it with', async () => {
    const ns = uniqueName('immut');
    const repository = uniqueName('engine/immut');
    const name = uniqueName('immut');
    await createNamespace(kc, ns);
    await pushFiles(bed, repository, 'main', { 'job.yaml': job(ns, 'migrate:1', false) });
    await registerDelivery(deps, bed, { name, repository, prune: true });
    expect((await run(name, deps)).outcome).toBe('Succeeded');
    const batch = kc.makeApiClient(BatchV1Api);
    const firstUid = (await batch.readNamespacedJob({ name: 'migrate', namespace: ns })).metadata?.uid;

    await pushFiles(bed, repository, 'main', { 'job.yaml': job(ns, 'migrate:2', false) });
    const refused = await run(name, deps);
    expect(refused).toMatchObject({ outcome: 'Failed' });
    expect(refused.message).toMatch(/Job\/.*\/migrate: .*immutable.*sluice\.io\/force: enabled/);

    await pushFiles(bed, repository, 'main', { 'job.yaml': job(ns, 'migrate:2', true) });
    expect((await run(name, deps)).outcome).toBe('Succeeded');
    const recreated = await batch.readNamespacedJob({ name: 'migrate', namespace: ns });
    expect(recreated.metadata?.uid).not.toBe(firstUid);
    expect(recreated.spec?.template.spec?.containers[0]?.image).toBe('migrate:2');

    // Flux's spelling of the annotation, in an artifact made for Flux, recreates it too.
    await pushFiles(bed, repository, 'main', {
      'job.yaml': job(ns, 'migrate:3', 'kustomize.toolkit.fluxcd.io/force'),
    });
    expect((await run(name, deps)).outcome).toBe('Succeeded');
    const again = await batch.readNamespacedJob({ name: 'migrate', namespace: ns });
    expect(again.metadata?.uid).not.toBe(recreated.metadata?.uid);
    expect(again.spec?.template.spec?.containers[0]?.image).toBe('migrate:3');
  });
});

describe('health checks (wait: true)', () => {
  it('succeeds when every object is ready and fails naming the laggard on timeout', async () => {
    const ns = uniqueName('health');
    const repository = uniqueName('engine/health');
    const name = uniqueName('health');
    await createNamespace(kc, ns);
    await pushFiles(bed, repository, 'main', { 'a.yaml': configMap('ready', ns) });
    await registerDelivery(deps, bed, { name, repository, prune: true, wait: true, timeout: '3s' });
    expect((await run(name, deps)).outcome).toBe('Succeeded');

    // No controller-manager runs here, so a Deployment never rolls out: a real unready object.
    await pushFiles(bed, repository, 'main', {
      'a.yaml': configMap('ready', ns),
      'd.yaml': `apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  namespace: ${ns}\nspec:\n  selector:\n    matchLabels: { app: web }\n  template:\n    metadata:\n      labels: { app: web }\n    spec:\n      containers:\n        - name: web\n          image: nginx\n`,
    });
    const result = await run(name, deps);
    expect(result).toMatchObject({ outcome: 'Failed', reason: 'HealthCheckFailed' });
    expect(result.message).toMatch(/timed out after 3s .*Deployment\/.*\/web/);
  });
});

describe('health check expressions (wait: true)', () => {
  const customObjects = kc.makeApiClient(CustomObjectsApi);
  const SYNCED = (status: string) =>
    `status.conditions.filter(c, c.type == 'Synced').all(c, c.status == '${status}')`;

  /**
   * Starts a run applying a CRD and a Widget of it, whose health only the delivery's expressions
   * decide (no Ready condition: kstatus would call it Current at once), and returns once the
   * Widget exists, with the run still waiting.
   */
  async function startWaitingRun(timeout = '10s') {
    const group = `${uniqueName('cel')}.sluice.test`;
    const ns = uniqueName('cel');
    const repository = uniqueName('engine/cel');
    const name = uniqueName('cel');
    await createNamespace(kc, ns);
    const crd = namespacedCrd({
      group,
      kind: 'Widget',
      plural: 'widgets',
      specProperties: {},
      statusSubresource: true,
    });
    await pushFiles(bed, repository, 'main', {
      'crd.yaml': JSON.stringify(crd),
      'widget.yaml': `apiVersion: ${group}/v1\nkind: Widget\nmetadata:\n  name: w1\n  namespace: ${ns}\nspec: {}\n`,
    });
    const healthCheckExprs = [
      { apiVersion: `${group}/v1`, kind: 'Widget', failed: SYNCED('False'), current: SYNCED('True') },
    ];
    await registerDelivery(deps, bed, { name, repository, wait: true, timeout, healthCheckExprs });
    let settled = false;
    const result = run(name, deps).finally(() => (settled = true));
    const widget = { group, version: 'v1', namespace: ns, plural: 'widgets', name: 'w1' };
    await expect
      .poll(() => exists(() => customObjects.getNamespacedCustomObject(widget)), { timeout: 15_000 })
      .toBe(true);
    const setSynced = (status: string) =>
      customObjects.patchNamespacedCustomObjectStatus({
        ...widget,
        body: [{ op: 'add', path: '/status', value: { conditions: [{ type: 'Synced', status }] } }],
      });
    return { ns, result, isSettled: () => settled, setSynced };
  }

  it('waits until the current expression holds for the custom resource', async () => {
    const { result, isSettled, setSynced } = await startWaitingRun();
    // Without a status the first expression errs (no "status" field): the run keeps waiting, as Flux's.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(isSettled()).toBe(false);
    await setSynced('Unknown');
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(isSettled()).toBe(false);
    await setSynced('True');
    const outcome = await result;
    expect(outcome, outcome.message).toMatchObject({ outcome: 'Succeeded', changes: { created: 2 } });
  });

  it('fails at once, naming the object and the expression, when the failed expression holds', async () => {
    const { ns, result, setSynced } = await startWaitingRun();
    await setSynced('False');
    const started = performance.now();
    const outcome = await result;
    expect(outcome).toMatchObject({ outcome: 'Failed', reason: 'HealthCheckFailed' });
    expect(outcome.message).toContain(`Widget/${ns}/w1: the failed expression is true: ${SYNCED('False')}`);
    expect(performance.now() - started).toBeLessThan(5000); // well before the 10s timeout
  });

  it('times out on an expression that cannot be evaluated, naming the object, the expression and why', async () => {
    const { ns, result } = await startWaitingRun('3s');
    const outcome = await result;
    expect(outcome).toMatchObject({ outcome: 'Failed', reason: 'HealthCheckFailed' });
    expect(outcome.message).toContain(
      `timed out after 3s waiting for: Widget/${ns}/w1: the failed expression cannot be evaluated (the object has no "status" field): ${SYNCED('False')}`,
    );
  });
});

describe('lease', () => {
  it('lets exactly one of several concurrent reconciles touch the cluster', async () => {
    const ns = uniqueName('lease');
    const repository = uniqueName('engine/lease');
    const name = uniqueName('lease');
    await createNamespace(kc, ns);
    await pushFiles(bed, repository, 'main', { 'a.yaml': configMap('one', ns) });
    await registerDelivery(deps, bed, { name, repository, prune: true });
    const results = await Promise.all(Array.from({ length: 5 }, () => run(name, engineDeps())));
    expect(results.filter((r) => r.outcome === 'Succeeded')).toHaveLength(1);
    const skipped = results.filter((r) => r.outcome === 'Skipped');
    expect(skipped).toHaveLength(4);
    expect(skipped[0]?.message).toMatch(/holds the lease; this run changed nothing/);
  });

  it("is taken over once a crashed holder stops renewing it, judged on the claimant's own clock", async () => {
    const name = uniqueName('crashed');
    await leaveLease(deps.db, name, 'crashed-run', 800);
    // A claimant whose clock is far ahead still watches the record for its TTL before taking over.
    const ahead: Clock = { ...systemClock, now: () => new Date(Date.now() + 10 * LEASE_TTL_MS) };
    const started = performance.now();
    const second = await acquireLease(deps.db, name, 'second-run', ahead);
    expect(performance.now() - started).toBeGreaterThanOrEqual(800);
    expect(second?.holder).toBe('second-run');
    expect(second?.fence.token).toBe(2);
    await second?.release();
    const third = await acquireLease(deps.db, name, 'third-run', ahead);
    expect(third?.fence.token).toBe(3); // a free lease is taken at once, with the next token
    await third?.release();
  });
});
