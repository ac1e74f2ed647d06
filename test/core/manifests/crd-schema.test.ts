// The structural-schema adapter on plain values. Every verdict here was first taken from
// kube-apiserver 1.33 (server-side apply dry-run); crd-schema-parity.test.ts keeps checking the
// adapter against the real API server.
import { describe, expect, it } from 'vitest';
import {
  applyDefaults,
  checkCustomResource,
  checkCustomResources,
} from '../../../functions/core/manifests/crd-schema.ts';

const schemaWith = (spec: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  type: 'object',
  properties: { spec: { type: 'object', ...spec } },
  ...extra,
});
const resource = (spec: unknown, extra: Record<string, unknown> = {}) => ({
  apiVersion: 'example.com/v1',
  kind: 'Widget',
  metadata: { name: 'w', namespace: 'ns', labels: { 'sluice.io/delivery': 'd' } },
  spec,
  ...extra,
});
/** The issues, as `path: message`. */
const check = (schema: unknown, spec: unknown, extra: Record<string, unknown> = {}) =>
  checkCustomResource(schema, resource(spec, extra)).map((i) => `${i.path}: ${i.message}`);

const widget = schemaWith({
  required: ['size'],
  properties: {
    size: { type: 'integer' },
    mode: { type: 'string', enum: ['fast', 'slow'] },
    ports: { type: 'array', items: { type: 'object', properties: { name: { type: 'string' } } } },
  },
});

