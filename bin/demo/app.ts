/** The seed app of the demo: a Deployment, its Service, an HPA and a PDB, in three releases. */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

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
  { version: '1.2.1', image: 'nginx:1.28.1', withPdb: false },
];

const ns = DEMO_NAMESPACE;

/** web's Deployment in `namespace`, running `image`, its container's `resources` as a YAML flow map. */
export function webDeploymentYaml(
  namespace: string,
  image: string,
  resources = '{ requests: { cpu: 100m, memory: 64Mi } }',
): string {
  return `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: ${namespace}
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
          image: ${image}
          ports: [{ containerPort: 80 }]
          resources: ${resources}
`;
}

/** web's Service in `namespace`. */
export const webServiceYaml = (namespace: string): string => `apiVersion: v1
kind: Service
metadata:
  name: web
  namespace: ${namespace}
spec:
  selector: { app: web }
  ports: [{ port: 80, targetPort: 80 }]
`;

/** Writes a release's files under `root/<version>/deploy/` (a team's `deploy/` folder); returns `root/<version>`. */
export function writeReleaseDir(root: string, version: string, files: Record<string, string>): string {
  const dir = join(root, version, 'deploy');
  for (const [file, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, file)), { recursive: true });
    writeFileSync(join(dir, file), text);
  }
  return dirname(dir);
}

/** The release's files, path → YAML, as a team would keep them in a `deploy/` folder. */
export function releaseFiles(release: Release): Record<string, string> {
  const files: Record<string, string> = {
    'deployment.yaml': webDeploymentYaml(ns, release.image),
    'service.yaml': webServiceYaml(ns),
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

/** The weekday three days from `now` in Berlin: a weekly freeze on it never covers the demo's few minutes. */
export function freezeDay(now: Date): { cron: string; name: string } {
  const days = ['SUN', 'MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT'];
  const names = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];
  const berlin = new Intl.DateTimeFormat('en-US', { timeZone: 'Europe/Berlin', weekday: 'short' }).format(
    now,
  );
  const today = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'].indexOf(berlin);
  const day = (today + 3) % 7;
  return { cron: `0 0 ? * ${days[day]} *`, name: names[day]! };
}

/**
 * The demo's config file: a weekly change freeze (cron), an approval gate that opens for one
 * named revision at a time, an alarm gate closed while the checkout error-rate alarm fires, and
 * one delivery of the app behind all three.
 */
export function demoConfig(registry: string, kubeconfig: string, now = new Date()): string {
  const freeze = freezeDay(now);
  return `gates:
  - name: change-freeze # open all week, closed for 24h from ${freeze.name} 00:00 Berlin time
    default: open
    window: 24h
    schedules:
      - { cron: "${freeze.cron}", timeZone: Europe/Berlin, action: close }
  - name: sre-approval # an SRE approves each release by its digest
    default: closed
    window: 1h
    approval: revision
  - name: checkout-healthy # closed while the checkout error-rate alarm is in ALARM
    default: open
    window: 1h
    alarms: [checkout-5xx]
deliveries:
  - name: demo
    source: { url: "oci://${registry}/demo-app", semver: "1.x", provider: aws }
    path: deploy
    prune: true
    cluster: { kubeconfig: ${kubeconfig} }
    gates:
      - { name: change-freeze, blocks: revisions }
      - { name: sre-approval, blocks: all }
      - { name: checkout-healthy, blocks: revisions }
`;
}
