/**
 * A namespaced CustomResourceDefinition with one served and stored version `v1` whose `spec`
 * has the given properties (OpenAPI v3): `<plural>.<group>`, kind `kind`. Without
 * `statusSubresource` a `status` is pruned on write; with it, any `status` is kept and written
 * through the status subresource, as controllers write it.
 */
export function namespacedCrd(options: {
  readonly group: string;
  readonly kind: string;
  readonly plural: string;
  readonly specProperties: Record<string, unknown>;
  readonly listKind?: string;
  readonly statusSubresource?: boolean;
}) {
  const { group, kind, plural, specProperties, listKind, statusSubresource } = options;
  const status = { type: 'object', 'x-kubernetes-preserve-unknown-fields': true };
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.${group}` },
    spec: {
      group,
      scope: 'Namespaced',
      names: { plural, singular: kind.toLowerCase(), kind, ...(listKind && { listKind }) },
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          schema: {
            openAPIV3Schema: {
              type: 'object',
              properties: {
                spec: { type: 'object', properties: specProperties },
                ...(statusSubresource && { status }),
              },
            },
          },
          ...(statusSubresource && { subresources: { status: {} } }),
        },
      ],
    },
  };
}
