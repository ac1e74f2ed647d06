import { Ajv, type ErrorObject, type SchemaObject, type ValidateFunction } from 'ajv';
import { compileGoRegexp, type GoRegexp } from '../go-regexp.ts';
import { K8S_FORMATS, normalizeFormat } from './k8s-formats.ts';

/**
 * A node of a CRD version's `openAPIV3Schema` (apiextensions.k8s.io/v1 JSONSchemaProps): the
 * structural-schema dialect of JSON Schema. Read from the artifact, so every field is checked
 * before use.
 */
export type KubeSchema = Readonly<Record<string, unknown>>;

/** One way a custom resource fails its CRD's schema. */
export interface SchemaIssue {
  /** Where, as the API server names fields: `spec.ports[0].name`. */
  readonly path: string;
  /** What is wrong there: `Required value`, `must be of type integer, not string`, ... */
  readonly message: string;
}

const isSchema = (value: unknown): value is KubeSchema =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
const schemaList = (value: unknown): KubeSchema[] => (Array.isArray(value) ? value.filter(isSchema) : []);
const isNumber = (value: unknown): value is number => typeof value === 'number' && Number.isFinite(value);
const JSON_TYPES = new Set(['object', 'array', 'string', 'integer', 'number', 'boolean']);

const NULLABLE_STRING = { type: ['string', 'null'] };
const NON_EMPTY_STRING = { type: 'string', minLength: 1 };

/**
 * ObjectMeta as server-side apply types it (for the root `metadata` and embedded resources'): a
 * field it does not know is refused, as are wrongly typed labels, annotations, generation and
 * finalizers. Fields it leaves untyped (timestamps, owner references) are not checked here.
 */
const OBJECT_META: SchemaObject = {
  type: ['object', 'null'],
  properties: {
    name: NULLABLE_STRING,
    generateName: NULLABLE_STRING,
    namespace: NULLABLE_STRING,
    selfLink: NULLABLE_STRING,
    uid: NULLABLE_STRING,
    resourceVersion: NULLABLE_STRING,
    generation: { type: ['number', 'null'] },
    creationTimestamp: {},
    deletionTimestamp: {},
    deletionGracePeriodSeconds: { type: ['number', 'null'] },
    labels: { type: ['object', 'null'], additionalProperties: NULLABLE_STRING },
    annotations: { type: ['object', 'null'], additionalProperties: NULLABLE_STRING },
    ownerReferences: { type: ['array', 'null'] },
    finalizers: { type: ['array', 'null'], items: NULLABLE_STRING },
    managedFields: { type: ['array', 'null'] },
  },
  additionalProperties: false,
};

/** Where a node sits: structural nodes describe fields (and so which fields exist); value nodes only constrain. */
type Place = 'root' | 'structural' | 'value';

/**
 * The positions values have data at: their keys and (for lists) what their items hold, merged. A
 * schema is only ever applied where there is data, so the rest of it can be left out: ajv then
 * compiles the nodes of a CRD schema that the custom resources use instead of all of them (ajv
 * compiles about a node per millisecond, and big CRDs have thousands).
 */
interface Shape {
  readonly keys: Map<string, Shape>;
  items?: Shape;
}

function addShape(value: unknown, into: Shape): Shape {
  if (Array.isArray(value)) {
    into.items ??= { keys: new Map() };
    for (const item of value) addShape(item, into.items);
  } else if (isSchema(value)) {
    for (const [key, child] of Object.entries(value)) {
      const existing = into.keys.get(key) ?? { keys: new Map() };
      into.keys.set(key, addShape(child, existing));
    }
  }
  return into;
}

/** The shape of every key's value that `declared` does not name, merged (what additionalProperties applies to). */
function extraShape(shape: Shape, declared: Readonly<Record<string, unknown>>): Shape | undefined {
  let merged: Shape | undefined;
  for (const [key, child] of shape.keys) {
    if (Object.hasOwn(declared, key)) continue;
    merged ??= { keys: new Map() };
    mergeShape(child, merged);
  }
  return merged;
}

