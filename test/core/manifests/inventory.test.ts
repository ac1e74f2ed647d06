// Inventory ids `<namespace>_<name>_<group>_<kind>` parsed as cli-utils' ParseObjMetadata parses
// them: names may contain `_` (RBAC names), namespaces, groups and kinds cannot.
import { describe, expect, it } from 'vitest';
import {
  describeEntry,
  entryFor,
  InventoryEntryError,
  refOf,
} from '../../../functions/core/manifests/inventory.ts';

describe('refOf', () => {
  it.each([
    [
      'team-a_web_apps_Deployment',
      'v1',
      { namespace: 'team-a', name: 'web', group: 'apps', kind: 'Deployment' },
    ],
    ['team-a_cfg__ConfigMap', 'v1', { namespace: 'team-a', name: 'cfg', group: '', kind: 'ConfigMap' }],
    [
      '_ci_admin_x_rbac.authorization.k8s.io_ClusterRoleBinding',
      'v1',
      { namespace: '', name: 'ci_admin_x', group: 'rbac.authorization.k8s.io', kind: 'ClusterRoleBinding' },
    ],
    [
      'ops_read_all_rbac.authorization.k8s.io_Role',
      'v1',
      { namespace: 'ops', name: 'read_all', group: 'rbac.authorization.k8s.io', kind: 'Role' },
    ],
    ['n_a__b__ConfigMap', 'v1', { namespace: 'n', name: 'a__b', group: '', kind: 'ConfigMap' }],
    [
      '__leading_rbac.authorization.k8s.io_ClusterRole',
      'v1',
      { namespace: '', name: '_leading', group: 'rbac.authorization.k8s.io', kind: 'ClusterRole' },
    ],
    [
      '_system:kube_rbac.authorization.k8s.io_ClusterRole',
      'v1',
      { namespace: '', name: 'system:kube', group: 'rbac.authorization.k8s.io', kind: 'ClusterRole' },
    ],
    [
      '_widgets.example.com_apiextensions.k8s.io_CustomResourceDefinition',
      'v1',
      {
        namespace: '',
        name: 'widgets.example.com',
        group: 'apiextensions.k8s.io',
        kind: 'CustomResourceDefinition',
      },
    ],
  ])('%s', (id, v, ref) => {
    expect(refOf({ id, v })).toEqual({ ...ref, version: v });
  });

  it.each([
    ['no separator', 'ConfigMap', 'v1', 'expected <namespace>_<name>_<group>_<kind>'],
    ['two fields', 'ns_ConfigMap', 'v1', 'expected <namespace>_<name>_<group>_<kind>'],
    ['three fields', 'ns_cfg_ConfigMap', 'v1', 'expected <namespace>_<name>_<group>_<kind>'],
    ['empty name', 'ns___ConfigMap', 'v1', 'empty name'],
    ['empty kind', 'ns_cfg__', 'v1', 'empty kind'],
    ['empty version', 'ns_cfg__ConfigMap', '', 'empty version'],
    ['empty id', '', 'v1', 'expected <namespace>_<name>_<group>_<kind>'],
  ])('refuses %s, naming the entry', (_what, id, v, why) => {
    const parse = () => refOf({ id, v });
    expect(parse).toThrow(InventoryEntryError);
    expect(parse).toThrow(`inventory entry '${id}' (version '${v}') cannot be parsed: ${why}`);
  });

  it('reads back every id entryFor writes, names with `_` included', () => {
    const objects = [
      {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRoleBinding',
        metadata: { name: 'ci_admin_x' },
      },
      { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata: { name: '_a_', namespace: 'n' } },
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', namespace: 'n' } },
      { apiVersion: 'example.com/v1alpha1', kind: 'Widget', metadata: { name: 'w__1', namespace: 'n' } },
    ];
    for (const object of objects) {
      const ref = refOf(entryFor(object));
      expect(ref).toMatchObject({
        namespace: object.metadata.namespace ?? '',
        name: object.metadata.name,
        kind: object.kind,
      });
    }
    expect(entryFor(objects[0]!).id).toBe('_ci_admin_x_rbac.authorization.k8s.io_ClusterRoleBinding');
  });

  it('describes entries as objects are described, and an unparsable one by its id', () => {
    expect(describeEntry({ id: 'n_read_all_rbac.authorization.k8s.io_Role', v: 'v1' })).toBe(
      'Role/n/read_all',
    );
    expect(describeEntry({ id: '_ci_admin_x_rbac.authorization.k8s.io_ClusterRoleBinding', v: 'v1' })).toBe(
      'ClusterRoleBinding/ci_admin_x',
    );
    expect(describeEntry({ id: 'broken', v: 'v1' })).toBe('broken');
  });
});
