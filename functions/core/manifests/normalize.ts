// What kustomize-controller does to every object between its build and its apply
// (fluxcd/pkg/ssa normalize.UnstructuredList, called by the controller's apply): the parts that
// change what ends up in the cluster. See docs/flux-parity.md, "Field ownership".
import type { Manifest } from './objects.ts';

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** The pod spec of each kind Flux normalises, by `apiVersion/kind`. */
const POD_SPECS: Record<string, (o: Json) => unknown> = {
  'v1/Pod': (o) => o.spec,
  'apps/v1/Deployment': podTemplateSpec,
  'apps/v1/StatefulSet': podTemplateSpec,
  'apps/v1/DaemonSet': podTemplateSpec,
  'apps/v1/ReplicaSet': podTemplateSpec,
  'batch/v1/Job': podTemplateSpec,
  'batch/v1/CronJob': (o) => podTemplateSpec(field(field(o, 'spec'), 'jobTemplate')),
};

function field(value: unknown, key: string): unknown {
  return isObject(value) ? value[key] : undefined;
}

function podTemplateSpec(o: unknown): unknown {
  return field(field(field(o, 'spec'), 'template'), 'spec');
}

/** A copy of `ports` with `protocol: TCP` on each port that names none; `ports` itself if none lacks it. */
function withDefaultProtocol(ports: unknown): unknown {
  if (!Array.isArray(ports) || !ports.some((p) => isObject(p) && p.protocol === undefined)) return ports;
  return ports.map((p: unknown) => (isObject(p) && p.protocol === undefined ? { ...p, protocol: 'TCP' } : p));
}

/** A deep copy of the JSON-shaped `object` (manifests are parsed YAML: plain data only). */
const copyOf = <T>(object: T): T => structuredClone(object);

/**
 * A port without `protocol` gets `protocol: TCP`, in a Service's `spec.ports` and in the
 * `containers` (not init containers, as in Flux) of a Pod or a workload's pod template. The API
 * server defaults the same value, so the live object is the same; what differs is that the
 * applier then owns the field (kubernetes/kubernetes#98576 and structured-merge-diff#130, which
 * Flux works around).
 */
function defaultProtocols(object: Json): Json {
  const key = `${String(object.apiVersion)}/${String(object.kind)}`;
  if (key === 'v1/Service') {
    const ports = field(object.spec, 'ports');
    const defaulted = withDefaultProtocol(ports);
    if (defaulted === ports) return object;
    const copy = copyOf(object);
    (copy.spec as Json).ports = defaulted;
    return copy;
  }
  const specOf = POD_SPECS[key];
  const containers = field(specOf?.(object), 'containers');
  if (!specOf || !Array.isArray(containers)) return object;
  if (containers.every((c: unknown) => withDefaultProtocol(field(c, 'ports')) === field(c, 'ports')))
    return object;
  const copy = copyOf(object);
  for (const container of field(specOf(copy), 'containers') as unknown[])
    if (isObject(container)) container.ports = withDefaultProtocol(container.ports);
  return copy;
}

/**
 * A v1 Secret's `stringData` moved into `data` (base64; a key in both takes stringData's value, as
 * the API server does). Applied as `stringData`, a key a later revision drops stays in the
 * Secret: the API server stores it under `data`, which the applier does not own
 * (kubernetes/kubernetes#108008). A `stringData` with a value that is not a string is left as it
 * is, for the API server to refuse (Flux leaves it too: its typed conversion fails).
 */
function stringDataAsData(object: Json): Json {
  if (object.apiVersion !== 'v1' || object.kind !== 'Secret' || !isObject(object.stringData)) return object;
  const entries = Object.entries(object.stringData);
  if (!entries.every(([, value]) => typeof value === 'string')) return object;
  const { stringData: _moved, ...rest } = object;
  const data = isObject(object.data) ? { ...object.data } : {};
  for (const [key, value] of entries) data[key] = Buffer.from(value as string).toString('base64');
  return Object.keys(data).length > 0 ? { ...rest, data } : rest;
}

/**
 * Flux's normalisation of built objects, where it changes what is applied: Secret `stringData` as
 * `data`, and `protocol: TCP` on ports that name none. Flux's other changes (the empty structs and
 * `creationTimestamp: null` that a round trip through Go's typed objects adds, such as a
 * Deployment's `strategy: {}` and a container's `resources: {}`) carry no value and are not made:
 * see docs/flux-parity.md.
 */
export function normalizeAsFlux(manifests: readonly Manifest[]): Manifest[] {
  return manifests.map((manifest) => {
    const object = stringDataAsData(defaultProtocols(manifest.object));
    return object === manifest.object ? manifest : { ...manifest, object: object as Manifest['object'] };
  });
}
