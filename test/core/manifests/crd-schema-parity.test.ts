import { systemClock } from '../../../functions/core/clock.ts';
// The pre-write check of custom resources against their CRD's schema gives the API server's own
// verdict: each case is dry-run (server-side apply, as sluice applies) against the same CRD on the
// real kube-apiserver. Where the check is knowingly weaker (formats and fields it does not mirror),
// the server refuses what the check passes, never the other way round.
import type { KubernetesObject } from '@kubernetes/client-node';
import { beforeAll, describe, expect, it } from 'vitest';
import { apiErrorMessage, KubeClient } from '../../../functions/core/kube/client.ts';
import { waitForCrdsEstablished } from '../../../functions/core/kube/wait.ts';
import { checkCustomResource } from '../../../functions/core/manifests/crd-schema.ts';
import { customResourceMetadataProblems } from '../../../functions/core/manifests/object-meta.ts';
import { createNamespace, testbed, uniqueName } from '../../support/testbed.ts';

const bed = testbed();
const kc = bed.kubeConfig();
const kube = new KubeClient(kc);
const group = `${uniqueName('parity')}.sluice.test`;
const ns = uniqueName('parity');

const schema = {
  type: 'object',
  properties: {
    metadata: { type: 'object', properties: { name: { type: 'string', maxLength: 20 } } },
    spec: {
      type: 'object',
      required: ['size'],
      properties: {
        size: { type: 'integer' },
        ratio: { type: 'number', minimum: 1, multipleOf: 0.1 },
        below: { type: 'integer', maximum: 5, exclusiveMaximum: true },
        mode: { type: 'string', enum: ['a', 'b'] },
        choice: { type: 'string', nullable: true, enum: ['a', 'b'] },
        maybe: { type: 'string', nullable: true },
        never: { type: 'string' },
        port: { 'x-kubernetes-int-or-string': true },
        percent: {
          'x-kubernetes-int-or-string': true,
          anyOf: [{ type: 'integer' }, { type: 'string' }],
          pattern: '^\\d+%?$',
        },
        word: { type: 'string', pattern: '^\\S+$' },
        defaulted: { type: 'string', default: 'd' },
        tls: {
          type: 'object',
          required: ['mode'],
          properties: { mode: { type: 'string', default: 'strict' } },
        },
        at: { type: 'string', format: 'date-time' },
        day: { type: 'string', format: 'date' },
        id: { type: 'string', format: 'uuid4' },
        data: { type: 'string', format: 'byte' },
        small: { type: 'integer', format: 'int32' },
        mail: { type: 'string', format: 'email' },
        custom: { type: 'string', format: 'no-such-format' },
        free: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
        anything: { 'x-kubernetes-preserve-unknown-fields': true },
        bare: { type: 'object' },
        env: { type: 'object', additionalProperties: { type: 'string' } },
        list: { type: 'array', maxItems: 2, items: { type: 'string', nullable: true } },
        tags: { type: 'array', 'x-kubernetes-list-type': 'set', items: { type: 'string' } },
        ports: {
          type: 'array',
          'x-kubernetes-list-type': 'map',
          'x-kubernetes-list-map-keys': ['port'],
          items: {
            type: 'object',
            required: ['port'],
            properties: { port: { type: 'integer' }, name: { type: 'string' } },
          },
        },
        guarded: {
          type: 'object',
          nullable: true,
          properties: { a: { type: 'string' }, b: { type: 'string' } },
          oneOf: [{ required: ['a'] }, { required: ['b'] }],
        },
        template: {
          type: 'object',
          'x-kubernetes-embedded-resource': true,
          'x-kubernetes-preserve-unknown-fields': true,
        },
        strict: {
          type: 'object',
          'x-kubernetes-embedded-resource': true,
          properties: { spec: { type: 'object', properties: { a: { type: 'string' } } } },
        },
      },
    },
  },
};

const crd = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: `probes.${group}` },
  spec: {
    group,
    scope: 'Namespaced',
    names: { plural: 'probes', singular: 'probe', kind: 'Probe' },
    versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: schema } }],
  },
};

const probe = (name: string, spec: unknown, extra: Record<string, unknown> = {}) => ({
  apiVersion: `${group}/v1`,
  kind: 'Probe',
  metadata: { name, namespace: ns, labels: { 'sluice.io/delivery': 'parity' } },
  spec,
  ...extra,
});

