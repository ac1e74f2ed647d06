import { SluiceError } from '../errors.ts';
import type { Manifest } from './objects.ts';

const MAX_LISTED = 10;

/** Throws ValidationFailed listing every problem (up to ten), each naming its file and object. */
export function failValidation(problems: readonly string[]): never {
  const listed = problems.slice(0, MAX_LISTED).join('; ');
  const more = problems.length > MAX_LISTED ? ` (and ${problems.length - MAX_LISTED} more)` : '';
  throw new SluiceError('ValidationFailed', `${listed}${more}`);
}

/** Checks every manifest has a string apiVersion, kind and metadata.name, before anything reaches the cluster. */
export function checkRequiredFields(manifests: readonly Manifest[]): void {
  const problems: string[] = [];
  for (const { object, origin } of manifests) {
    if (typeof object !== 'object' || object === null || Array.isArray(object)) {
      problems.push(`${origin}: not an object`);
      continue;
    }
    const name = object.metadata?.name;
    const what = `${typeof object.kind === 'string' ? object.kind : '(no kind)'}/${typeof name === 'string' ? name : '(no name)'}`;
    if (typeof object.apiVersion !== 'string' || object.apiVersion === '')
      problems.push(`${origin}: ${what}: apiVersion is missing`);
    if (typeof object.kind !== 'string' || object.kind === '')
      problems.push(`${origin}: ${what}: kind is missing`);
    if (typeof object.metadata !== 'object' || object.metadata === null)
      problems.push(`${origin}: ${what}: metadata is missing`);
    else if (typeof name !== 'string' || name === '')
      problems.push(`${origin}: ${what}: metadata.name is missing`);
    const ns = object.metadata?.namespace;
    if (ns !== undefined && typeof ns !== 'string')
      problems.push(`${origin}: ${what}: metadata.namespace must be a string`);
  }
  if (problems.length > 0) failValidation(problems);
}
