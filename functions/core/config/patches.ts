import { parseAllDocuments } from 'yaml';
import { isRecord } from './issues.ts';

/** A problem with one delivery patch, on its `patch` text or its `target`. */
export interface PatchProblem {
  readonly field: 'patch' | 'target';
  readonly message: string;
}

const JSON6902_OPERATIONS = ['add', 'remove', 'replace', 'move', 'copy', 'test'] as const;
const NEEDS_VALUE = new Set(['add', 'replace', 'test']);
const NEEDS_FROM = new Set(['move', 'copy']);
/** `a`, `a and b`, `a, b and c` */
function listing(items: readonly string[]): string {
  return items.length <= 1 ? items.join('') : `${items.slice(0, -1).join(', ')} and ${items.at(-1)}`;
}

const SHAPES =
  'a strategic merge patch (a YAML object with kind and metadata.name) or a JSON6902 patch (a YAML or JSON list of operations)';

/**
 * The shape checks kustomize would make on a Flux-style `patches[]` entry, so a broken patch is
 * refused when the config is read, naming the patch, rather than when kustomize runs. Text with
 * `${var}` placeholders is fine: they are plain YAML strings until substitution.
 */
export function patchProblems(patch: string, hasTarget: boolean): PatchProblem[] {
  if (patch.trim() === '') return [{ field: 'patch', message: `is empty; expected ${SHAPES}` }];
  const documents = parseAllDocuments(patch);
  for (const document of Array.isArray(documents) ? documents : []) {
    const error = document.errors[0];
    if (error) {
      const at = error.linePos?.[0];
      const where = at ? ` at line ${at.line}, column ${at.col}` : '';
      return [
        {
          field: 'patch',
          message: `is not valid YAML${where}: ${error.message.split('\n')[0]!.replace(/ at line \d+, column \d+:?$/, '')}`,
        },
      ];
    }
  }
  const values = (Array.isArray(documents) ? documents : [])
    .map((document) => document.toJS({ maxAliasCount: 100 }) as unknown)
    .filter((value) => value !== null && value !== undefined);
  if (values.length === 0) return [{ field: 'patch', message: `is empty; expected ${SHAPES}` }];
  if (values.length === 1 && Array.isArray(values[0])) return json6902Problems(values[0], hasTarget);
  return strategicMergeProblems(values, hasTarget);
}

function json6902Problems(operations: readonly unknown[], hasTarget: boolean): PatchProblem[] {
  const problems: PatchProblem[] = [];
  if (!hasTarget) {
    problems.push({
      field: 'target',
      message: 'is required for a JSON6902 patch (a list of operations): it says which objects to patch',
    });
  }
  if (operations.length === 0)
    problems.push({ field: 'patch', message: 'is a JSON6902 patch with no operations' });
  operations.forEach((operation, index) => {
    const problem = operationProblem(operation);
    if (problem) problems.push({ field: 'patch', message: `operation ${index}: ${problem}` });
  });
  return problems;
}

function operationProblem(operation: unknown): string | undefined {
  if (!isRecord(operation)) return 'must be an object like { op: replace, path: /spec/replicas, value: 3 }';
  const { op, path } = operation;
  if (typeof op !== 'string' || !(JSON6902_OPERATIONS as readonly string[]).includes(op)) {
    return `op must be one of ${JSON6902_OPERATIONS.join(', ')}, not ${op === undefined ? 'missing' : JSON.stringify(op)}`;
  }
  if (typeof path !== 'string' || !path.startsWith('/')) {
    return `${op}: path must be a JSON pointer starting with "/" (e.g. /spec/replicas), not ${path === undefined ? 'missing' : JSON.stringify(path)}`;
  }
  if (NEEDS_VALUE.has(op) && !('value' in operation)) return `${op} ${path}: value is missing`;
  if (NEEDS_FROM.has(op) && (typeof operation.from !== 'string' || !operation.from.startsWith('/'))) {
    return `${op} ${path}: from must be a JSON pointer starting with "/"`;
  }
  return undefined;
}

function strategicMergeProblems(documents: readonly unknown[], hasTarget: boolean): PatchProblem[] {
  const problems: PatchProblem[] = [];
  if (documents.some((document) => !isRecord(document))) {
    return [{ field: 'patch', message: `must be ${SHAPES}` }];
  }
  if (hasTarget && documents.length > 1) {
    problems.push({
      field: 'patch',
      message: `holds ${documents.length} strategic merge patches; with a target, a patch must be a single document (kustomize refuses several)`,
    });
  }
  (documents as Record<string, unknown>[]).forEach((document, index) => {
    const which = documents.length > 1 ? `document ${index}: ` : '';
    const metadata = isRecord(document.metadata) ? document.metadata : {};
    const missing = [
      hasTarget || (typeof document.apiVersion === 'string' && document.apiVersion !== '')
        ? undefined
        : 'apiVersion',
      typeof document.kind === 'string' && document.kind !== '' ? undefined : 'kind',
      typeof metadata.name === 'string' && metadata.name !== '' ? undefined : 'metadata.name',
    ].filter((field) => field !== undefined);
    if (missing.length > 0) {
      const why = hasTarget
        ? 'kustomize needs them to read the patch, even though the target picks the objects (any name will do)'
        : 'without a target they name the object to patch';
      problems.push({
        field: 'patch',
        message: `${which}a strategic merge patch needs ${listing(missing)}: ${why}`,
      });
    }
  });
  return problems;
}