/** [case name, spec, other root fields or metadata] */
const cases: [string, unknown, Record<string, unknown>?][] = [
  ['valid', { size: 1 }],
  ['wrong type', { size: '1' }],
  ['float for integer', { size: 1.5 }],
  ['missing required', { mode: 'a' }],
  ['enum', { size: 1, mode: 'c' }],
  ['nullable enum with null', { size: 1, choice: null }],
  ['nullable null', { size: 1, maybe: null }],
  ['non-nullable null', { size: 1, never: null }],
  ['required null', { size: null }],
  ['spec null', null],
  ['spec a string', 'x'],
  ['unknown field', { size: 1, bogus: 1 }],
  ['unknown root field', { size: 1 }, { status: {} }],
  ['unknown metadata field', { size: 1 }, { metadata: { name: 'unknown-meta', namespace: ns, foo: 1 } }],
  [
    'metadata label not a string',
    { size: 1 },
    { metadata: { name: 'label-int', namespace: ns, labels: { a: 5 } } },
  ],
  ['metadata name too long for the CRD', { size: 1 }, { metadata: { name: 'a'.repeat(21), namespace: ns } }],
  ['metadata name not a subdomain', { size: 1 }, { metadata: { name: 'Bad_Name', namespace: ns } }],
  [
    'metadata label key',
    { size: 1 },
    { metadata: { name: 'label-key', namespace: ns, labels: { 'a b': 'c' } } },
  ],
  ['int-or-string integer', { size: 1, port: 80, percent: 5 }],
  ['int-or-string string', { size: 1, port: 'http', percent: '50%' }],
  ['int-or-string boolean', { size: 1, port: true }],
  ['int-or-string pattern', { size: 1, percent: 'half' }],
  ['pattern \\S on a non-ASCII space', { size: 1, word: 'a\u00a0b' }],
  ['pattern \\S on a space', { size: 1, word: 'a b' }],
  ['minimum', { size: 1, ratio: 0.5 }],
  ['multipleOf with float tolerance', { size: 1, ratio: 1.3 }],
  ['multipleOf off', { size: 1, ratio: 1.35 }],
  ['exclusiveMaximum', { size: 1, below: 5 }],
  ['default fills a required field', { size: 1, tls: {} }],
  ['default replaces a non-nullable null', { size: 1, defaulted: null }],
  ['date-time', { size: 1, at: '2024-01-02T03:04:05.5+02:00', day: '2024-02-29' }],
  ['date-time without zone', { size: 1, at: '2024-01-02T03:04:05' }],
  ['date-time odd but accepted', { size: 1, at: '2024-01-02T03:04:05x5Z' }],
  ['date not in the calendar', { size: 1, day: '2023-02-29' }],
  ['uuid4', { size: 1, id: '0193a1b2-c3d4-45f6-a7b8-c9d0e1f2a3b4' }],
  ['uuid4 of another version', { size: 1, id: '0193a1b2-c3d4-55f6-a7b8-c9d0e1f2a3b4' }],
  ['byte', { size: 1, data: 'aGVsbG8=' }],
  ['byte unpadded', { size: 1, data: 'aGVsbG8' }],
  ['int32 out of range (not enforced)', { size: 1, small: 3_000_000_000 }],
  ['unknown format', { size: 1, custom: 'anything' }],
  ['preserved fields', { size: 1, free: { a: { b: [1, null] } }, anything: ['x', 2] }],
  ['preserve without type, null', { size: 1, anything: null }],
  ['object declaring no field drops unknown ones', { size: 1, bare: { a: 1 } }],
  ['map value type', { size: 1, env: { a: 1 } }],
  ['list too long', { size: 1, list: ['a', 'b', 'c'] }],
  ['list nullable item', { size: 1, list: ['a', null] }],
  ['set duplicates', { size: 1, tags: ['a', 'a'] }],
  ['list-map duplicates', { size: 1, ports: [{ port: 80 }, { port: 80, name: 'x' }] }],
  ['list-map missing key', { size: 1, ports: [{ name: 'x' }] }],
  ['oneOf both', { size: 1, guarded: { a: 'x', b: 'y' } }],
  ['oneOf one', { size: 1, guarded: { a: 'x' } }],
  ['oneOf on null', { size: 1, guarded: null }],
  [
    'embedded resource',
    { size: 1, template: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'X' } } },
  ],
  ['embedded without kind', { size: 1, template: { apiVersion: 'v1' } }],
  ['embedded empty apiVersion', { size: 1, template: { apiVersion: '', kind: 'X' } }],
  [
    'embedded unknown metadata field',
    { size: 1, template: { apiVersion: 'v1', kind: 'X', metadata: { x: 1 } } },
  ],
  ['embedded unknown field', { size: 1, strict: { apiVersion: 'v1', kind: 'X', other: 1 } }],
];

/** Cases the check knowingly passes (it does not mirror them) and the API server refuses. */
const notMirrored: [string, unknown, Record<string, unknown>?][] = [
  ['email format', { size: 1, mail: 'nope' }],
  [
    'owner reference fields',
    { size: 1 },
    { metadata: { name: 'owner-ref', namespace: ns, ownerReferences: [{ foo: 1 }] } },
  ],
];

function objectOf(name: string, spec: unknown, extra: Record<string, unknown> = {}): KubernetesObject {
  const slug = name
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .slice(0, 20)
    .replace(/-+$/, '');
  return probe(slug, spec, extra) as KubernetesObject;
}

const ours = (object: KubernetesObject) => [
  ...customResourceMetadataProblems(object.metadata),
  ...checkCustomResource(schema, object).map((i) => `${i.path}: ${i.message}`),
];

async function servers(object: KubernetesObject): Promise<string | undefined> {
  try {
    await kube.apply(object, { dryRun: true });
    return undefined;
  } catch (error) {
    return apiErrorMessage(error);
  }
}

beforeAll(async () => {
  await createNamespace(kc, ns);
  await kube.apply(crd);
  await waitForCrdsEstablished(kube, [crd], { clock: systemClock, timeoutMs: 30_000 });
});

describe('the pre-write check of custom resources agrees with the API server', () => {
  it.each(cases)('%s', async (name, spec, extra) => {
    const object = objectOf(name, spec, extra);
    const server = await servers(object);
    const found = ours(object);
    expect(
      { refused: found.length > 0, found },
      `the API server said: ${server ?? 'accepted'}`,
    ).toMatchObject({
      refused: server !== undefined,
    });
  });

  it.each(notMirrored)('not mirrored, refused by the server only: %s', async (name, spec, extra) => {
    const object = objectOf(name, spec, extra);
    expect(ours(object)).toEqual([]);
    expect(await servers(object)).toBeDefined();
  });
});