function mergeShape(from: Shape, into: Shape): void {
  for (const [key, child] of from.keys) {
    const existing = into.keys.get(key) ?? { keys: new Map() };
    mergeShape(child, existing);
    into.keys.set(key, existing);
  }
  if (from.items) {
    into.items ??= { keys: new Map() };
    mergeShape(from.items, into.items);
  }
}

function typesOf(node: KubeSchema): string[] | undefined {
  if (typeof node.type === 'string' && JSON_TYPES.has(node.type)) return [node.type];
  if (node['x-kubernetes-int-or-string'] === true) return ['integer', 'string'];
  return undefined;
}

/** `metadata`, `apiVersion` and `kind` the way the API server adds them to the root and to embedded resources. */
function resourceFields(node: KubeSchema, out: SchemaObject, place: Place, shape: Shape): void {
  const declared = (out.properties ?? {}) as Record<string, SchemaObject | boolean>;
  const withDeclared = (field: string, base: SchemaObject): SchemaObject | boolean => {
    const at = shape.keys.get(field);
    if (!at) return true;
    const own = isSchema(node.properties) ? node.properties[field] : undefined;
    // The CRD may only restrict metadata.name and metadata.generateName: value constraints, not fields.
    const constraint = field === 'metadata' && isSchema(own) ? toAjv(own, 'value', at) : declared[field];
    return constraint !== undefined && constraint !== true ? { ...base, allOf: [constraint] } : base;
  };
  const embedded = place !== 'root';
  out.properties = {
    ...declared,
    apiVersion: withDeclared('apiVersion', embedded ? NON_EMPTY_STRING : { type: 'string' }),
    kind: withDeclared('kind', embedded ? NON_EMPTY_STRING : { type: 'string' }),
    metadata: withDeclared('metadata', OBJECT_META),
  };
  if (embedded) out.required = [...new Set([...((out.required as string[]) ?? []), 'apiVersion', 'kind'])];
}

/**
 * Translates one node of the Kubernetes dialect into a JSON Schema (draft-07) that ajv checks the
 * same way, for values of `shape`.
 */
function toAjv(node: KubeSchema, place: Place, shape: Shape): SchemaObject {
  const out: SchemaObject = {};
  const types = typesOf(node);
  const nullable = node.nullable === true;
  if (types) out.type = nullable ? [...types, 'null'] : types;
  for (const keyword of [
    'maxLength',
    'minLength',
    'maxItems',
    'minItems',
    'maxProperties',
    'minProperties',
  ]) {
    if (isNumber(node[keyword])) out[keyword] = node[keyword];
  }
  // Draft-04 booleans, as OpenAPI v3.0 has them.
  if (isNumber(node.maximum))
    out[node.exclusiveMaximum === true ? 'exclusiveMaximum' : 'maximum'] = node.maximum;
  if (isNumber(node.minimum))
    out[node.exclusiveMinimum === true ? 'exclusiveMinimum' : 'minimum'] = node.minimum;
  if (isNumber(node.multipleOf) && node.multipleOf > 0) out.k8sMultipleOf = node.multipleOf;
  if (Array.isArray(node.enum) && node.enum.length > 0) out.enum = node.enum;
  if (Array.isArray(node.required))
    out.required = [...new Set(node.required.filter((r): r is string => typeof r === 'string'))];
  if (typeof node.pattern === 'string' && goPattern(node.pattern)) out.k8sPattern = node.pattern;
  const format = normalizeFormat(node.format);
  if (format !== undefined && format in K8S_FORMATS) out.format = format;
  if (node.uniqueItems === true || node['x-kubernetes-list-type'] === 'set') out.uniqueItems = true;
  const mapKeys = node['x-kubernetes-list-map-keys'];
  if (node['x-kubernetes-list-type'] === 'map' && Array.isArray(mapKeys))
    out.k8sListMapKeys = mapKeys.filter((k) => typeof k === 'string');

  const child: Place = place === 'value' ? 'value' : 'structural';
  const declared = isSchema(node.properties) ? node.properties : undefined;
  if (declared) {
    // Every declared field stays listed (additionalProperties: false reads the list); only the
    // ones the value has need their schema.
    out.properties = Object.fromEntries(
      Object.entries(declared)
        .filter(([, v]) => isSchema(v))
        .map(([k, v]) => {
          const at = shape.keys.get(k);
          return [k, at ? toAjv(v as KubeSchema, child, at) : true];
        }),
    );
  }
  if (isSchema(node.additionalProperties)) {
    const extra = extraShape(shape, declared ?? {});
    out.additionalProperties = extra ? toAjv(node.additionalProperties, child, extra) : true;
  } else if (typeof node.additionalProperties === 'boolean')
    out.additionalProperties = node.additionalProperties;
  if (isSchema(node.items)) out.items = shape.items ? toAjv(node.items, child, shape.items) : true;
  for (const keyword of ['allOf', 'anyOf', 'oneOf']) {
    const list = schemaList(node[keyword]);
    if (list.length > 0) out[keyword] = list.map((s) => toAjv(s, 'value', shape));
  }
  if (isSchema(node.not)) out.not = toAjv(node.not, 'value', shape);

  if (place !== 'value') {
    const embedded = node['x-kubernetes-embedded-resource'] === true;
    if (place === 'root' || embedded) resourceFields(node, out, place, shape);
    // Server-side apply refuses a field its schema does not declare, except under
    // x-kubernetes-preserve-unknown-fields; an object node declaring no field at all drops them.
    const preserve = node['x-kubernetes-preserve-unknown-fields'] === true;
    if (!preserve && out.additionalProperties === undefined && out.properties !== undefined)
      out.additionalProperties = false;
  }
  // The API server checks a null only for its type and enum (kube-openapi's early exit), never
  // against allOf/anyOf/oneOf/not.
  if (out.allOf || out.anyOf || out.oneOf || out.not) {
    const { type, ...rest } = out;
    const onNull: SchemaObject = out.enum ? { enum: out.enum } : {};
    return { ...(type !== undefined && { type }), if: { type: 'null' }, then: onNull, else: rest };
  }
  return out;
}

