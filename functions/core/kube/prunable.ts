import type { KubernetesObject } from '@kubernetes/client-node';
import { annotationSetTo, OWNER_LABEL, PRUNE_ANNOTATION } from '../manifests/objects.ts';

/**
 * Why prune must leave `live` in place (its owner label does not name this delivery, or it is
 * annotated `sluice.io/prune: disabled` or Flux's `kustomize.toolkit.fluxcd.io/prune: disabled`), or
 * undefined when prune may delete it.
 */
export function reasonToKeep(live: KubernetesObject, deliveryName: string): string | undefined {
  const owner = live.metadata?.labels?.[OWNER_LABEL];
  if (owner !== deliveryName) return owner ? `owned by delivery '${owner}'` : `has no ${OWNER_LABEL} label`;
  const disabled = annotationSetTo(live, PRUNE_ANNOTATION, 'disabled');
  if (disabled) return `annotated ${disabled}: disabled`;
  return undefined;
}
