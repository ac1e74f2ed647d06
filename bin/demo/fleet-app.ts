/**
 * The fleet demo's app and config: a Deployment and its Service in three releases, three
 * clusters (one delivery each) in one rollout of three waves, and eu-west's own admission policy.
 */

import { webDeploymentYaml, webServiceYaml } from './app.ts';

export const FLEET_NAMESPACE = 'fleet-demo';
/** The clusters, in the order of the rollout's waves: each has one delivery of the same name. */
export const CLUSTERS = ['canary', 'eu-west', 'us-east'] as const;
export type ClusterName = (typeof CLUSTERS)[number];
export const ROLLOUT = 'web';
export const WAVE_GATE = 'eu-approval';
/** The canary wave's soak: seconds, so that the demo stays short; in production, 30m or more. */
export const CANARY_SOAK = '8s';
/** The memory a container may ask for at most in eu-west, by that cluster's own admission policy. */
export const EU_MEMORY_CEILING = '512Mi';

export interface FleetRelease {
  readonly version: string;
  readonly image: string;
  readonly memory: string;
}

export const FLEET_RELEASES: readonly FleetRelease[] = [
  { version: '1.0.0', image: 'nginx:1.27', memory: '256Mi' },
  { version: '1.1.0', image: 'nginx:1.28', memory: '256Mi' },
  // More memory than eu-west's policy allows: that cluster's API server refuses the Deployment.
  { version: '1.2.0', image: 'nginx:1.29', memory: '1Gi' },
];

const ns = FLEET_NAMESPACE;

/** The release's files, path → YAML. */
export function fleetReleaseFiles(release: FleetRelease): Record<string, string> {
  const resources = `{ requests: { cpu: 100m, memory: 128Mi }, limits: { memory: ${release.memory} } }`;
  return {
    'deployment.yaml': webDeploymentYaml(ns, release.image, resources),
    'service.yaml': webServiceYaml(ns),
  };
}

/** The config: an approval gate for the EU wave, a delivery per cluster, and the rollout. */
export function fleetConfig(registry: string, kubeconfig: string): string {
  const source = `{ url: "oci://${registry}/fleet-app", semver: "1.x", provider: aws }`;
  const deliveries = CLUSTERS.map(
    (cluster) => `  - name: ${cluster}
    source: ${source}
    path: deploy
    prune: true
    cluster: { kubeconfig: ${kubeconfig}, context: ${cluster} }
`,
  ).join('');
  return `gates:
  - name: ${WAVE_GATE} # a release manager approves each revision for the EU wave
    default: closed
    window: 1h
    approval: revision
deliveries:
${deliveries}rollouts:
  - name: ${ROLLOUT}
    source: ${source}
    waves:
      - { deliveries: [canary], soak: ${CANARY_SOAK} }
      - { deliveries: [eu-*], gate: ${WAVE_GATE} }
      - { deliveries: ["*"] } # every delivery not taken by an earlier wave
`;
}

/** eu-west's own admission policy (its platform team's, not sluice's): at most 512Mi a container. */
export const EU_MEMORY_POLICY = `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: { name: memory-ceiling }
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules:
      - apiGroups: [apps]
        apiVersions: [v1]
        operations: [CREATE, UPDATE]
        resources: [deployments]
  validations:
    - expression: >-
        object.spec.template.spec.containers.all(c,
          !has(c.resources) || !has(c.resources.limits) || !('memory' in c.resources.limits) ||
          quantity(c.resources.limits['memory']).compareTo(quantity('${EU_MEMORY_CEILING}')) <= 0)
      message: containers in eu-west may ask for at most ${EU_MEMORY_CEILING} of memory
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: { name: memory-ceiling }
spec:
  policyName: memory-ceiling
  validationActions: [Deny]
`;