/**
 * Fills in defaults as the API server does before it validates: a missing property, or a null
 * one that is not nullable, takes the property's default; then its content is defaulted in turn.
 */
export function applyDefaults(value: unknown, node: KubeSchema | undefined): void {
  if (!node || value === null || typeof value !== 'object') return;
  const nonNullableNull = (v: unknown, s: unknown) => v === null && isSchema(s) && s.nullable !== true;
  if (Array.isArray(value)) {
    const items = isSchema(node.items) ? node.items : undefined;
    value.forEach((item, i) => {
      if (items && nonNullableNull(item, items) && items.default !== undefined)
        value[i] = structuredClone(items.default);
      applyDefaults(value[i], items);
    });
    return;
  }
  const object = value as Record<string, unknown>;
  const properties = isSchema(node.properties) ? node.properties : {};
  for (const [key, property] of Object.entries(properties)) {
    if (!isSchema(property) || property.default === undefined) continue;
    if (!(key in object) || nonNullableNull(object[key], property))
      object[key] = structuredClone(property.default);
  }
  const additional = isSchema(node.additionalProperties) ? node.additionalProperties : undefined;
  for (const key of Object.keys(object)) {
    const property = properties[key];
    if (isSchema(property)) applyDefaults(object[key], property);
    else if (additional) {
      if (nonNullableNull(object[key], additional) && additional.default !== undefined)
        object[key] = structuredClone(additional.default);
      applyDefaults(object[key], additional);
    }
  }
}

/** Go's MultipleOf (kube-openapi): exact for integers, a relative tolerance of 1e-9 for floats. */
function isMultipleOf(data: number, factor: number): boolean {
  if (Number.isInteger(data) && Number.isInteger(factor)) return data % factor === 0;
  if (Number.isInteger(data)) return true; // Go truncates the factor to an integer: not worth mirroring
  const quotient = factor < 1 ? (1 / factor) * data : data / factor;
  const rounded = Math.trunc(quotient);
  if (quotient === rounded) return true;
  return Math.abs(quotient - rounded) / Math.abs(quotient + rounded) < 1e-9;
}

const compiledPatterns = new Map<string, GoRegexp | undefined>();

