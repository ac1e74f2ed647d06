import { describe, expect, it } from 'vitest';
import { normalizeAsFlux } from '../../../functions/core/manifests/normalize.ts';
import type { Manifest } from '../../../functions/core/manifests/objects.ts';

const manifest = (object: Record<string, unknown>): Manifest =>
  ({ object, origin: 'all.yaml' }) as unknown as Manifest;
const normalized = (object: Record<string, unknown>) => normalizeAsFlux([manifest(object)])[0]!.object;

const podSpec = {
  containers: [{ name: 'a', ports: [{ containerPort: 80 }, { containerPort: 53, protocol: 'UDP' }] }],
  initContainers: [{ name: 'i', ports: [{ containerPort: 81 }] }],
};

describe('normalizeAsFlux (fluxcd/pkg/ssa normalize)', () => {
  it('gives a Service port without protocol TCP, and keeps one that names it', () => {
    const service = {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 's' },
      spec: { ports: [{ port: 80 }, { port: 53, protocol: 'UDP' }] },
    };
    expect(normalized(service)).toEqual({
      ...service,
      spec: {
        ports: [
          { port: 80, protocol: 'TCP' },
          { port: 53, protocol: 'UDP' },
        ],
      },
    });
    expect(service.spec.ports[0]).toEqual({ port: 80 });
  });

  it.each([
    ['v1', 'Pod', (spec: unknown) => ({ spec })],
    ['apps/v1', 'Deployment', (spec: unknown) => ({ spec: { template: { spec } } })],
    ['apps/v1', 'StatefulSet', (spec: unknown) => ({ spec: { template: { spec } } })],
    ['batch/v1', 'CronJob', (spec: unknown) => ({ spec: { jobTemplate: { spec: { template: { spec } } } } })],
  ])('gives a %s %s container port TCP, but not an init container port', (apiVersion, kind, wrap) => {
    const object = { apiVersion, kind, metadata: { name: 'w' }, ...wrap(podSpec) };
    expect(normalized(object)).toEqual({
      ...object,
      ...wrap({
        ...podSpec,
        containers: [
          {
            name: 'a',
            ports: [
              { containerPort: 80, protocol: 'TCP' },
              { containerPort: 53, protocol: 'UDP' },
            ],
          },
        ],
      }),
    });
  });

  it('leaves a custom kind with the same shape alone, and returns an untouched object as it was', () => {
    const object = {
      apiVersion: 'example.com/v1',
      kind: 'Deployment',
      spec: { template: { spec: podSpec } },
    };
    expect(normalized(object)).toBe(object);
  });

  it("moves a Secret's stringData into data, stringData winning a key in both", () => {
    expect(
      normalized({
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: 's' },
        data: { a: 'b2xk', c: 'Yw==' },
        stringData: { a: 'new', d: 'd' },
      }),
    ).toEqual({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 's' },
      data: { a: 'bmV3', c: 'Yw==', d: 'ZA==' },
    });
  });

  it('leaves a stringData with a value that is not a string for the API server to refuse', () => {
    const object = { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's' }, stringData: { n: 1 } };
    expect(normalized(object)).toBe(object);
  });
});
