// Red team round 4: the artifact's own ValidatingAdmissionPolicy takes the delivery's decrypted
// Secret as its parameter and, refusing a plain ConfigMap, quotes the Secret's value in pieces
// shorter than the taint's fragment, which no scrubber can recognise. Someone who can push to the
// repository but holds no key would read the value in the delivery's status.
import { CoreV1Api } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { poll, systemClock } from '../../functions/core/clock.ts';
import { getStatus } from '../../functions/core/store/status.ts';
import { engineDeps, pushFiles, registerDelivery, run } from '../support/deliveries.ts';
import { ageKeySecret, sopsDecryption } from '../support/sops.ts';
import { sopsEncrypt } from '../support/sops-encrypt.ts';
import { createNamespace, testbed, uniqueName } from '../support/testbed.ts';
import { stringify } from 'yaml';

const bed = testbed();
const TOKEN = 'rt4Vap7Chunk3Canary9Token5Value';
/** `data.token` as the Secret holds it (a parameter's fields are read as JSON: base64 text). */
const STORED = Buffer.from(TOKEN).toString('base64');
/** The token as the policy quotes it: five characters of its base64 at a time, spaced. */
const CHUNKED = STORED.match(/.{1,5}/g)!.join(' ');

function policy(name: string, namespace: string) {
  const chunks = Array.from(
    { length: Math.ceil(STORED.length / 5) },
    (_, i) => `params.data.token.substring(${i * 5}, ${Math.min(STORED.length, i * 5 + 5)})`,
  );
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
        validations: [
          {
            expression: "!has(object.metadata.labels) || !('rt4-refuse' in object.metadata.labels)",
            messageExpression: chunks.join(" + ' ' + "),
          },
        ],
      },
    },
    {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingAdmissionPolicyBinding',
      metadata: { name },
      spec: {
        policyName: name,
        validationActions: ['Deny'],
        paramRef: { name: 'creds', namespace, parameterNotFoundAction: 'Allow' },
        matchResources: { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': namespace } } },
      },
    },
  ];
}

const refused = (namespace: string) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: 'refused', namespace, labels: { 'rt4-refuse': 'yes' } },
  data: { a: 'b' },
});

describe('an admission policy of the artifact quoting a decrypted Secret in pieces', () => {
  it('leaves no piece of it in the result, the status or the log', async () => {
    const deps = engineDeps();
    const lines: string[] = [];
    const logged = { ...deps, log: (line: string) => lines.push(line) };
    const namespace = uniqueName('rt4-vap');
    await createNamespace(bed.kubeConfig(), namespace);
    const secret = await sopsEncrypt([
      {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: 'creds', namespace },
        data: { token: STORED },
      },
    ]);
    const name = uniqueName('rt4-vap');
    const files = {
      'secret.yaml': secret,
      'policy.yaml': policy(name, namespace)
        .map((doc) => stringify(doc))
        .join('---\n'),
    };
    const delivery = await registerDelivery(deps, bed, {
      name,
      repository: name,
      path: '.',
      prune: true,
      targetNamespace: namespace,
      decryption: sopsDecryption(await ageKeySecret()),
    });
    await pushFiles(bed, name, 'main', files);
    const first = await run(delivery.name, logged);
    expect(first.outcome, first.message).toBe('Succeeded');

    // Wait until the API server enforces the policy (it quotes the token once it does).
    const core = bed.kubeConfig().makeApiClient(CoreV1Api);
    let answer = '';
    const enforced = await poll({
      clock: systemClock,
      every: 200,
      timeout: 30_000,
      until: async () => {
        try {
          await core.createNamespacedConfigMap({ namespace, body: refused(namespace), dryRun: 'All' });
          return false;
        } catch (error) {
          answer = String((error as { body?: unknown }).body);
          return answer.includes(CHUNKED);
        }
      },
    });
    expect(enforced, answer).toBe(true);

    await pushFiles(bed, name, 'main', { ...files, 'refused.yaml': stringify(refused(namespace)) });
    const second = await run(delivery.name, logged);
    expect(second.outcome).toBe('Failed');
    expect(second.message).toContain(`ValidatingAdmissionPolicy '${name}'`);
    const status = await getStatus(deps.db, delivery.name);
    for (const text of [second.message, JSON.stringify(status), ...lines]) {
      expect(text).not.toContain(CHUNKED);
      expect(text).not.toContain(STORED.slice(0, 5));
    }
  });
});