/**
 * A CRD `pattern` compiled as the API server compiles it (Go's regexp), or undefined when it does
 * not compile (the CRD is refused for it: crds.ts says so) or is past REGEXP_LIMITS: then it is
 * not checked here, and the API server checks it on apply.
 */
function goPattern(pattern: string): GoRegexp | undefined {
  if (compiledPatterns.has(pattern)) return compiledPatterns.get(pattern);
  let compiled: GoRegexp | undefined;
  try {
    compiled = compileGoRegexp(pattern);
  } catch {
    compiled = undefined;
  }
  if (compiledPatterns.size >= 1000) compiledPatterns.clear();
  compiledPatterns.set(pattern, compiled);
  return compiled;
}

/** Duplicate entries of a `x-kubernetes-list-type: map` list, or entries without a key field, as server-side apply refuses them. */
function listMapProblem(keys: readonly string[], items: readonly unknown[]): string | undefined {
  const seen = new Set<string>();
  for (const [i, item] of items.entries()) {
    if (!isSchema(item)) continue;
    const missing = keys.find((k) => !(k in item));
    if (missing !== undefined) return `element ${i} omits key field "${missing}"`;
    const id = JSON.stringify(keys.map((k) => item[k]));
    if (seen.has(id))
      return `duplicate entries for key [${keys.map((k) => `${k}=${JSON.stringify(item[k])}`).join(',')}]`;
    seen.add(id);
  }
  return undefined;
}

let shared: Ajv | undefined;
function ajv(): Ajv {
  shared ??= new Ajv({
    allErrors: true,
    strict: false,
    logger: false,
    validateSchema: false,
    formats: K8S_FORMATS,
    keywords: [
      {
        keyword: 'k8sMultipleOf',
        type: 'number',
        schemaType: 'number',
        validate: function check(factor: number, data: number) {
          const ok = isMultipleOf(data, factor);
          (check as { errors?: Partial<ErrorObject>[] }).errors = ok
            ? []
            : [{ keyword: 'k8sMultipleOf', message: `must be a multiple of ${factor}` }];
          return ok;
        },
      },
      {
        // JSON Schema's `pattern` in Go's dialect, unanchored (go-openapi's MatchString). A value
        // too long to match within REGEXP_LIMITS is left to the API server.
        keyword: 'k8sPattern',
        type: 'string',
        schemaType: 'string',
        validate: function check(pattern: string, data: string) {
          const regexp = goPattern(pattern);
          const ok = !regexp || !regexp.fits(data) || regexp.test(data);
          (check as { errors?: Partial<ErrorObject>[] }).errors = ok
            ? []
            : [{ keyword: 'k8sPattern', params: { pattern } }];
          return ok;
        },
      },
      {
        keyword: 'k8sListMapKeys',
        type: 'array',
        schemaType: 'array',
        validate: function check(keys: string[], data: unknown[]) {
          const problem = listMapProblem(keys, data);
          (check as { errors?: Partial<ErrorObject>[] }).errors = problem
            ? [{ keyword: 'k8sListMapKeys', message: problem }]
            : [];
          return problem === undefined;
        },
      },
    ],
  });
  return shared;
}

/** `spec.ports[0].name` from ajv's `/spec/ports/0/name`, with indexes where the value is a list. */
function fieldPath(pointer: string, root: unknown, extra?: string): string {
  const segments = pointer
    .split('/')
    .slice(1)
    .map((s) => s.replaceAll('~1', '/').replaceAll('~0', '~'));
  if (extra !== undefined) segments.push(extra);
  let path = '';
  let at: unknown = root;
  for (const segment of segments) {
    if (Array.isArray(at)) path += `[${segment}]`;
    else if (/^[A-Za-z_$][\w$-]*$/.test(segment)) path += path ? `.${segment}` : segment;
    else path += `[${segment}]`;
    at = isSchema(at) || Array.isArray(at) ? (at as Record<string, unknown>)[segment] : undefined;
  }
  return path || '(root)';
}

const shown = (value: unknown) => JSON.stringify(value) ?? String(value);
const typeName = (value: unknown) =>
  value === null
    ? 'null'
    : Array.isArray(value)
      ? 'array'
      : typeof value === 'object'
        ? 'object'
        : typeof value;

