// Every bound on what one reconcile reads, unpacks and builds, in one place. The defaults keep the
// largest artifact they accept under 80 % of the reconcile function's default memory (1024 MB,
// lib/sluice.ts), with no synchronous stretch long enough to starve the lease renewal: measured by
// `npm run bench` (bench/cases/limits.ts), figures in docs/benchmarks.md.

/** Bounds on what an artifact may unpack to (checked while inflating; reason ArtifactFailed). */
export interface UnpackLimits {
  /** The gzip stream as stored in the registry. */
  readonly maxCompressedBytes: number;
  /** All file contents together (the tar stream may add headers; reading stops soon past it). */
  readonly maxTotalBytes: number;
  /** Files and directories. */
  readonly maxFiles: number;
  readonly maxFileBytes: number;
}

/** Bounds on what the build reads and makes, checked before parsing and again while parsing (reason BuildFailed). */
export interface BuildLimits {
  /**
   * The `.yaml`/`.yml`/`.json` files under the delivery's path together; for a kustomization,
   * kustomize's output (its build is stopped as soon as it writes more).
   */
  readonly maxManifestBytes: number;
  /**
   * Objects in the build: before parsing, each file's (or kustomize's output's) YAML documents are
   * counted from their `---` lines; while parsing, objects (`List` items too) are counted exactly.
   */
  readonly maxObjects: number;
}

/** Everything a reconcile bounds; tests and benchmarks pass smaller or larger ones through `ReconcileDeps.limits`. */
export type ArtifactLimits = UnpackLimits & BuildLimits;

const MiB = 1024 * 1024;

export const DEFAULT_BUILD_LIMITS: BuildLimits = {
  maxManifestBytes: 32 * MiB,
  maxObjects: 10_000,
};

/**
 * An artifact may hold more than one build reads (other overlays, other paths), but not much more:
 * every file stays in memory for the whole run.
 */
export const DEFAULT_UNPACK_LIMITS: UnpackLimits = {
  maxCompressedBytes: 32 * MiB,
  maxTotalBytes: 64 * MiB,
  maxFiles: 10_000,
  maxFileBytes: 10 * MiB,
};

export const DEFAULT_LIMITS: ArtifactLimits = { ...DEFAULT_UNPACK_LIMITS, ...DEFAULT_BUILD_LIMITS };

/** Human-readable byte counts for limit messages. */
export function formatBytes(bytes: number): string {
  if (bytes >= 1024 * 1024) return `${+(bytes / (1024 * 1024)).toFixed(1)} MiB`;
  if (bytes >= 1024) return `${+(bytes / 1024).toFixed(1)} KiB`;
  return `${bytes} bytes`;
}

/**
 * Bounds on a live calendar (a gate's calendar read from S3 or HTTPS at evaluation): the most its
 * source may send (a longer answer is refused as it streams in, before it is parsed), how long one
 * read may take, and the most its last good copy may take in the table once gzipped (a DynamoDB
 * item holds at most 400 KB).
 */
export const LIVE_CALENDAR_LIMITS = {
  maxBytes: 1 * MiB,
  timeoutMs: 10_000,
  maxStoredBytes: 300 * 1024,
} as const;
