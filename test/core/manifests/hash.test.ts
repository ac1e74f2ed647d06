import { describe, expect, it } from 'vitest';
import { isSubset, stableHash, storedForm } from '../../../functions/core/manifests/hash.ts';

const container = (resources: Record<string, unknown>) => ({
  spec: { template: { spec: { containers: [{ name: 'web', image: 'web:1', resources }] } } },
});

describe('isSubset', () => {
  it('ignores fields the server added', () => {
    expect(isSubset({ spec: { replicas: 2 } }, { spec: { replicas: 2, paused: false }, status: {} })).toBe(
      true,
    );
  });

  it('sees a changed value, a missing field and a list of another length', () => {
    expect(isSubset({ data: { a: '1' } }, { data: { a: '2' } })).toBe(false);
    expect(isSubset({ data: { a: '1' } }, { data: {} })).toBe(false);
    expect(isSubset({ args: ['a'] }, { args: ['a', 'b'] })).toBe(false);
  });

  it('takes quantities in the spelling the API server stores them as equal', () => {
    const written = container({
      requests: { cpu: 0.25, memory: '256Mi' },
      limits: { cpu: 1, memory: '1Gi' },
    });
    const stored = container({
      requests: { cpu: '250m', memory: '256Mi' },
      limits: { cpu: '1', memory: '1Gi' },
    });
    expect(isSubset(written, stored)).toBe(true);
    expect(isSubset(container({ limits: { cpu: 0.5 } }), container({ limits: { cpu: '500m' } }))).toBe(true);
    expect(
      isSubset(container({ limits: { memory: '1024Mi' } }), container({ limits: { memory: '1Gi' } })),
    ).toBe(true);
  });

  it('still sees a quantity that changed', () => {
    expect(isSubset(container({ limits: { cpu: 0.5 } }), container({ limits: { cpu: '250m' } }))).toBe(false);
    expect(isSubset(container({ limits: { memory: '1Gi' } }), container({ limits: { memory: '1G' } }))).toBe(
      false,
    );
  });

  it('does not take a number for a different string', () => {
    expect(isSubset({ port: 80 }, { port: '80' })).toBe(true); // the same quantity, as a server may spell it
    expect(isSubset({ name: 'web' }, { name: 'Web' })).toBe(false);
    expect(isSubset({ enabled: true }, { enabled: 'true' })).toBe(false);
  });

  it('takes empty and zero values the server leaves out as present', () => {
    expect(isSubset({ metadata: { annotations: {} } }, { metadata: {} })).toBe(true);
    expect(isSubset({ spec: { hostNetwork: false, args: [], host: '', weight: 0 } }, { spec: {} })).toBe(
      true,
    );
    expect(isSubset({ spec: { hostNetwork: true } }, { spec: {} })).toBe(false);
    expect(isSubset({ metadata: { labels: { a: 'b' } } }, { metadata: {} })).toBe(false);
  });

  it('takes a null field as "absent"', () => {
    expect(isSubset({ spec: { a: null } }, { spec: {} })).toBe(true);
    expect(isSubset({ spec: { a: null } }, { spec: { a: 1 } })).toBe(false);
  });
});

describe('storedForm', () => {
  it("stores a Secret's stringData base64-encoded in data, stringData winning over data", () => {
    const secret = {
      apiVersion: 'v1',
      kind: 'Secret',
      data: { a: 'eA==', b: 'eQ==' },
      stringData: { b: 'z', c: 'é' },
    };
    expect(storedForm(secret)).toEqual({
      apiVersion: 'v1',
      kind: 'Secret',
      data: { a: 'eA==', b: 'eg==', c: Buffer.from('é').toString('base64') },
    });
  });

  it('makes an unchanged Secret written with stringData compare as unchanged', () => {
    const written = {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 's' },
      stringData: { password: 'hunter2' },
    };
    const live = {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 's', uid: 'u' },
      data: { password: 'aHVudGVyMg==' },
      type: 'Opaque',
    };
    expect(isSubset(written, live)).toBe(false);
    expect(isSubset(storedForm(written), live)).toBe(true);
  });

  it('leaves other objects as they are', () => {
    const configMap = { apiVersion: 'v1', kind: 'ConfigMap', data: { a: 'b' } };
    expect(storedForm(configMap)).toBe(configMap);
  });
});

describe('stableHash', () => {
  it('does not depend on key order', () => {
    expect(stableHash({ a: 1, b: { c: 2, d: 3 } })).toBe(stableHash({ b: { d: 3, c: 2 }, a: 1 }));
    expect(stableHash({ a: 1 })).not.toBe(stableHash({ a: 2 }));
  });
});
