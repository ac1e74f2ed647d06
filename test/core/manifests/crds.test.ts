// Reading the artifact's CRDs and checking custom resources against them, on plain values.
import { describe, expect, it } from 'vitest';
import {
  artifactCrds,
  crdVersionProblem,
  customResourceProblems,
} from '../../../functions/core/manifests/crds.ts';
import type { Manifest } from '../../../functions/core/manifests/objects.ts';
import { customResourceMetadataProblems } from '../../../functions/core/manifests/object-meta.ts';

const schema = {
  openAPIV3Schema: {
    type: 'object',
    properties: { spec: { type: 'object', required: ['size'], properties: { size: { type: 'integer' } } } },
  },
};
const crd = (versions: unknown[], name = 'widgets.example.com'): Manifest => ({
  origin: 'crds/widgets.yaml',
  object: {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name },
    spec: {
      group: 'example.com',
      scope: 'Namespaced',
      names: { plural: 'widgets', kind: 'Widget' },
      versions,
    },
  },
});
const widget = (apiVersion: string, spec: unknown, name = 'w') => ({
  apiVersion,
  kind: 'Widget',
  metadata: { name, namespace: 'ns' },
  spec,
});

describe('artifactCrds', () => {
  it('reads group, kind, scope and versions', () => {
    const { crds, problems } = artifactCrds([
      crd([
        { name: 'v1', served: true, storage: true, schema },
        { name: 'v2', served: false, storage: false, schema },
      ]),
    ]);
    expect(problems).toEqual([]);
    expect(crds.get('example.com/Widget')).toMatchObject({
      name: 'widgets.example.com',
      origin: 'crds/widgets.yaml',
      namespaced: true,
      versions: [
        { name: 'v1', served: true, storage: true },
        { name: 'v2', served: false, storage: false },
      ],
    });
  });

  it('names what the API server would refuse in the versions, with file and CRD', () => {
    const at = 'crds/widgets.yaml: CustomResourceDefinition/widgets.example.com: spec.versions';
    expect(artifactCrds([crd([])]).problems).toEqual([
      `${at}: Required value: must have at least one version`,
    ]);
    expect(
      artifactCrds([
        crd([
          { name: 'v1', served: true, storage: false, schema },
          { name: 'v1', served: true, storage: false },
        ]),
      ]).problems,
    ).toEqual([
      `${at}: Invalid value: must have exactly one version marked as storage version, not 0`,
      `${at}: Duplicate value: "v1"`,
      `${at}[1].schema.openAPIV3Schema: Required value: schemas are required`,
    ]);
    expect(
      artifactCrds([
        crd([
          { name: 'v1', served: true, storage: true, schema },
          { name: 'v2', served: true, storage: true, schema },
        ]),
      ]).problems,
    ).toEqual([`${at}: Invalid value: must have exactly one version marked as storage version, not 2`]);
  });
});

describe('artifactCrds: patterns, as the API server compiles them (Go regexp)', () => {
  it("names each pattern Go's regexp does not compile, with the API server's field path and message", () => {
    const at =
      'crds/widgets.yaml: CustomResourceDefinition/widgets.example.com: spec.versions[0].schema.openAPIV3Schema';
    const withPatterns = {
      openAPIV3Schema: {
        type: 'object',
        properties: {
          spec: {
            type: 'object',
            properties: {
              back: { type: 'string', pattern: '(a)\\1' },
              ahead: { type: 'array', items: { type: 'string', pattern: 'a(?=b)' } },
              fine: { type: 'string', pattern: '^(a+)+$' },
              go: { type: 'string', pattern: '(?i)^\\pL[[:alpha:]]\\z' },
            },
            anyOf: [{ properties: { back: { pattern: '+' } } }],
          },
        },
      },
    };
    expect(
      artifactCrds([crd([{ name: 'v1', served: true, storage: true, schema: withPatterns }])]).problems,
    ).toEqual([
      `${at}.properties[spec].properties[back].pattern: Invalid value: "(a)\\\\1": must be a valid regular expression, but isn't: error parsing regexp: invalid escape sequence: \`\\1\``,
      `${at}.properties[spec].properties[ahead].items.pattern: Invalid value: "a(?=b)": must be a valid regular expression, but isn't: error parsing regexp: invalid or unsupported Perl syntax: \`(?=\``,
      `${at}.properties[spec].anyOf[0].properties[back].pattern: Invalid value: "+": must be a valid regular expression, but isn't: error parsing regexp: missing argument to repetition operator: \`+\``,
    ]);
  });
});

describe('crdVersionProblem', () => {
  const { crds } = artifactCrds([
    crd([
      { name: 'v1', served: true, storage: true, schema },
      { name: 'v1alpha1', served: false, storage: false, schema },
    ]),
  ]);
  const defined = crds.get('example.com/Widget')!;

  it('passes a served version', () => {
    expect(crdVersionProblem(widget('example.com/v1', {}), defined)).toBeUndefined();
  });

  it('names a version the CRD does not define, and one it does not serve', () => {
    expect(crdVersionProblem(widget('example.com/v2', {}), defined)).toBe(
      'apiVersion example.com/v2 is not a version of CustomResourceDefinition widgets.example.com (crds/widgets.yaml), which defines v1, v1alpha1',
    );
    expect(crdVersionProblem(widget('example.com/v1alpha1', {}), defined)).toBe(
      'apiVersion example.com/v1alpha1 is not served by CustomResourceDefinition widgets.example.com (crds/widgets.yaml) (served: false)',
    );
  });
});

describe('customResourceProblems', () => {
  const { crds } = artifactCrds([crd([{ name: 'v1', served: true, storage: true, schema }])]);
  const defined = crds.get('example.com/Widget')!;

  it("checks each resource against its version's schema and the metadata rules, in order", () => {
    const problems = customResourceProblems([
      { object: widget('example.com/v1', { size: 1 }), crd: defined },
      { object: widget('example.com/v1', { size: 'big' }), crd: defined },
      { object: widget('example.com/v1', {}, 'Bad_Name'), crd: defined },
    ]);
    expect(problems[0]).toEqual([]);
    expect(problems[1]).toEqual(['spec.size: must be of type integer, not string']);
    expect(problems[2]).toEqual([
      expect.stringMatching(
        /^metadata\.name: Invalid value "Bad_Name": must be a lowercase RFC 1123 subdomain/,
      ),
      'spec.size: Required value',
    ]);
  });
});

describe('customResourceMetadataProblems', () => {
  it('accepts what the API server accepts', () => {
    expect(
      customResourceMetadataProblems({
        name: 'a.b-c',
        labels: { 'app.kubernetes.io/name': 'web', empty: '', nulled: null },
        annotations: { 'Example.com/Note': 'any text at all' },
      }),
    ).toEqual([]);
  });

  it('names a bad name, label key, label value and annotation key', () => {
    expect(
      customResourceMetadataProblems({
        name: 'a'.repeat(254),
        labels: { 'a b': 'x', ok: 'not ok', ['x'.repeat(64)]: 'v' },
        annotations: { '/nope': 'v' },
      }).map((p) => p.split(':')[0]),
    ).toEqual([
      'metadata.name',
      'metadata.labels',
      'metadata.labels.ok',
      'metadata.labels',
      'metadata.annotations',
    ]);
  });

  it('limits the annotations to 256 KiB in all', () => {
    expect(customResourceMetadataProblems({ annotations: { a: 'x'.repeat(256 * 1024) } })).toEqual([
      'metadata.annotations: Too long: must have at most 262144 bytes',
    ]);
  });
});