describe('checkCustomResource: what the API server refuses', () => {
  it('accepts a valid object, with apiVersion, kind and metadata at the root', () => {
    expect(check(widget, { size: 3, mode: 'fast', ports: [{ name: 'http' }] })).toEqual([]);
  });

  it('a wrong type, a missing required field and an enum violation, each with its path', () => {
    expect(check(widget, { size: '3' })).toEqual(['spec.size: must be of type integer, not string']);
    expect(check(widget, { mode: 'fast' })).toEqual(['spec.size: Required value']);
    expect(check(widget, { size: 1, mode: 'warp' })).toEqual([
      'spec.mode: Unsupported value "warp": supported values: "fast", "slow"',
    ]);
    expect(check(widget, { size: 1, ports: [{ name: 'a' }, { name: 7 }] })).toEqual([
      'spec.ports[1].name: must be of type string, not number',
    ]);
    expect(check(widget, null)).toEqual(['spec: must be of type object, not null']);
  });

  it('reports every problem of an object', () => {
    expect(check(widget, { mode: 'warp', ports: 'x' })).toEqual([
      'spec.size: Required value',
      'spec.mode: Unsupported value "warp": supported values: "fast", "slow"',
      'spec.ports: must be of type array, not string',
    ]);
  });

  it('refuses a field the schema does not declare, as server-side apply does', () => {
    expect(check(widget, { size: 1, colour: 'red' })).toEqual(['spec.colour: field not declared in schema']);
    expect(check(widget, { size: 1 }, { status2: {} })).toEqual(['status2: field not declared in schema']);
    expect(check(widget, { size: 1, ports: [{ name: 'a', proto: 'TCP' }] })).toEqual([
      'spec.ports[0].proto: field not declared in schema',
    ]);
    expect(
      checkCustomResource(widget, { ...resource({ size: 1 }), metadata: { name: 'w', foo: 1 } }),
    ).toEqual([{ path: 'metadata.foo', message: 'field not declared in schema' }]);
  });

  it('keeps unknown fields under x-kubernetes-preserve-unknown-fields, and in an object declaring no field', () => {
    const schema = schemaWith({
      properties: {
        free: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
        anything: { 'x-kubernetes-preserve-unknown-fields': true },
        bare: { type: 'object' },
        mixed: {
          type: 'object',
          'x-kubernetes-preserve-unknown-fields': true,
          properties: { n: { type: 'integer' } },
        },
      },
    });
    expect(
      check(schema, {
        free: { a: { b: [1, 'x', null] } },
        anything: [1, 'two'],
        bare: { dropped: true },
        mixed: { n: 1, other: 'kept' },
      }),
    ).toEqual([]);
    expect(check(schema, { anything: null })).toEqual([]);
    expect(check(schema, { mixed: { n: 'x' } })).toEqual([
      'spec.mixed.n: must be of type integer, not string',
    ]);
    // The root itself declares fields: an unknown one there is refused even without spec's schema.
    expect(check({ type: 'object' }, { a: 1 })).toEqual(['spec: field not declared in schema']);
    expect(check({ type: 'object', 'x-kubernetes-preserve-unknown-fields': true }, { a: 1 })).toEqual([]);
  });

  it('x-kubernetes-int-or-string takes integers and strings, with any pattern applied to strings', () => {
    const schema = schemaWith({
      properties: {
        port: { 'x-kubernetes-int-or-string': true },
        percent: {
          'x-kubernetes-int-or-string': true,
          anyOf: [{ type: 'integer' }, { type: 'string' }],
          pattern: '^\\d+%?$',
        },
      },
    });
    expect(check(schema, { port: 8080, percent: 5 })).toEqual([]);
    expect(check(schema, { port: 'http', percent: '25%' })).toEqual([]);
    expect(check(schema, { port: true })).toEqual([
      'spec.port: must be of type integer or string, not boolean',
    ]);
    expect(check(schema, { percent: 'half' })).toEqual([`spec.percent: "half" does not match '^\\d+%?$'`]);
    expect(check(schema, { port: null })).toEqual(['spec.port: must be of type integer or string, not null']);
  });

  it('nullable: null passes its type, but not an enum without null, and skips allOf/anyOf/oneOf/not', () => {
    const schema = schemaWith({
      properties: {
        maybe: { type: 'string', nullable: true },
        never: { type: 'string' },
        choice: { type: 'string', nullable: true, enum: ['a', 'b'] },
        either: { 'x-kubernetes-int-or-string': true, nullable: true },
        guarded: {
          type: 'object',
          nullable: true,
          properties: { a: { type: 'string' } },
          not: { required: ['a'] },
        },
        list: { type: 'array', items: { type: 'string', nullable: true } },
      },
    });
    expect(check(schema, { maybe: null, either: null, guarded: null, list: ['a', null] })).toEqual([]);
    expect(check(schema, { never: null })).toEqual(['spec.never: must be of type string, not null']);
    expect(check(schema, { choice: null })).toEqual([
      'spec.choice: Unsupported value null: supported values: "a", "b"',
    ]);
    expect(check(schema, { guarded: { a: 'x' } })).toEqual(['spec.guarded: must NOT be valid']);
  });

  it('x-kubernetes-embedded-resource: apiVersion and kind required, metadata typed, other fields per the schema', () => {
    const schema = schemaWith({
      properties: {
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
    });
    const configMap = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'X_Y' }, data: { a: 'b' } };
    expect(check(schema, { template: configMap })).toEqual([]);
    expect(check(schema, { template: { metadata: { name: 'x' } } })).toEqual([
      'spec.template.apiVersion: Required value',
      'spec.template.kind: Required value',
    ]);
    expect(check(schema, { template: { ...configMap, apiVersion: '' } })).toEqual([
      'spec.template.apiVersion: must NOT have fewer than 1 characters',
    ]);
    expect(check(schema, { template: { ...configMap, metadata: { name: 5 } } })).toEqual([
      'spec.template.metadata.name: must be of type string or null, not number',
    ]);
    expect(check(schema, { strict: { apiVersion: 'v1', kind: 'X', spec: { a: 'b' } } })).toEqual([]);
    expect(check(schema, { strict: { apiVersion: 'v1', kind: 'X', other: 1 } })).toEqual([
      'spec.strict.other: field not declared in schema',
    ]);
  });

  it('the CRD may restrict metadata.name', () => {
    const schema = {
      type: 'object',
      properties: { metadata: { type: 'object', properties: { name: { type: 'string', maxLength: 3 } } } },
      'x-kubernetes-preserve-unknown-fields': true,
    };
    expect(checkCustomResource(schema, resource({}))).toEqual([]);
    expect(checkCustomResource(schema, { ...resource({}), metadata: { name: 'toolong' } })).toEqual([
      { path: 'metadata.name', message: 'must NOT have more than 3 characters' },
    ]);
  });

  it('applies defaults before it validates, as the API server does', () => {
    const schema = schemaWith({
      properties: {
        tls: {
          type: 'object',
          required: ['mode'],
          properties: { mode: { type: 'string', default: 'strict' } },
        },
        name: { type: 'string', default: 'x' },
        items: {
          type: 'array',
          items: { type: 'object', required: ['n'], properties: { n: { type: 'integer', default: 1 } } },
        },
      },
    });
    expect(check(schema, { tls: {}, name: null, items: [{}, { n: 2 }] })).toEqual([]);
  });

  it('formats the API server checks are checked as it does; other formats pass', () => {
    const schema = schemaWith({
      properties: {
        at: { type: 'string', format: 'date-time' },
        day: { type: 'string', format: 'date' },
        id: { type: 'string', format: 'uuid' },
        data: { type: 'string', format: 'byte' },
        small: { type: 'integer', format: 'int32' },
        mail: { type: 'string', format: 'email' },
        custom: { type: 'string', format: 'no-such-format' },
      },
    });
    expect(
      check(schema, {
        at: '2024-01-02T03:04:05.123+02:00',
        day: '2024-02-29',
        id: '0193A1B2C3D4E5F6A7B8C9D0E1F2A3B4',
        data: 'aGVsbG8=',
        small: 3_000_000_000,
        mail: 'not an address',
        custom: 'anything',
      }),
    ).toEqual([]);
    expect(check(schema, { at: '2024-01-02T03:04:05', day: '2023-02-29', data: 'aGVsbG8' })).toEqual([
      'spec.at: "2024-01-02T03:04:05" is not a valid date-time',
      'spec.day: "2023-02-29" is not a valid date',
      'spec.data: "aGVsbG8" is not a valid byte',
    ]);
  });

  it('numbers: exclusive bounds as booleans, multipleOf with float tolerance', () => {
    const schema = schemaWith({
      properties: {
        below: { type: 'integer', maximum: 5, exclusiveMaximum: true },
        step: { type: 'number', multipleOf: 0.1 },
        even: { type: 'integer', multipleOf: 2 },
      },
    });
    expect(check(schema, { below: 4, step: 0.3, even: 4 })).toEqual([]);
    expect(check(schema, { below: 5, step: 0.35, even: 3 })).toEqual([
      'spec.below: must be < 5',
      'spec.step: must be a multiple of 0.1',
      'spec.even: must be a multiple of 2',
    ]);
  });

  it('x-kubernetes-list-type set and map: duplicates refused', () => {
    const schema = schemaWith({
      properties: {
        tags: { type: 'array', 'x-kubernetes-list-type': 'set', items: { type: 'string' } },
        ports: {
          type: 'array',
          'x-kubernetes-list-type': 'map',
          'x-kubernetes-list-map-keys': ['port', 'protocol'],
          items: {
            type: 'object',
            properties: { port: { type: 'integer' }, protocol: { type: 'string', default: 'TCP' } },
          },
        },
      },
    });
    expect(check(schema, { tags: ['a', 'b'], ports: [{ port: 80 }, { port: 80, protocol: 'UDP' }] })).toEqual(
      [],
    );
    expect(check(schema, { tags: ['a', 'a'] })).toHaveLength(1);
    expect(check(schema, { ports: [{ port: 80 }, { port: 80, protocol: 'TCP' }] })).toEqual([
      'spec.ports: duplicate entries for key [port=80,protocol="TCP"]',
    ]);
  });

  it("patterns in Go's syntax and semantics: \\s is ASCII, (?i), POSIX classes, \\z, $ at the end of the text", () => {
    const schema = schemaWith({
      properties: {
        word: { type: 'string', pattern: '^\\S+$' },
        caseless: { type: 'string', pattern: '(?i)^abc$' },
        posix: { type: 'string', pattern: '^[[:alpha:]]+$' },
        end: { type: 'string', pattern: '^a\\z' },
        line: { type: 'string', pattern: '^a$' },
      },
    });
    expect(check(schema, { word: 'a\u00a0b', caseless: 'ABC', posix: 'abc', end: 'a', line: 'a' })).toEqual(
      [],
    );
    expect(check(schema, { word: 'a b', caseless: 'abd', posix: 'ab1', end: 'a\n', line: 'a\nb' })).toEqual([
      `spec.word: "a b" does not match '^\\S+$'`,
      `spec.caseless: "abd" does not match '(?i)^abc$'`,
      `spec.posix: "ab1" does not match '^[[:alpha:]]+$'`,
      `spec.end: "a\\n" does not match '^a\\z'`,
      `spec.line: "a\\nb" does not match '^a$'`,
    ]);
  });

  it('a catastrophic pattern (^(a+)+$ on 60 a and a b) is decided in linear time', () => {
    const schema = schemaWith({ properties: { name: { type: 'string', pattern: '^(a+)+$' } } });
    // CPU time: the wall clock also counts other processes' turns on a shared machine.
    const started = process.cpuUsage();
    expect(check(schema, { name: `${'a'.repeat(60)}b` })).toEqual([
      `spec.name: "${'a'.repeat(60)}b" does not match '^(a+)+$'`,
    ]);
    expect(check(schema, { name: 'a'.repeat(60) })).toEqual([]);
    const { user, system } = process.cpuUsage(started);
    expect((user + system) / 1000).toBeLessThan(1000);
  });

  it('names map keys and list indexes in paths', () => {
    const schema = schemaWith({
      properties: { env: { type: 'object', additionalProperties: { type: 'string' } } },
    });
    expect(check(schema, { env: { 'app.kubernetes.io/name': 1, plain: 2 } })).toEqual([
      'spec.env[app.kubernetes.io/name]: must be of type string, not number',
      'spec.env.plain: must be of type string, not number',
    ]);
  });

  it('checks many objects at once exactly as one by one', () => {
    const objects = [
      resource({ size: 1, ports: [{ name: 'a' }] }),
      resource({ size: 'x', mode: 'fast' }),
      resource({ mode: 'warp', ports: [{ name: 1 }] }),
    ];
    expect(checkCustomResources(widget, objects)).toEqual(objects.map((o) => checkCustomResource(widget, o)));
    expect(checkCustomResources(widget, objects).map((issues) => issues.length)).toEqual([0, 1, 3]);
  });

  it('does not change the object it checks', () => {
    const object = resource({ tls: {} });
    const before = structuredClone(object);
    checkCustomResource(
      schemaWith({ properties: { tls: { type: 'object', properties: { m: { default: 1 } } } } }),
      object,
    );
    expect(object).toEqual(before);
  });

  it('a schema that is not an object checks nothing (the API server refuses the CRD itself)', () => {
    expect(checkCustomResource(undefined, resource({ anything: 1 }))).toEqual([]);
    expect(checkCustomResource('nonsense', resource({ anything: 1 }))).toEqual([]);
  });
});

describe('applyDefaults', () => {
  it('fills missing and non-nullable null properties, keeps nullable nulls, defaults map values and list items', () => {
    const schema = {
      type: 'object',
      properties: {
        a: { type: 'string', default: 'A' },
        b: { type: 'string', default: 'B' },
        c: { type: 'string', nullable: true, default: 'C' },
        nested: { type: 'object', default: {}, properties: { d: { type: 'integer', default: 4 } } },
        map: { type: 'object', additionalProperties: { type: 'object', properties: { e: { default: 5 } } } },
        list: { type: 'array', items: { type: 'string', default: 'item' } },
      },
    };
    const value = { b: null, c: null, map: { k: {} }, list: ['x', null] };
    applyDefaults(value, schema);
    expect(value).toEqual({
      a: 'A',
      b: 'B',
      c: null,
      nested: { d: 4 },
      map: { k: { e: 5 } },
      list: ['x', 'item'],
    });
  });
});
