// SOPS-encrypted Secrets delivered for real: decrypted in memory, applied to the local
// kube-apiserver and read back; nothing decrypted reaches the table, the events, the log or
// `sluice diff`; a file that cannot be decrypted fails the run, naming it, with nothing applied.
import { ScanCommand } from '@aws-sdk/client-dynamodb';
import { CoreV1Api, type KubernetesObject } from '@kubernetes/client-node';
import { beforeAll, describe, expect, it } from 'vitest';
import type { ReconcileEvent } from '../../../functions/core/store/events.ts';
import type { ReconcileDeps } from '../../../functions/core/reconcile/deps.ts';
import { deleteDelivery } from '../../../functions/core/reconcile/delete.ts';
import { diffDelivery } from '../../../functions/core/reconcile/diff.ts';
import { planRevision } from '../../../functions/core/reconcile/plan.ts';
import { KubeClient } from '../../../functions/core/kube/client.ts';
import { stableHash } from '../../../functions/core/manifests/hash.ts';
import { getDelivery } from '../../../functions/core/store/deliveries.ts';
import { readInventory } from '../../../functions/core/store/inventory.ts';
import { PLAINTEXT_MARKER } from '../../fixtures/sops/plaintext.ts';
import { sluice } from '../../support/cli.ts';
import { engineDeps, pushFiles, registerDelivery, run } from '../../support/deliveries.ts';
import { ageKeySecret, sopsDecryption, sopsFixture } from '../../support/sops.ts';
import { createNamespace, testbed, uniqueName } from '../../support/testbed.ts';

const bed = testbed();
const core = bed.kubeConfig().makeApiClient(CoreV1Api);
const events: ReconcileEvent[] = [];
const logged: string[] = [];
const deps: ReconcileDeps = {
  ...engineDeps(),
  events: { publish: async (event) => void events.push(event) },
  log: (message) => logged.push(message),
};
let ageSecret: string;
beforeAll(async () => {
  ageSecret = await ageKeySecret();
});

