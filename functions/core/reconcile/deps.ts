import type { KubeConfig } from '@kubernetes/client-node';
import type { Clock } from '../clock.ts';
import type { ClusterSessions } from '../kube/cluster-sessions.ts';
import type { ArtifactCache } from '../oci/artifact-cache.ts';
import type { KmsPublicKeys } from '../oci/kms-public-keys.ts';
import type { NotationDeps } from '../oci/notation-verify.ts';
import type { Delivery } from '../config/index.ts';
import type { ArtifactLimits } from '../limits.ts';
import type { GateConditionReaders } from '../gates/conditions.ts';
import type { WindowTimer } from '../gates/requests.ts';
import type { Decryptor } from '../manifests/encrypted.ts';
import type { OciSource, RegistryCredentials } from '../oci/index.ts';
import type { Taint } from '../taint.ts';
import type { TableClient } from '../store/table-client.ts';
import type { EventSink } from './events.ts';
import type { RetryTimer } from './retry.ts';

/** Everything a reconcile reaches outside itself, passed in so Lambda, CLI and tests share the engine. */
export interface ReconcileDeps extends GateConditionReaders {
  readonly db: TableClient;
  readonly clock: Clock;
  /** Registry credentials for a delivery's source (ECR token for provider aws). */
  readonly registryCredentials: (source: OciSource) => RegistryCredentials;
  /** A client configuration for the delivery's cluster. */
  readonly connect: (cluster: Delivery['cluster']) => Promise<KubeConfig>;
  /**
   * Connections and discovery kept per cluster across the runs of one warm container.
   * @default none: every run connects and learns the API anew
   */
  readonly clusterSessions?: ClusterSessions;
  /**
   * Manifests and layers pulled before, by digest (a warm Lambda container's /tmp).
   * @default none: every run pulls its artifact anew
   */
  readonly artifactCache?: ArtifactCache;
  /**
   * The public keys of the KMS keys sources verify against, read with kms:GetPublicKey and kept
   * across the runs of one warm container. @default none: a source verified against a KMS key fails
   */
  readonly kmsPublicKeys?: KmsPublicKeys;
  /** The clock and signer:GetRevocationStatus for sources verified with Notation. @default the system clock, no AWS Signer client */
  readonly notation?: NotationDeps;
  /**
   * Per cluster, the slot this container held last, tried first next time (one table request
   * instead of a look at every slot, then a take). @default none
   */
  readonly slotHints?: Map<string, number>;
  readonly events?: EventSink;
  /** Identifies this run in the lease (e.g. the Lambda request id). */
  readonly runId: string;
  readonly log?: (message: string) => void;
  /** The kubectl binary that runs kustomize for the build step (default: `kubectl` on PATH). */
  readonly kubectl?: string;
  /** kustomize is killed past this resident memory. @default DEFAULT_KUSTOMIZE_MEMORY_BYTES (512 MiB) */
  readonly kustomizeMemoryBytes?: number;
  /**
   * Decrypts the SOPS-encrypted objects of deliveries with `decryption` (its AWS clients are loaded
   * only when one is reconciled). @default none: such deliveries fail to build
   */
  readonly decryptor?: Decryptor;
  /** What an artifact may unpack to and its build read and make. @default DEFAULT_LIMITS */
  readonly limits?: ArtifactLimits;
  /** Schedules the retry of a failed run when the delivery sets a `retryInterval` shorter than its `interval`. */
  readonly retryTimer?: RetryTimer;
  /**
   * Reconciles the deliveries using a gate when a freeze, calendar event or CLOSED Change
   * Calendar holding it ends: nothing else invokes anything then (a schedule's opening invokes the
   * gate function, a window's end has the gate function's timer). A one-time schedule sending
   * `{"gateOpened": gate}` in AWS. @default none: the delivery interval catches up
   */
  readonly gateTimer?: WindowTimer;
  /** Reconciles other deliveries now (those that were waiting on this one through `dependsOn`). */
  readonly reconcileNow?: (deliveries: readonly string[]) => Promise<void>;
  /** How long a run waits for a slot of its cluster before it is held. @default SLOT_WAIT_MS (20 s) */
  readonly clusterSlotWaitMs?: number;
  /** How long a lease lasts without renewal. @default LEASE_TTL_MS (60 s) */
  readonly leaseTtlMs?: number;
  /**
   * The decrypted values of this run, scrubbed from what it writes out (set by the run:
   * `withTaint`). @default none: nothing decrypted is remembered, so nothing is scrubbed
   */
  readonly taint?: Taint;
  /** Per gate, its Systems Manager runbook (named in `Release Waiting` events). @default - none */
  readonly gateRunbooks?: ReadonlyMap<string, string>;
  /**
   * The gate function's name, for the CLI line of `Release Waiting` events.
   * @default - the line says `<gate function>`
   */
  readonly gateFunction?: string;
}

/** `deps` for one run: a fresh taint, and a log that scrubs it. */
export function withTaint(deps: ReconcileDeps, taint: Taint): ReconcileDeps {
  const log = deps.log;
  return { ...deps, taint, ...(log && { log: (message: string) => log(taint.scrub(message)) }) };
}
