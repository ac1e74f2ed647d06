import { parse, stringify } from 'yaml';
import type { Delivery } from '../config/index.ts';
import { annotatedAs, describeObject, SUBSTITUTE_ANNOTATION, type Manifest } from './objects.ts';
import { normalizeAsFlux } from './normalize.ts';
import { failValidation } from './validate.ts';

const VARIABLE = /(\$)?\$\{([A-Za-z_][A-Za-z0-9_]*)(?::=([^}]*))?\}/g;

/**
 * Flux's postBuild.substitute: `${var}` and `${var:=default}` in each object's YAML, so a
 * substituted number stays a number; `$${var}` is left as the literal `${var}`. An undefined
 * variable without a default is an error naming the object and the variable, but for a Secret,
 * whose values (decrypted ones among them) no message quotes, not even in part.
 */
export function substituteVariables(
  manifests: readonly Manifest[],
  variables: Readonly<Record<string, string>>,
): Manifest[] {
  const problems: string[] = [];
  const result = manifests.map((manifest) => {
    if (annotatedAs(manifest.object, SUBSTITUTE_ANNOTATION, 'disabled')) return manifest;
    const text = stringify(manifest.object);
    if (!text.includes('${')) return manifest;
    const substituted = text.replace(
      VARIABLE,
      (match, escaped: string | undefined, name: string, fallback: string | undefined) => {
        if (escaped) return match.slice(1);
        const value = variables[name] ?? fallback;
        if (value === undefined) {
          problems.push(
            manifest.object.kind === 'Secret'
              ? `${manifest.origin}: ${describeObject(manifest.object)}: a variable is not defined (not named: it may be part of a Secret value; set it in postBuild.substitute or give it a default)`
              : `${manifest.origin}: ${describeObject(manifest.object)}: variable "${name}" is not defined (set it in postBuild.substitute or give a default: \${${name}:=value})`,
          );
          return match;
        }
        return value;
      },
    );
    return { ...manifest, object: parse(substituted) as Manifest['object'] };
  });
  if (problems.length > 0) failValidation(problems);
  return result;
}

/** Flux's commonMetadata: labels and annotations set on every object (on a clash the delivery's value wins, as in Flux). */
export function addCommonMetadata(
  manifests: readonly Manifest[],
  common: NonNullable<Delivery['commonMetadata']>,
): Manifest[] {
  return manifests.map(({ object, ...rest }) => ({
    ...rest,
    object: {
      ...object,
      metadata: {
        ...object.metadata,
        ...(common.labels && { labels: { ...object.metadata?.labels, ...common.labels } }),
        ...(common.annotations && {
          annotations: { ...object.metadata?.annotations, ...common.annotations },
        }),
      },
    },
  }));
}

/**
 * The delivery's own transforms, after the build: substitution, then Flux's normalisation (see
 * normalize.ts), then common metadata: in kustomize-controller's order.
 */
export function applyDeliveryTransforms(manifests: readonly Manifest[], delivery: Delivery): Manifest[] {
  let result = [...manifests];
  if (delivery.postBuild?.substitute) result = substituteVariables(result, delivery.postBuild.substitute);
  result = normalizeAsFlux(result);
  if (delivery.commonMetadata) result = addCommonMetadata(result, delivery.commonMetadata);
  return result;
}
