/** The parsed, normalised configuration: defaults filled in, durations in milliseconds. */

export type GateState = 'open' | 'closed';
export type GateAction = 'open' | 'close';

export interface GateSchedule {
  /** EventBridge Scheduler cron, six fields: `min hour day-of-month month day-of-week year`. */
  cron: string;
  /** IANA time zone; default `UTC`. */
  timeZone: string;
  action: GateAction;
  /** How long the scheduled request lasts; none = the gate's own window. */
  windowMs?: number;
}

export interface Gate {
  name: string;
  default: GateState;
  /** How long a request lasts before the gate returns to default; none = until the next request. */
  windowMs?: number;
  description?: string;
  schedules: GateSchedule[];
}

export type SourceProvider = 'aws' | 'generic';

export interface DeliverySource {
  /** `oci://host/repository` */
  url: string;
  /** Exactly one of tag, semver and digest is set (`tag: 'latest'` when none was given). */
  tag?: string;
  semver?: string;
  /** `sha256:<64 hex>` */
  digest?: string;
  provider: SourceProvider;
  /** Plain HTTP to the registry. */
  insecure: boolean;
  layerMediaType?: string;
}

export interface EksClusterTarget {
  eks: { name: string; region: string; roleArn?: string };
}
export interface KubeconfigClusterTarget {
  kubeconfig: string;
  context?: string;
}
export type ClusterTarget = EksClusterTarget | KubeconfigClusterTarget;

export type GateScope = 'all' | 'revisions';
export interface GateRef {
  name: string;
  blocks: GateScope;
}

export type DeletionPolicy = 'Delete' | 'Orphan';

export interface Delivery {
  name: string;
  source: DeliverySource;
  /** Relative path inside the artifact, normalised (`.`, `overlays/prod`). */
  path: string;
  prune: boolean;
  intervalMs: number;
  retryIntervalMs?: number;
  timeoutMs: number;
  wait: boolean;
  suspend: boolean;
  cluster: ClusterTarget;
  gates: GateRef[];
  deletionPolicy: DeletionPolicy;
  allowEmpty: boolean;
  targetNamespace?: string;
  commonMetadata?: { labels?: Record<string, string>; annotations?: Record<string, string> };
  postBuild?: { substitute?: Record<string, string> };
}

export interface SluiceConfig {
  gates: Gate[];
  deliveries: Delivery[];
}
