// Apply stages: the definitions stage holds only CRDs and Namespaces (what other objects cannot be
// dry-run without); cluster RBAC goes at the front of the next stage.
import type { KubernetesObject } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { compareApplyOrder, STAGES, stageOf } from '../../../functions/core/kube/stages.ts';

const object = (kind: string, name = 'x', namespace?: string): KubernetesObject => ({
  apiVersion: 'v1',
  kind,
  metadata: { name, ...(namespace && { namespace }) },
});

describe('stages', () => {
  it('puts only CRDs and Namespaces in the definitions stage', () => {
    expect(stageOf(object('CustomResourceDefinition'))).toBe('definitions');
    expect(stageOf(object('Namespace'))).toBe('definitions');
    for (const kind of ['ClusterRole', 'ClusterRoleBinding', 'PriorityClass', 'StorageClass'])
      expect(stageOf(object(kind))).toBe('classes');
    for (const kind of ['ConfigMap', 'Deployment', 'RoleBinding', 'Widget'])
      expect(stageOf(object(kind))).toBe('workloads');
    expect(STAGES).toEqual(['definitions', 'classes', 'workloads']);
  });

  it('orders cluster roles, then their bindings, ahead of classes, and all of them before workloads', () => {
    const objects = [
      object('Deployment', 'web', 'ns'),
      object('StorageClass', 'fast'),
      object('ClusterRoleBinding', 'b'),
      object('ConfigMap', 'c', 'ns'),
      object('ClusterRole', 'r'),
      object('Namespace', 'ns'),
      object('CustomResourceDefinition', 'w'),
    ];
    expect(objects.sort(compareApplyOrder).map((o) => o.kind)).toEqual([
      'CustomResourceDefinition',
      'Namespace',
      'ClusterRole',
      'ClusterRoleBinding',
      'StorageClass',
      'ConfigMap',
      'Deployment',
    ]);
  });
});