/** The value at a JSON pointer (ajv's instancePath) of `root`. */
function dataAt(root: unknown, pointer: string): unknown {
  let at = root;
  for (const segment of pointer.split('/').slice(1)) {
    const key = segment.replaceAll('~1', '/').replaceAll('~0', '~');
    at = typeof at === 'object' && at !== null ? (at as Record<string, unknown>)[key] : undefined;
  }
  return at;
}

function issueOf(error: ErrorObject, root: unknown): SchemaIssue {
  const params = error.params as Record<string, unknown>;
  const data = dataAt(root, error.instancePath);
  switch (error.keyword) {
    case 'required':
      return {
        path: fieldPath(error.instancePath, root, String(params.missingProperty)),
        message: 'Required value',
      };
    case 'additionalProperties':
      return {
        path: fieldPath(error.instancePath, root, String(params.additionalProperty)),
        message: 'field not declared in schema',
      };
    case 'type':
      return {
        path: fieldPath(error.instancePath, root),
        message: `must be of type ${[params.type].flat().join(' or ')}, not ${typeName(data)}`,
      };
    case 'enum':
      return {
        path: fieldPath(error.instancePath, root),
        message: `Unsupported value ${shown(data)}: supported values: ${(params.allowedValues as unknown[]).map(shown).join(', ')}`,
      };
    case 'format':
      return {
        path: fieldPath(error.instancePath, root),
        message: `${shown(data)} is not a valid ${K8S_FORMAT_NAMES[String(params.format)] ?? params.format}`,
      };
    case 'k8sPattern':
      return {
        path: fieldPath(error.instancePath, root),
        message: `${shown(data)} does not match '${params.pattern}'`,
      };
    default:
      return { path: fieldPath(error.instancePath, root), message: error.message ?? error.keyword };
  }
}

const K8S_FORMAT_NAMES: Readonly<Record<string, string>> = { datetime: 'date-time' };

/** Errors of the branches of anyOf/oneOf are noise next to the anyOf/oneOf error itself; `if` only wraps. */
function isReported(error: ErrorObject): boolean {
  return error.keyword !== 'if' && !/(?<!\/properties)\/(anyOf|oneOf)\/\d+\//.test(error.schemaPath);
}

/**
 * Checks custom resources against a CRD version's `openAPIV3Schema` as the API server would for
 * a server-side apply without `fieldValidation` (what sluice sends): defaults first, then the
 * schema with Kubernetes' extensions (nullable, int-or-string, preserve-unknown-fields, embedded
 * resources, list types), formats it validates (unknown ones pass), undeclared fields refused.
 * Not checked: x-kubernetes-validations (CEL) rules, and metadata rules beyond types (see
 * object-meta.ts). A schema that cannot be compiled checks nothing: the API server's dry-run of
 * the CRD says what is wrong with it. Returns each object's issues, in order.
 */
export function checkCustomResources(openAPIV3Schema: unknown, objects: readonly unknown[]): SchemaIssue[][] {
  if (!isSchema(openAPIV3Schema)) return objects.map(() => []);
  const values = objects.map((object) => {
    const value = structuredClone(object);
    applyDefaults(value, openAPIV3Schema);
    return value;
  });
  const shape: Shape = { keys: new Map() };
  for (const value of values) addShape(value, shape);
  const validate = compile(toAjv(openAPIV3Schema, 'root', shape));
  return values.map((value) => {
    if (!validate || validate(value)) return [];
    const issues = (validate.errors ?? []).filter(isReported).map((e) => issueOf(e, value));
    const unique = new Map(issues.map((i) => [`${i.path}\n${i.message}`, i]));
    return [...unique.values()];
  });
}

/** One custom resource's issues (see checkCustomResources). */
export function checkCustomResource(openAPIV3Schema: unknown, object: unknown): SchemaIssue[] {
  return checkCustomResources(openAPIV3Schema, [object])[0]!;
}

function compile(schema: SchemaObject): ValidateFunction | undefined {
  try {
    return ajv().compile(schema);
  } catch {
    return undefined;
  } finally {
    ajv().removeSchema(schema);
  }
}
