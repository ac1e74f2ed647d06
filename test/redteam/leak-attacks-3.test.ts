// Red team, round 3: a Secret the delivery owns, quoted by an admission policy in a form the taint
// did not know. Found: the scrubber matched a value's forms exactly (as is, escaped, base64), so a
// ValidatingAdmissionPolicy whose parameter is the delivery's Secret could echo it upper-cased
// (`upperAscii()`), in hex (`'%x'.format(...)`) or percent-encoded into the run's status, events
// and `sluice diff` output.
import { ScanCommand } from '@aws-sdk/client-dynamodb';
import type { KubernetesObject } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import type { ReconcileEvent } from '../../functions/core/store/events.ts';
import type { ReconcileDeps } from '../../functions/core/reconcile/deps.ts';
import { KubeClient } from '../../functions/core/kube/client.ts';
import { Taint } from '../../functions/core/taint.ts';
import { sluice } from '../support/cli.ts';
import { engineDeps, pushFiles, registerDelivery, run } from '../support/deliveries.ts';
import { createNamespace, testbed, uniqueName } from '../support/testbed.ts';

const bed = testbed();
const events: ReconcileEvent[] = [];
const logged: string[] = [];
const deps: ReconcileDeps = {
  ...engineDeps(),
  events: { publish: async (event) => void events.push(event) },
  log: (message) => logged.push(message),
};

/** A Secret not from sops: the revision holds it in plain text (stringData). */
const TOKEN = 'Plain-Token-value-7f3a9c21';
const secret = `apiVersion: v1\nkind: Secret\nmetadata:\n  name: api-token\nstringData:\n  token: ${TOKEN}\n`;
const configMap = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\ndata:\n  a: b\n';

/** Every form the policies below echo, and parts of them (12 characters from the middle). */
const forms = [
  TOKEN.toUpperCase(),
  Buffer.from(TOKEN).toString('hex'),
  Buffer.from(TOKEN).toString('hex').toUpperCase(),
];
const expectNoForm = (text: string) => {
  for (const form of forms) {
    expect(text).not.toContain(form);
    expect(text).not.toContain(form.slice(8, 20));
  }
};

function quotingPolicy(ns: string, quoted: string): (KubernetesObject & Record<string, unknown>)[] {
  const name = uniqueName('quote3');
  return [
    {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingAdmissionPolicy',
      metadata: { name },
      spec: {
        failurePolicy: 'Fail',
        paramKind: { apiVersion: 'v1', kind: 'Secret' },
        matchConstraints: {
          resourceRules: [
            {
              apiGroups: [''],
              apiVersions: ['v1'],
              operations: ['CREATE', 'UPDATE'],
              resources: ['configmaps'],
            },
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
        paramRef: { name: 'api-token', namespace: ns, parameterNotFoundAction: 'Deny' },
        matchResources: { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': ns } } },
      },
    },
  ];
}

async function withPolicy(ns: string, quoted: string, body: () => Promise<void>) {
  const kube = new KubeClient(bed.kubeConfig());
  const objects = quotingPolicy(ns, quoted);
  for (const object of objects) await kube.apply(object);
  const probe = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'probe', namespace: ns } };
  const deadline = Date.now() + 30_000;
  for (;;) {
    const denied = await kube.apply(probe as KubernetesObject, { dryRun: true }).then(
      () => false,
      () => true,
    );
    if (denied) break;
    if (Date.now() > deadline) throw new Error('the admission policy never took effect');
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  try {
    await body();
  } finally {
    for (const object of objects) await kube.delete(object);
  }
}

describe('a plain Secret of the delivery, echoed by an admission policy in another case or encoding', () => {
  for (const [title, quoted] of [
    ['upper-cased', "string(params.data['token']).upperAscii()"],
    ['in hex', "'%x'.format([params.data['token']])"],
  ] as const) {
    it(`${title}: scrubbed from the result, events, logs, table and \`sluice diff\``, async () => {
      const ns = uniqueName('leak3');
      const name = uniqueName('leak3');
      const repository = uniqueName('leak3/app');
      await createNamespace(bed.kubeConfig(), ns);
      await registerDelivery(deps, bed, { name, repository, targetNamespace: ns, prune: true });
      await pushFiles(bed, repository, 'main', { 'token.yaml': secret });
      expect(await run(name, deps)).toMatchObject({ outcome: 'Succeeded' });
      await withPolicy(ns, quoted, async () => {
        await pushFiles(bed, repository, 'main', { 'token.yaml': secret, 'app.yaml': configMap });
        const result = await run(name, deps);
        expect(result).toMatchObject({ outcome: 'Failed', reason: 'ValidationFailed' });
        expect(result.message).toContain('denied request: [withheld: the delivery holds Secrets');
        expectNoForm(result.message);
        expectNoForm(JSON.stringify(events));
        expectNoForm(logged.join('\n'));
        const table = await bed.dynamoDb().send(new ScanCommand({ TableName: bed.dynamodb.table }));
        expectNoForm(JSON.stringify(table.Items));
        const diff = await sluice('diff', name);
        expectNoForm(diff.stdout + diff.stderr);
      });
    });
  }
});

describe('the taint matches a value in any case, hex and percent-encoded', () => {
  const value = 'p@ss w/rd:x&y=z?q#r-Secret';
  const taint = new Taint();
  taint.add(value);
  it.each([
    ['upper case', value.toUpperCase()],
    ['lower case', value.toLowerCase()],
    ['hex', Buffer.from(value).toString('hex')],
    ['HEX', Buffer.from(value).toString('hex').toUpperCase()],
    ['percent-encoded', encodeURIComponent(value)],
    ['a part, percent-encoded', encodeURIComponent(value).slice(5, 25)],
  ])('%s', (_, form) => {
    expect(taint.scrub(`refused: ${form}.`)).toBe('refused: [redacted].');
  });

  it("a binary Secret's data (not UTF-8), printed in hex", () => {
    const bytes = Buffer.from([0x8f, 0x00, 0xff, 0x13, 0x37, 0xc3, 0x28, 0xa0, 0xa1, 0xfe, 0x42, 0x99]);
    const binary = new Taint();
    binary.addSecret({
      apiVersion: 'v1',
      kind: 'Secret',
      data: { keystore: bytes.toString('base64') },
    } as never);
    expect(binary.scrub(`refused: ${bytes.toString('hex')}.`)).toBe('refused: [redacted].');
  });
});