const configMap = (name: string) =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\ndata:\n  a: b\n`;

/**
 * A namespace and a delivery into it (`targetNamespace` unless `ownNamespaces`); `decryption: null`
 * registers one without decryption.
 */
async function setup(
  decryption: Record<string, unknown> | null = sopsDecryption(ageSecret),
  { ownNamespaces = false } = {},
) {
  const ns = uniqueName('sops');
  const name = uniqueName('sops');
  const repository = uniqueName('sops/app');
  await createNamespace(bed.kubeConfig(), ns);
  await registerDelivery(deps, bed, {
    name,
    repository,
    ...(!ownNamespaces && { targetNamespace: ns }),
    prune: true,
    ...(decryption && { decryption }),
  });
  return { ns, name, push: (files: Record<string, string>) => pushFiles(bed, repository, 'main', files) };
}

const secretValues = async (ns: string, name: string) => {
  const secret = await core.readNamespacedSecret({ name, namespace: ns });
  return Object.fromEntries(
    Object.entries(secret.data ?? {}).map(([key, value]) => [key, Buffer.from(value, 'base64').toString()]),
  );
};
const names = async (ns: string) => {
  const [secrets, configMaps] = await Promise.all([
    core.listNamespacedSecret({ namespace: ns }),
    core.listNamespacedConfigMap({ namespace: ns }),
  ]);
  return [...secrets.items, ...configMaps.items]
    .map((object) => object.metadata!.name!)
    .filter((n) => n !== 'kube-root-ca.crt')
    .sort();
};
const tableText = async () =>
  JSON.stringify((await bed.dynamoDb().send(new ScanCommand({ TableName: bed.dynamodb.table }))).Items);

describe('delivering SOPS-encrypted Secrets', () => {
  it('applies the decrypted Secrets, and writes none of their values to the table, the events or the log', async () => {
    const { ns, name, push } = await setup();
    await push({
      'db.yaml': sopsFixture('kms-secret.yaml'),
      'token.yaml': sopsFixture('age-secret.yaml'),
      'app.yaml': configMap('app'),
    });
    const result = await run(name, deps);
    expect(result).toMatchObject({ outcome: 'Succeeded', changes: { created: 3 } });
    expect(await secretValues(ns, 'db-credentials')).toEqual({
      username: 'admin',
      password: `${PLAINTEXT_MARKER}-kms-password`,
      '1': `${PLAINTEXT_MARKER}-digit-key`,
    });
    expect(await secretValues(ns, 'api-token')).toEqual({ token: `${PLAINTEXT_MARKER}-age-token` });

    expect(events.some((event) => event.delivery === name)).toBe(true);
    expect(JSON.stringify(events)).not.toContain(PLAINTEXT_MARKER);
    expect(JSON.stringify(result)).not.toContain(PLAINTEXT_MARKER);
    expect(logged.join('\n')).not.toContain(PLAINTEXT_MARKER);
    expect(await tableText()).not.toContain(PLAINTEXT_MARKER);

    // The inventory hash of a decrypted Secret is keyed (by its data key): not the plain hash of
    // the object, which would let a reader of the table check guesses of its values.
    const delivery = (await getDelivery(deps.db, name))!;
    const { desired } = await planRevision(delivery, new KubeClient(bed.kubeConfig()), deps);
    const inventory = new Map((await readInventory(deps.db, name)).map((entry) => [entry.id, entry.h]));
    for (const d of desired) {
      expect(inventory.get(d.entry.id)).toBe(d.hash);
      if (d.object.kind === 'Secret') expect(d.hash).not.toBe(stableHash(d.object));
      else expect(d.hash).toBe(stableHash(d.object));
    }
    expect(await run(name, deps)).toMatchObject({ changes: { unchanged: 3, configured: 0 } });
  });

  it('shows in diff which Secret values changed, never the values', async () => {
    const { ns, name, push } = await setup();
    await push({ 'db.yaml': sopsFixture('kms-secret.yaml') });
    expect(await run(name, deps)).toMatchObject({ outcome: 'Succeeded' });
    // The next revision changes the password (a plain Secret of the same name, for the test).
    await push({
      'db.yaml': `apiVersion: v1\nkind: Secret\nmetadata:\n  name: db-credentials\n  labels: { app: db }\nstringData:\n  username: admin\n  password: next-${PLAINTEXT_MARKER}\n  "1": ${PLAINTEXT_MARKER}-digit-key\n`,
    });
    const diff = await diffDelivery(name, deps);
    expect(diff.change).toEqual([
      { object: `Secret/${ns}/db-credentials`, fields: [{ path: 'data.password', redacted: true }] },
    ]);
    const cli = await sluice('diff', name);
    expect(cli.stdout).toContain(`~ change  Secret/${ns}/db-credentials`);
    expect(cli.stdout).toContain('data.password: (secret value changed)');
    expect(cli.stdout).not.toContain(PLAINTEXT_MARKER);
    expect(cli.stdout).not.toContain(Buffer.from(`next-${PLAINTEXT_MARKER}`).toString('base64').slice(0, 12));
    const json = await sluice('diff', name, '--json');
    expect(json.stdout).toContain('"redacted": true');
    expect(json.stdout).not.toContain(PLAINTEXT_MARKER);
  });
});

describe('a revision that cannot be decrypted applies nothing', () => {
  const cases: [string, Record<string, string>, RegExp][] = [
    [
      'a tampered value',
      {
        'db.yaml': sopsFixture('kms-secret.yaml').replace(
          /(password: ENC\[AES256_GCM,data:)(.)/,
          (_, head: string, c: string) => `${head}${c === 'A' ? 'B' : 'A'}`,
        ),
      },
      /^db\.yaml: Secret\/db-credentials: SOPS decryption failed: stringData\.password: does not decrypt/,
    ],
    [
      'a changed unencrypted value',
      { 'db.yaml': sopsFixture('kms-secret.yaml').replace('app: db', 'app: other') },
      /^db\.yaml: Secret\/db-credentials: SOPS decryption failed: MAC mismatch/,
    ],
    [
      'a missing MAC',
      { 'db.yaml': sopsFixture('kms-secret.yaml').replace(/ {4}mac: ENC\[[^\]]+\]\n/, '') },
      /^db\.yaml: Secret\/db-credentials: SOPS decryption failed: has no MAC/,
    ],
    [
      'a key the delivery does not name',
      { 'db.yaml': sopsFixture('other-kms-key.yaml') },
      /^db\.yaml: Secret\/db-credentials: SOPS decryption failed: it is encrypted for KMS key \S+, none of which/,
    ],
    [
      'an age recipient whose identity sluice lacks',
      { 'token.yaml': sopsFixture('other-age-recipient.yaml') },
      /^token\.yaml: Secret\/api-token: SOPS decryption failed: no key opens its data key/,
    ],
  ];

  it.each(cases)(
    '%s: the run fails naming the file, and the cluster keeps the last revision',
    async (_, files, message) => {
      const { ns, name, push } = await setup();
      await push({ 'app.yaml': configMap('first') });
      expect(await run(name, deps)).toMatchObject({ outcome: 'Succeeded' });
      await push({ ...files, 'app.yaml': configMap('first'), 'more.yaml': configMap('second') });
      const result = await run(name, deps);
      expect(result).toMatchObject({ outcome: 'Failed', reason: 'BuildFailed' });
      expect(result.message).toMatch(message);
      expect(result.message).not.toContain(PLAINTEXT_MARKER);
      expect(await names(ns)).toEqual(['first']);
    },
  );

  it('an encrypted document in a delivery without decryption: refused, not applied as ciphertext', async () => {
    const { ns, name, push } = await setup(null);
    await push({ 'db.yaml': sopsFixture('kms-secret.yaml'), 'app.yaml': configMap('app') });
    const result = await run(name, deps);
    expect(result).toMatchObject({ outcome: 'Failed', reason: 'BuildFailed' });
    expect(result.message).toMatch(
      /^db\.yaml: Secret\/db-credentials is SOPS-encrypted, but delivery '\S+' has no decryption/,
    );
    expect(await names(ns)).toEqual([]);
  });
});

// The canary: the age fixture's token, in plain text and as the base64 its Secret's data holds.
const CANARY = [PLAINTEXT_MARKER, Buffer.from(PLAINTEXT_MARKER).toString('base64')];
const expectNoCanary = (text: string) => {
  for (const form of CANARY) expect(text).not.toContain(form);
};

/** Everything a run writes out, for the canary: its result, events, log, table, `sluice status --json`. */
async function expectNothingLeaked(name: string, result: unknown) {
  expectNoCanary(JSON.stringify(result));
  expectNoCanary(JSON.stringify(events));
  expectNoCanary(logged.join('\n'));
  expectNoCanary(await tableText());
  const status = await sluice('status', name, '--json');
  expect(status.stdout).toContain(name);
  expectNoCanary(status.stdout + status.stderr);
}

/** A CRD of kind Leak whose schema gives data.token an enum: its check would quote the value. */
const leakCrd = (group: string) =>
  JSON.stringify({
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `leaks.${group}` },
    spec: {
      group,
      scope: 'Namespaced',
      names: { plural: 'leaks', singular: 'leak', kind: 'Leak' },
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          schema: {
            openAPIV3Schema: {
              type: 'object',
              properties: {
                data: { type: 'object', properties: { token: { type: 'string', enum: ['x'] } } },
              },
            },
          },
        },
      ],
    },
  });

/** A kustomization of the untouched encrypted file (MAC intact) that changes what the build makes of it. */
const kustomization = (
  extra: string,
  patch?: { kind: string; apiVersion: string },
  resources = 'token.yaml',
) =>
  `resources: [${resources}]\n${extra}` +
  (patch
    ? `patches:\n- target: { kind: Secret, name: api-token }\n  options: { allowKindChange: true }\n  patch: |\n` +
      `    - { op: replace, path: /kind, value: ${patch.kind} }\n` +
      `    - { op: replace, path: /apiVersion, value: ${patch.apiVersion} }\n`
    : '');

describe('a build that makes the encrypted Secret something else is not decrypted', () => {
  it('a patch turning it into a Leak (a CRD whose schema would quote the value): refused naming the file, nothing leaks', async () => {
    const { ns, name, push } = await setup();
    const group = `${uniqueName('leak')}.example.com`;
    await push({
      'kustomization.yaml': kustomization(
        '',
        { kind: 'Leak', apiVersion: `${group}/v1` },
        'token.yaml, crd.yaml',
      ),
      'token.yaml': sopsFixture('age-secret.yaml'),
      'crd.yaml': leakCrd(group),
    });
    const result = await run(name, deps);
    expect(result).toMatchObject({ outcome: 'Failed', reason: 'BuildFailed' });
    expect(result.message).toMatch(
      /^token\.yaml: Leak\/api-token: SOPS decryption failed: the build made it something other than a Secret \(v1\) its file declares/,
    );
    await expectNothingLeaked(name, result);
    expect(await names(ns)).toEqual([]);

    // Another delivery's removal plans this one (same cluster) and fails naming it, without the value.
    const removed = await setup();
    await removed.push({ 'app.yaml': configMap('app') });
    expect(await run(removed.name, deps)).toMatchObject({ outcome: 'Succeeded' });
    const removal = await deleteDelivery(removed.name, deps).then(
      () => new Error('expected the removal to fail'),
      (error: unknown) => error as Error,
    );
    expect(removal.message).toContain(`delivery '${name}'`);
    expect(removal.message).toContain('token.yaml: Leak/api-token: SOPS decryption failed');
    expectNoCanary(removal.message);
  });

  it.each([
    [
      'turned into a ConfigMap',
      kustomization('', { kind: 'ConfigMap', apiVersion: 'v1' }),
      'ConfigMap/api-token',
    ],
    ['renamed (namePrefix)', kustomization('namePrefix: leak-\n'), 'Secret/leak-api-token'],
    ['moved to another namespace', kustomization('namespace: NS2\n'), 'Secret/NS2/api-token'],
  ])(
    '%s: refused naming the file; nothing in the cluster, the table, the status or `sluice diff`',
    async (_, text, object) => {
      const { ns, name, push } = await setup(undefined, { ownNamespaces: true });
      const other = uniqueName('sops-other');
      await createNamespace(bed.kubeConfig(), other);
      await push({
        'kustomization.yaml': text.replace('NS2', other),
        'token.yaml': sopsFixture('age-secret.yaml'),
      });
      const result = await run(name, deps);
      expect(result).toMatchObject({ outcome: 'Failed', reason: 'BuildFailed' });
      expect(result.message).toContain(
        `token.yaml: ${object.replace('NS2', other)}: SOPS decryption failed: the build made it something other than a Secret (v1) its file declares`,
      );
      await expectNothingLeaked(name, result);
      expect(await names(ns)).toEqual([]);
      expect(await names(other)).toEqual([]);
      expect(await names('default')).not.toContain('api-token');
      const diff = await sluice('diff', name);
      expect(diff.code).not.toBe(0);
      expectNoCanary(diff.stdout + diff.stderr);
    },
  );
});

/** Applies cluster-scoped admission objects, and waits until `denied` sees the policy deny. */
async function admissionPolicy(objects: KubernetesObject[], denied: () => Promise<boolean>) {
  const kube = new KubeClient(bed.kubeConfig());
  for (const object of objects) await kube.apply(object);
  const deadline = Date.now() + 30_000;
  while (!(await denied())) {
    if (Date.now() > deadline) throw new Error('the admission policy never took effect');
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return () => Promise.all(objects.map((object) => kube.delete(object)));
}

const dryRunDenied = async (object: KubernetesObject) => {
  try {
    await new KubeClient(bed.kubeConfig()).apply(object, { dryRun: true });
    return false;
  } catch {
    return true;
  }
};

/** A policy denying `kind` in `ns` with a message that quotes `quoted` (CEL), bound with `paramRef`. */
function denyQuoting(
  ns: string,
  kind: string,
  quoted: string,
  paramRef?: Record<string, unknown>,
): (KubernetesObject & Record<string, unknown>)[] {
  const name = uniqueName('quote');
  return [
    {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingAdmissionPolicy',
      metadata: { name },
      spec: {
        failurePolicy: 'Fail',
        ...(paramRef && { paramKind: { apiVersion: 'v1', kind: 'Secret' } }),
        matchConstraints: {
          resourceRules: [
            { apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE', 'UPDATE'], resources: [kind] },
          ],
        },
        validations: [{ expression: 'false', messageExpression: `'refused: ' + ${quoted}` }],
      },
    },
    {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingAdmissionPolicyBinding',
      metadata: { name },
      spec: {
        policyName: name,
        validationActions: ['Deny'],
        ...(paramRef && { paramRef }),
        matchResources: {
          namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': ns } },
        },
      },
    },
  ];
}

describe('what the API server says about decrypted values is never quoted', () => {
  it("a dry-run refusal of a decrypted Secret is reported by field, without the server's message (which quotes the value)", async () => {
    const { ns, name, push } = await setup();
    const remove = await admissionPolicy(denyQuoting(ns, 'secrets', "string(object.data['token'])"), () =>
      dryRunDenied({
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: 'probe', namespace: ns },
        data: { token: 'eA==' },
      } as KubernetesObject),
    );
    try {
      await push({ 'token.yaml': sopsFixture('age-secret.yaml') });
      const result = await run(name, deps);
      expect(result).toMatchObject({ outcome: 'Failed', reason: 'ValidationFailed' });
      expect(result.message).toMatch(
        new RegExp(
          `^token\\.yaml: Secret/${ns}/api-token: the API server refused it: HTTP 422 Invalid.*its message is withheld, as the object holds decrypted values`,
        ),
      );
      await expectNothingLeaked(name, result);
      const diff = await sluice('diff', name);
      expectNoCanary(diff.stdout + diff.stderr);
      expect(await names(ns)).toEqual([]);
    } finally {
      await remove();
    }
  });

  it("a decrypted value quoted in another object's refusal is scrubbed from everything the run writes out", async () => {
    const { ns, name, push } = await setup();
    await push({ 'token.yaml': sopsFixture('age-secret.yaml') });
    expect(await run(name, deps)).toMatchObject({ outcome: 'Succeeded' });
    // A policy whose parameter is the Secret just applied quotes its value in refusing a ConfigMap.
    const paramRef = { name: 'api-token', namespace: ns, parameterNotFoundAction: 'Deny' };
    const remove = await admissionPolicy(
      denyQuoting(ns, 'configmaps', "string(params.data['token'])", paramRef),
      () =>
        dryRunDenied({
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { name: 'probe', namespace: ns },
        } as KubernetesObject),
    );
    try {
      await push({ 'token.yaml': sopsFixture('age-secret.yaml'), 'app.yaml': configMap('app') });
      const result = await run(name, deps);
      expect(result).toMatchObject({ outcome: 'Failed', reason: 'ValidationFailed' });
      expect(result.message).toContain(`app.yaml: ConfigMap/${ns}/app: `);
      expect(result.message).toContain('denied request: [withheld: the delivery holds Secrets');
      await expectNothingLeaked(name, result);
      const diff = await sluice('diff', name);
      expectNoCanary(diff.stdout + diff.stderr);
    } finally {
      await remove();
    }
  });
});

// The age fixture's token, and a part of it that holds no PLAINTEXT_MARKER whole: its middle 12 characters.
const TOKEN = `${PLAINTEXT_MARKER}-age-token`;
const MIDDLE = TOKEN.slice(10, 22);
const expectNoPart = (text: string) => {
  expectNoCanary(text);
  for (const form of [MIDDLE, Buffer.from(MIDDLE).toString('base64')]) expect(text).not.toContain(form);
};

/** A policy refusing ConfigMaps in `ns` with a message quoting the Secret `api-token` there (its param). */
const quotingApiToken = async (ns: string, quoted: string) =>
  admissionPolicy(
    denyQuoting(ns, 'configmaps', quoted, {
      name: 'api-token',
      namespace: ns,
      parameterNotFoundAction: 'Deny',
    }),
    () =>
      dryRunDenied({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'probe', namespace: ns },
      } as KubernetesObject),
  );

describe('a Secret the delivery owns is never quoted, whichever run applied it, whole or in part', () => {
  it('a revision that leaves the encrypted file out: the Secret an earlier run applied, quoted by a policy, is scrubbed from the status, event, result, diff and status', async () => {
    const { ns, name, push } = await setup();
    await push({ 'token.yaml': sopsFixture('age-secret.yaml'), 'app.yaml': configMap('app') });
    expect(await run(name, deps)).toMatchObject({ outcome: 'Succeeded' });
    const remove = await quotingApiToken(ns, "string(params.data['token'])");
    try {
      // The new revision has no encrypted file (this run decrypts nothing) and changes the
      // ConfigMap, which the policy refuses quoting the Secret the first run applied.
      await push({ 'app.yaml': configMap('app').replace('a: b', 'a: c') });
      const result = await run(name, deps);
      expect(result).toMatchObject({ outcome: 'Failed', reason: 'ValidationFailed' });
      expect(result.message).toContain(`app.yaml: ConfigMap/${ns}/app: `);
      expect(result.message).toContain('denied request: [withheld: the delivery holds Secrets');
      await expectNothingLeaked(name, result);
      expect(events.filter((event) => event.delivery === name).at(-1)).toMatchObject({ outcome: 'Failed' });

      const thrown = await diffDelivery(name, deps).then(
        () => new Error('expected the diff to fail'),
        (error: unknown) => error as Error,
      );
      expect(thrown.message).toContain('denied request: [withheld: the delivery holds Secrets');
      expectNoCanary(`${thrown.message}\n${thrown.stack}`);
      const diff = await sluice('diff', name);
      expect(diff.code).not.toBe(0);
      expect(diff.stdout + diff.stderr).toContain('denied request: [withheld: the delivery holds Secrets');
      expectNoCanary(diff.stdout + diff.stderr);
      // The Secret is still there: the failed run pruned nothing.
      expect(await secretValues(ns, 'api-token')).toEqual({ token: TOKEN });
    } finally {
      await remove();
    }
  });

  // The admission CEL environment has no base64.encode (Kubernetes does not register the Encoders
  // library there): the base64 of a part is covered by test/core/taint.test.ts.
  it('a quote of part of a value (its middle 12 characters) is scrubbed too', async () => {
    const { ns, name, push } = await setup();
    await push({ 'token.yaml': sopsFixture('age-secret.yaml') });
    expect(await run(name, deps)).toMatchObject({ outcome: 'Succeeded' });
    const remove = await quotingApiToken(ns, "string(params.data['token']).substring(10, 22) + ' (middle)'");
    try {
      await push({ 'token.yaml': sopsFixture('age-secret.yaml'), 'app.yaml': configMap('app') });
      const result = await run(name, deps);
      expect(result).toMatchObject({ outcome: 'Failed', reason: 'ValidationFailed' });
      expect(result.message).toContain('denied request: [withheld: the delivery holds Secrets');
      expectNoPart(result.message);
      expectNoPart(JSON.stringify(events));
      expectNoPart(logged.join('\n'));
      expectNoPart(await tableText());
      const status = await sluice('status', name, '--json');
      expect(status.stdout).toContain(name);
      expectNoPart(status.stdout + status.stderr);
      const diff = await sluice('diff', name);
      // (diff only dry-runs objects that exist: the new ConfigMap is listed to create.)
      expectNoPart(diff.stdout + diff.stderr);
    } finally {
      await remove();
    }
  });
});
