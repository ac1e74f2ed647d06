/** The seed app of the demo: a Deployment, its Service, an HPA and a PDB, in three releases. */

export const DEMO_NAMESPACE = 'sluice-demo';

export interface Release {
  readonly version: string;
  readonly image: string;
  readonly withPdb: boolean;
}

export const RELEASES: readonly Release[] = [
  { version: '1.0.0', image: 'nginx:1.27', withPdb: true },
  { version: '1.1.0', image: 'nginx:1.27', withPdb: false },
  { version: '1.2.0', image: 'nginx:1.28', withPdb: false },
];

const ns = DEMO_NAMESPACE;

/** The release's files, path → YAML, as a team would keep them in a `deploy/` folder. */
export function releaseFiles(release: Release): Record<string, string> {
  const files: Record<string, string> = {
    'deployment.yaml': `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: ${ns}
  labels: { app: web }
spec:
  selector:
    matchLabels: { app: web }
  template:
    metadata:
      labels: { app: web }
    spec:
      containers:
        - name: web
          image: ${release.image}
          ports: [{ containerPort: 80 }]
          resources: { requests: { cpu: 100m, memory: 64Mi } }
`,
    'service.yaml': `apiVersion: v1
kind: Service
metadata:
  name: web
  namespace: ${ns}
spec:
  selector: { app: web }
  ports: [{ port: 80, targetPort: 80 }]
`,
    'hpa.yaml': `apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: web
  namespace: ${ns}
spec:
  scaleTargetRef: { apiVersion: apps/v1, kind: Deployment, name: web }
  minReplicas: 2
  maxReplicas: 5
  metrics:
    - type: Resource
      resource: { name: cpu, target: { type: Utilization, averageUtilization: 70 } }
`,
  };
  if (release.withPdb) {
    files['pdb.yaml'] = `apiVersion: policy/v1
kind: PodDisruptionBudget
metadata:
  name: web
  namespace: ${ns}
spec:
  minAvailable: 1
  selector:
    matchLabels: { app: web }
`;
  }
  return files;
}

/** The demo's config file: two gates and one delivery of the app. */
export function demoConfig(registry: string, kubeconfig: string): string {
  return `gates:
  - name: no-deploy-friday
    default: open
    window: 24h
    schedules:
      - { cron: "0 0 ? * FRI *", timeZone: Europe/Berlin, action: close }
  - name: sre-approval
    default: closed
    window: 1h
deliveries:
  - name: demo
    source: { url: "oci://${registry}/demo-app", semver: "1.x", provider: aws }
    path: deploy
    prune: true
    cluster: { kubeconfig: ${kubeconfig} }
    gates:
      - { name: no-deploy-friday, blocks: revisions }
      - { name: sre-approval, blocks: all }
`;
}
