// The parity comparison's pieces that decide whether `npm run parity` fails: field ownership decoded
// from managedFields, the tool's own metadata left out but users' kept, and the accepted list's
// exact matching.
import { describe, expect, it } from 'vitest';
import { acceptedBy, type AcceptedDifference } from '../../bench/flux/parity-accepted.ts';
import { compareObjects, type Difference, type Live } from '../../bench/flux/parity-compare.ts';
import { fieldPaths } from '../support/managed-fields.ts';

const configMap = (side: 'sluice' | 'flux', manager: string, extra: Record<string, unknown> = {}): Live => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: {
    name: 'settings',
    namespace: `${side}-plain`,
    uid: side,
    labels:
      side === 'sluice'
        ? { 'sluice.io/delivery': 'sluice-plain' }
        : { 'kustomize.toolkit.fluxcd.io/name': 'flux-plain' },
    annotations: { 'kustomize.toolkit.fluxcd.io/prune': 'disabled' },
    managedFields: [
      {
        manager,
        operation: 'Apply',
        fieldsV1: {
          'f:data': { 'f:k': {} },
          'f:metadata': {
            'f:labels': {
              [side === 'sluice' ? 'f:sluice.io/delivery' : 'f:kustomize.toolkit.fluxcd.io/name']: {},
            },
          },
        },
      },
    ],
  },
  data: { k: 'v' },
  ...extra,
});

describe('fieldPaths', () => {
  it('decodes fields, list keys, set values, indexes and items owned themselves', () => {
    expect(
      fieldPaths({
        'f:spec': {
          'f:ports': { 'k:{"port":80,"protocol":"TCP"}': { '.': {}, 'f:protocol': {} } },
          'f:finalizers': { 'v:"a"': {} },
          'f:args': { 'i:0': {} },
          'f:strategy': {},
        },
      }),
    ).toEqual([
      'spec.args[0]',
      'spec.finalizers[="a"]',
      'spec.ports[port=80,protocol=TCP]',
      'spec.ports[port=80,protocol=TCP].protocol',
      'spec.strategy',
    ]);
  });
});

describe('compareObjects', () => {
  const where = { scenario: 'plain', step: 'r1' };

  it('finds nothing between the same object applied by each tool, its own label aside', () => {
    expect(
      compareObjects([configMap('sluice', 'sluice')], [configMap('flux', 'kustomize-controller')], where),
    ).toEqual([]);
  });

  it('names a value, a user-written Flux annotation and a field owned on one side only', () => {
    const flux = configMap('flux', 'kustomize-controller', { data: { k: 'other' } });
    flux.metadata.annotations = {};
    (flux.metadata.managedFields as { fieldsV1: Record<string, unknown> }[])[0]!.fieldsV1['f:immutable'] = {};
    expect(compareObjects([configMap('sluice', 'sluice')], [flux], where)).toEqual([
      {
        ...where,
        kind: 'ConfigMap',
        object: 'SIDE-plain/settings',
        path: 'data.k',
        sluice: '"v"',
        flux: '"other"',
      },
      {
        ...where,
        kind: 'ConfigMap',
        object: 'SIDE-plain/settings',
        path: 'metadata.annotations',
        sluice: '{"kustomize.toolkit.fluxcd.io/prune":"disabled"}',
        flux: '(absent)',
      },
      {
        ...where,
        kind: 'ConfigMap',
        object: 'SIDE-plain/settings',
        path: 'managedFields[APPLIER (Apply)].immutable',
        sluice: 'not owned',
        flux: 'owned',
      },
    ]);
  });

  it('names an object only one side has', () => {
    expect(compareObjects([configMap('sluice', 'sluice')], [], where)).toEqual([
      {
        ...where,
        kind: 'ConfigMap',
        object: 'SIDE-plain/settings',
        path: '(object)',
        sluice: 'present',
        flux: 'absent',
      },
    ]);
  });
});

describe('acceptedBy', () => {
  const entry: AcceptedDifference = {
    kind: 'Deployment',
    path: 'managedFields[APPLIER (Apply)].spec.template.spec.containers[name=*].resources',
    sluice: 'not owned',
    flux: 'owned',
    reason: 'r',
  };
  const difference = (over: Partial<Difference>): Difference => ({
    scenario: 's',
    step: 'r1',
    kind: 'Deployment',
    object: 'SIDE-plain/web',
    path: 'managedFields[APPLIER (Apply)].spec.template.spec.containers[name=web].resources',
    sluice: 'not owned',
    flux: 'owned',
    ...over,
  });

  it('accepts the exact kind, path (a name for *) and both values, nothing near it', () => {
    expect(acceptedBy(difference({}), [entry])).toBe(entry);
    expect(acceptedBy(difference({ kind: 'StatefulSet' }), [entry])).toBeUndefined();
    expect(acceptedBy(difference({ sluice: 'owned', flux: 'not owned' }), [entry])).toBeUndefined();
    expect(
      acceptedBy(difference({ path: `${difference({}).path}.limits` }), [entry]),
      'a longer path',
    ).toBeUndefined();
    expect(
      acceptedBy(
        difference({
          path: 'managedFields[APPLIER (Apply)].spec.template.spec.containers[name=a.b].resources',
        }),
        [entry],
      ),
      '* stands for no dot',
    ).toBeUndefined();
  });
});
