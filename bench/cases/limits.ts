// 8: the largest artifacts the default limits accept, each reconciled from scratch by the bundled
// reconcile handler in a child process: peak memory against the reconcile function's configured
// memory, and the longest event-loop stall (what would hold up the lease renewal).
// Part of `npm run bench`; alone: `npx tsx bench/cases/limits.ts`, which replaces this benchmark's
// rows and section in docs/benchmarks.md and leaves the rest of the file as it is.
import { ECRClient } from '@aws-sdk/client-ecr';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { gzipSync } from 'node:zlib';
import { format, resolveConfig } from 'prettier';
import { systemClock } from '../../functions/core/clock.ts';
import { parseDelivery } from '../../functions/core/config/index.ts';
import { DEFAULT_LIMITS, type ArtifactLimits } from '../../functions/core/limits.ts';
import { ecrCredentials, pushArtifact, RegistryClient } from '../../functions/core/oci/index.ts';
import type { ReconcileResult } from '../../functions/core/reconcile/reconcile.ts';
import { putDelivery } from '../../functions/core/store/deliveries.ts';
import { functionId, synth } from '../../test/lib/synth.ts';
import { withContents } from '../../test/support/markdown-outline.ts';
import { startBenchBed } from '../bed.ts';
import { benchContext, type BenchContext } from '../context.ts';
import { describeMachine } from '../machine.ts';
import { measure } from '../meter.ts';
import { renderSection, table, targetRow, type BenchOutcome, type TargetCheck } from '../report.ts';
import { formatBytes, formatMs } from '../stats.ts';
import { bundlesBench } from './bundles.ts';

const MiB = 2 ** 20;
/** Peak RSS must stay under this share of the function's configured memory. */
const MEMORY_SHARE = 0.8;
const STALL_TARGET_MS = 1000;
/** A document of the "big documents" shape: a ConfigMap under the API server's 1 MiB limit. */
const BIG_DOCUMENT_BYTES = 900 * 1024;
const DOCUMENTS_PER_FILE = 1000;
const FILLER_FILE_BYTES = 8 * MiB;
const TIME = '/usr/bin/time';
const TITLE = '8. The largest accepted artifact: memory and event-loop stalls';

interface Shape {
  readonly key: string;
  readonly label: string;
  /** Files under `deploy/` (the delivery's path). */
  readonly manifests: Record<string, string>;
  readonly objects: number;
  /** Whether the limits must refuse it. */
  readonly refused: boolean;
  /** Built by kustomize: its own peak memory counts too (a process of its own, in the same function). */
  readonly kustomize?: boolean;
}

interface ChildReport {
  readonly ms: number;
  readonly results: ReconcileResult[];
  readonly baselineRss: number;
  readonly sampledPeakRss: number;
  readonly peakHeapUsed: number;
  readonly maxRss: number;
  readonly kernelMaxRss: number;
  readonly longestStallMs: number;
}

interface Measured {
  readonly shape: Shape;
  readonly manifestBytes: number;
  readonly artifactBytes: number;
  readonly layerBytes: number;
  readonly report: ChildReport;
  /** kubectl kustomize's peak resident set, 0 when it did not run. */
  readonly kustomizeRss: number;
  readonly requests: number;
}

function namespaceDoc(ns: string): string {
  return `apiVersion: v1\nkind: Namespace\nmetadata:\n  name: ${ns}\n`;
}

/** A ConfigMap as people write them, `dataBytes` of its `data` in one entry of `lines`-long lines. */
function configMap(ns: string, i: number, dataBytes: number, lineBytes = 100): string {
  const line = 'abcdefghijklmnopqrstuvwxyz0123456789'
    .repeat(Math.ceil(lineBytes / 36))
    .slice(0, lineBytes - 5);
  const lines = Math.max(0, Math.floor(dataBytes / lineBytes));
  const body = Array.from({ length: lines }, (_, k) => `    ${String(k % 10)}${line}`).join('\n');
  return (
    `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: config-${i}\n  namespace: ${ns}\n  labels:\n` +
    `    app.kubernetes.io/name: app-${i % 7}\n    app.kubernetes.io/part-of: bench\ndata:\n` +
    `  LOG_LEVEL: info\n  FEATURE_FLAGS: search,checkout,recommendations\n` +
    (lines > 0 ? `  app.properties: |\n${body}\n` : '')
  );
}

/** Documents in files of DOCUMENTS_PER_FILE under `deploy/`. */
function filesOf(docs: readonly string[]): Record<string, string> {
  const files: Record<string, string> = {};
  for (let i = 0; i * DOCUMENTS_PER_FILE < docs.length; i++) {
    files[`deploy/part-${String(i).padStart(3, '0')}.yaml`] = docs
      .slice(i * DOCUMENTS_PER_FILE, (i + 1) * DOCUMENTS_PER_FILE)
      .join('---\n');
  }
  return files;
}

const bytesOf = (files: Record<string, string | Buffer>) =>
  Object.values(files).reduce((sum, content) => sum + Buffer.byteLength(content), 0);

/** `count` objects (a Namespace and ConfigMaps) whose files add up to about `bytes`. */
function manyDocuments(ns: string, count: number, bytes: number): Record<string, string> {
  const overhead = Buffer.byteLength(configMap(ns, count, 0)) + 4;
  const dataBytes = Math.max(0, Math.floor((bytes - namespaceDoc(ns).length) / (count - 1)) - overhead - 24);
  const docs = [namespaceDoc(ns)];
  for (let i = 1; i < count; i++) docs.push(configMap(ns, i, dataBytes));
  return filesOf(docs);
}

/** ConfigMaps of BIG_DOCUMENT_BYTES, one per file, as many as `bytes` holds. */
function bigDocuments(ns: string, bytes: number): Record<string, string> {
  const files: Record<string, string> = { 'deploy/namespace.yaml': namespaceDoc(ns) };
  let total = namespaceDoc(ns).length;
  for (let i = 1; ; i++) {
    const doc = configMap(ns, i, BIG_DOCUMENT_BYTES);
    if (total + doc.length > bytes) break;
    files[`deploy/big-${String(i).padStart(3, '0')}.yaml`] = doc;
    total += doc.length;
  }
  return files;
}

/** The files with a kustomization.yaml naming each of them. */
function withKustomization(files: Record<string, string>): Record<string, string> {
  const resources = Object.keys(files).map((path) => `  - ${path.slice('deploy/'.length)}`);
  return { ...files, 'deploy/kustomization.yaml': `resources:\n${resources.join('\n')}\n` };
}

/** The shapes at the limits, and one just past each. */
function shapes(limits: ArtifactLimits): Shape[] {
  const n = limits.maxObjects;
  const bytes = limits.maxManifestBytes;
  const small = manyDocuments('limits-small', n, 450 * n);
  const full = manyDocuments('limits-full', n, bytes - 64 * 1024);
  const big = bigDocuments('limits-big', bytes);
  // kustomize writes the objects back out a little larger (origin annotations, its own layout).
  const kustomized = withKustomization(bigDocuments('limits-kustomize', bytes * 0.95));
  const count = (files: Record<string, string>) =>
    Object.values(files).reduce((sum, text) => sum + text.split('\n---\n').length, 0);
  return [
    {
      key: 'small',
      label: `${n.toLocaleString('en')} small documents`,
      manifests: small,
      objects: count(small),
      refused: false,
    },
    {
      key: 'full',
      label: `${n.toLocaleString('en')} documents filling maxManifestBytes`,
      manifests: full,
      objects: count(full),
      refused: false,
    },
    {
      key: 'big',
      label: `${Object.keys(big).length - 1} documents of ${formatBytes(BIG_DOCUMENT_BYTES)} filling maxManifestBytes`,
      manifests: big,
      objects: count(big),
      refused: false,
    },
    {
      key: 'kustomize',
      label: `${Object.keys(kustomized).length - 2} documents of ${formatBytes(BIG_DOCUMENT_BYTES)} built by kustomize`,
      manifests: kustomized,
      objects: count(kustomized) - 1,
      refused: false,
      kustomize: true,
    },
    {
      key: 'over-objects',
      label: `${(n + 1).toLocaleString('en')} small documents (one past maxObjects)`,
      manifests: manyDocuments('limits-over-objects', n + 1, 450 * (n + 1)),
      objects: n + 1,
      refused: true,
    },
    {
      key: 'over-bytes',
      label: 'documents of 900 KiB one file past maxManifestBytes',
      manifests: { ...big, 'deploy/zz-one-more.yaml': configMap('limits-big', 9999, BIG_DOCUMENT_BYTES) },
      objects: count(big) + 1,
      refused: true,
    },
  ];
}

/**
 * Files outside the delivery's path, so the artifact is as large as the unpack limits allow: random
 * bytes until the layer is near maxCompressedBytes, then text that compresses well until
 * maxTotalBytes.
 */
function filler(limits: ArtifactLimits, manifests: Record<string, string>): Record<string, Buffer> {
  const manifestBytes = bytesOf(manifests);
  const compressed = gzipSync(Buffer.from(Object.values(manifests).join(''))).length;
  const room = limits.maxTotalBytes - manifestBytes - 64 * 1024;
  const random = Math.max(0, Math.min(room, limits.maxCompressedBytes - compressed - 2 * MiB));
  const files: Record<string, Buffer> = {};
  const add = (prefix: string, bytes: number, make: (size: number) => Buffer) => {
    for (let i = 0; bytes > 0; i++) {
      const size = Math.min(bytes, FILLER_FILE_BYTES);
      files[`assets/${prefix}-${i}.bin`] = make(size);
      bytes -= size;
    }
  };
  add('random', random, (size) => randomBytes(size));
  add('text', room - random, (size) => Buffer.alloc(size, 'the quick brown fox jumps over the lazy dog\n'));
  return files;
}

/** The reconcile function's memory as the CDK app configures it (MB), from a synthesized template. */
export function configuredMemoryMb(): number {
  const { template } = synth();
  const resources = template.toJSON().Resources as Record<string, { Properties: { MemorySize?: number } }>;
  const memory = resources[functionId(template, 'reconcile')]!.Properties.MemorySize;
  if (typeof memory !== 'number') throw new Error('the reconcile function has no MemorySize in the template');
  return memory;
}

/**
 * A kubectl that records the peak resident set (KiB) of each of its runs in `record`, through
 * /usr/bin/time (kubectl gets only PATH and HOME from the engine, so the paths are written in).
 */
function recordingKubectl(ctx: BenchContext, record: string): string {
  if (!existsSync(TIME)) {
    throw new Error(
      `benchmark 8 measures kustomize's memory with ${TIME}: install it (Debian package "time")`,
    );
  }
  const script = join(ctx.tempDir('kubectl-rss'), 'kubectl');
  const quote = (text: string) => `'${text.replace(/'/g, `'\\''`)}'`;
  writeFileSync(
    script,
    `#!/bin/sh\nexec ${TIME} -a -o ${quote(record)} -f %M ${quote(ctx.components.kubectl)} "$@"\n`,
    { mode: 0o755 },
  );
  return script;
}

/** The largest peak resident set `recordingKubectl` recorded, in bytes (0 when kubectl did not run). */
function recordedPeak(record: string): number {
  if (!existsSync(record)) return 0;
  const kib = readFileSync(record, 'utf8')
    .split('\n')
    .filter((line) => /^\d+$/.test(line))
    .map(Number);
  return Math.max(0, ...kib) * 1024;
}

function reconcileInChild(bundle: string, delivery: string, kubectl: string): Promise<ChildReport> {
  const script = join(fileURLToPath(new URL('..', import.meta.url)), 'limits-child.mjs');
  return new Promise((resolve, reject) => {
    // SLUICE_BENCH_CHILD_ARGS: extra node options for the child (e.g. `--cpu-prof --cpu-prof-dir=/tmp/p`).
    const extra = (process.env.SLUICE_BENCH_CHILD_ARGS ?? '').split(' ').filter(Boolean);
    const child = spawn(process.execPath, ['--expose-gc', ...extra, script, bundle, delivery], {
      env: {
        ...process.env,
        SLUICE_KUBECTL: kubectl,
        POWERTOOLS_LOG_LEVEL: 'WARN',
        POWERTOOLS_METRICS_DISABLED: 'true',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0) return reject(new Error(`the limits child exited ${code}: ${stderr.slice(-2000)}`));
      try {
        resolve(JSON.parse(stdout) as ChildReport);
      } catch (error) {
        reject(new Error(`the limits child's report is not JSON: ${stdout.slice(0, 500)}`, { cause: error }));
      }
    });
  });
}

async function pushShape(
  ctx: BenchContext,
  repository: string,
  files: Record<string, string | Buffer>,
): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-bench-limits-'));
  try {
    for (const [path, content] of Object.entries(files)) {
      mkdirSync(dirname(join(dir, path)), { recursive: true });
      writeFileSync(join(dir, path), content);
    }
    const pushed = await pushArtifact(dir, `oci://${ctx.components.registry.host}/${repository}:main`, {
      credentials: ecrCredentials(new ECRClient({}), systemClock),
    });
    return await layerSize(ctx, repository, pushed.digest);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The pushed layer's size, from the manifest in the registry. */
async function layerSize(ctx: BenchContext, repository: string, digest: string): Promise<number> {
  const client = new RegistryClient({
    host: ctx.components.registry.host,
    credentials: ecrCredentials(new ECRClient({}), systemClock),
  });
  const manifest = await client.getManifest(repository, digest);
  const parsed = JSON.parse(manifest.body.toString('utf8')) as { layers: { size: number }[] };
  return parsed.layers[0]!.size;
}

async function runShape(
  ctx: BenchContext,
  bundle: string,
  shape: Shape,
  limits: ArtifactLimits,
): Promise<Measured> {
  const name = `limits-${shape.key}`;
  const repository = `bench/limits-${shape.key}`;
  const manifestBytes = bytesOf(shape.manifests);
  const files = { ...shape.manifests, ...filler(limits, shape.manifests) };
  const artifactBytes = bytesOf(files);
  const layerBytes = await pushShape(ctx, repository, files);
  const delivery = parseDelivery({
    name,
    source: { url: `oci://${ctx.components.registry.host}/${repository}`, tag: 'main', provider: 'aws' },
    cluster: { kubeconfig: ctx.components.kube.kubeconfig },
    path: 'deploy',
    prune: true,
  });
  await putDelivery(ctx.deps.db, delivery, new Date());
  const record = join(ctx.tempDir('kubectl-rss'), 'peaks');
  const kubectl = recordingKubectl(ctx, record);
  const measured = await measure(ctx.components, () => reconcileInChild(bundle, name, kubectl));
  const result = measured.result.results[0];
  if (shape.refused) {
    if (result?.outcome !== 'Failed' || result.reason !== 'BuildFailed' || measured.writes > 0)
      throw new Error(`${shape.label} was not refused: ${JSON.stringify(result)}`);
  } else if (result?.outcome !== 'Succeeded' || result.changes?.created !== shape.objects) {
    throw new Error(`${shape.label}: ${JSON.stringify(result)}`);
  }
  return {
    shape,
    manifestBytes,
    artifactBytes,
    layerBytes,
    report: measured.result,
    kustomizeRss: recordedPeak(record),
    requests: measured.requests.length,
  };
}

/** The function's peak: the node process's, plus kustomize's when it ran (both count against the function's memory). */
const peakOf = (run: Measured) => run.report.maxRss + run.kustomizeRss;

/** Benchmark 8: each shape reconciled in a child process running the bundled handler. */
export async function limitsBench(
  ctx: BenchContext,
  reconcileBundle: string,
  say: (line: string) => void = () => {},
): Promise<BenchOutcome> {
  // The bundled handler runs with the defaults: the artifacts are made to their measure.
  const limits = DEFAULT_LIMITS;
  const memoryMb = configuredMemoryMb();
  const budget = memoryMb * MiB * MEMORY_SHARE;
  const share = (bytes: number) => `${Math.round((bytes / (memoryMb * MiB)) * 100)}%`;
  const load = loadavg()[0]!;
  const runs: Measured[] = [];
  // SLUICE_BENCH_LIMITS_SHAPES: a comma-separated list of shape keys to run (default: all).
  const only = process.env.SLUICE_BENCH_LIMITS_SHAPES?.split(',');
  for (const shape of shapes(limits).filter((s) => !only || only.includes(s.key))) {
    say(`   ${shape.label}`);
    const run = await runShape(ctx, reconcileBundle, shape, limits);
    const stalls = (run.report as { stalls?: [number, number][] }).stalls;
    if (stalls) say(`   stalls (µs, monotonic): ${JSON.stringify(stalls)}`);
    say(
      `   peak RSS ${formatBytes(peakOf(run))}, longest stall ${formatMs(run.report.longestStallMs)}, ${formatMs(run.report.ms)}`,
    );
    runs.push(run);
  }
  const accepted = runs.filter((run) => !run.shape.refused);
  const targets: TargetCheck[] = accepted.flatMap((run) => [
    {
      benchmark: `8. Peak memory: ${run.shape.label}`,
      sluice: formatBytes(peakOf(run)),
      reference: `${memoryMb} MB (the reconcile function's memory)`,
      ratio: `${share(peakOf(run))} of it`,
      target: `< ${Math.round(MEMORY_SHARE * 100)}% (${formatBytes(budget)})`,
      holds: peakOf(run) < budget,
    },
    {
      benchmark: `8. Longest event-loop stall: ${run.shape.label}`,
      sluice: formatMs(run.report.longestStallMs),
      reference: '20 s (the lease renewal interval; the lease lasts 60 s)',
      ratio: `${((run.report.longestStallMs / 20_000) * 100).toFixed(1)}% of it`,
      target: `< ${formatMs(STALL_TARGET_MS)}`,
      holds: run.report.longestStallMs < STALL_TARGET_MS,
    },
  ]);
  const limitText =
    `maxObjects ${limits.maxObjects.toLocaleString('en')}, maxManifestBytes ${formatBytes(limits.maxManifestBytes)}, ` +
    `maxTotalBytes ${formatBytes(limits.maxTotalBytes)}, maxCompressedBytes ${formatBytes(limits.maxCompressedBytes)}`;
  return {
    targets,
    sections: [
      {
        title: TITLE,
        method:
          `The largest artifacts the default limits (functions/core/limits.ts: ${limitText}) accept, each pushed and ` +
          "reconciled from scratch by the bundled reconcile handler (benchmark 5's bundle: what Lambda runs) in a child " +
          '`node` process, as in benchmark 6: many small documents at maxObjects; as many documents filling ' +
          'maxManifestBytes; fewer, big documents (900 KiB ConfigMaps) filling maxManifestBytes; and big documents ' +
          'built by kustomize, its output near maxManifestBytes (the node process and kustomize each have their peak ' +
          "counted, added up as if they came at once, since both use the function's memory). Each artifact also " +
          "holds files outside the delivery's path up to the unpack limits (random bytes until the layer is near " +
          'maxCompressedBytes, then text up to maxTotalBytes: every file stays in memory for the run). Then one just ' +
          'past each build limit, which must be refused before anything is parsed. Peak: the high-water mark of the ' +
          "child's own resident set (`VmHWM` in /proc/self/status; `process.resourceUsage().maxRSS` is not used, as " +
          "Linux carries the parent's resident set over `exec` into it); stall: the longest a timer waited " +
          'past its time (`perf_hooks.monitorEventLoopDelay`, 10 ms resolution), which is what holds up the lease ' +
          `renewal. Memory budget: ${Math.round(MEMORY_SHARE * 100)}% of the reconcile function's ${memoryMb} MB, read ` +
          'from the synthesized CDK app.',
        table: {
          header: [
            'artifact',
            'objects',
            'manifests',
            'artifact (layer)',
            'outcome',
            'peak RSS',
            'kustomize',
            'of the memory',
            'peak heap used',
            'longest stall',
            'reconcile',
          ],
          rows: runs.map((run) => [
            run.shape.label,
            run.shape.objects.toLocaleString('en'),
            formatBytes(run.manifestBytes),
            `${formatBytes(run.artifactBytes)} (${formatBytes(run.layerBytes)})`,
            run.shape.refused
              ? `refused: ${run.report.results[0]!.reason}`
              : `${run.report.results[0]!.changes?.created} created`,
            formatBytes(run.report.maxRss),
            run.kustomizeRss ? formatBytes(run.kustomizeRss) : '—',
            share(peakOf(run)),
            formatBytes(run.report.peakHeapUsed),
            formatMs(run.report.longestStallMs),
            formatMs(run.report.ms),
          ]),
        },
        notes: [
          ...runs
            .filter((run) => run.shape.refused)
            .map(
              (run) =>
                `Refused: \`${run.report.results[0]!.message.replace(/sha256:[0-9a-f]{64}/g, 'sha256:…')}\``,
            ),
          `RSS of the child after importing the handler, before the reconcile: ${formatBytes(Math.max(...runs.map((r) => r.report.baselineRss)))} at most.`,
          `Measured on ${new Date().toISOString().replace(/\.\d+Z$/, 'Z')}, load average ${load.toFixed(1)} at the start, ${loadavg()[0]!.toFixed(1)} at the end.`,
        ],
      },
    ],
  };
}

/** Replaces this benchmark's target rows and section in docs/benchmarks.md (added when missing). */
export function spliceOutcome(markdown: string, outcome: BenchOutcome): string {
  const lines = markdown.split('\n');
  const ours = (line: string) => /^\|\s*8\. /.test(line);
  const targetsAt = lines.findIndex((line) => line.startsWith('## Targets'));
  if (targetsAt === -1) throw new Error('docs/benchmarks.md has no "## Targets" section');
  let end = targetsAt + 1;
  while (end < lines.length && !lines[end]!.startsWith('|')) end++;
  const tableStart = end;
  while (end < lines.length && lines[end]!.startsWith('|')) end++;
  const rows = table(['', '', '', '', '', ''], outcome.targets.map(targetRow)).split('\n').slice(2);
  const kept = lines.slice(tableStart, end).filter((line) => !ours(line));
  const targetRows = [...kept, ...rows];
  const body = targetRows.slice(2);
  const held = body.filter((line) => /\|\s*yes\s*\|\s*$/.test(line)).length;
  lines.splice(tableStart, end - tableStart, ...targetRows);
  lines[targetsAt] = `## Targets (${held} of ${body.length} hold)`;

  const text = lines.join('\n');
  const section = outcome.sections.flatMap(renderSection).join('\n');
  const start = text.indexOf(`## ${TITLE.slice(0, 3)}`);
  if (start !== -1) {
    const next = text.indexOf('\n## ', start + 1);
    return text.slice(0, start) + section + (next === -1 ? '\n' : text.slice(next + 1));
  }
  const before = text.indexOf('\n## What bounds us');
  const at = before === -1 ? text.length : before + 1;
  return `${text.slice(0, at)}${section}\n${text.slice(at)}`;
}

async function runAlone(): Promise<void> {
  const say = (line: string) => process.stderr.write(`[bench] ${line}\n`);
  const root = dirname(dirname(dirname(fileURLToPath(import.meta.url))));
  const output = process.env.SLUICE_BENCH_OUTPUT ?? join(root, 'docs', 'benchmarks.md');
  say('starting the local components');
  const bed = await startBenchBed();
  try {
    const ctx = await benchContext(bed.components, bed.dir);
    const machine = await describeMachine(bed.components);
    say(`${machine.cpu}, ${machine.cores} cores; sluice ${machine.commit}`);
    say('bundling the handlers');
    const bundles = await bundlesBench(ctx.tempDir('bundles'));
    say('8. the largest accepted artifacts');
    const outcome = await limitsBench(ctx, bundles.reconcileBundle, say);
    const spliced = withContents(spliceOutcome(readFileSync(output, 'utf8'), outcome));
    writeFileSync(output, await format(spliced, { ...(await resolveConfig(output)), filepath: output }));
    say(`wrote ${output}`);
  } finally {
    say('stopping the local components');
    await bed.stop();
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  runAlone().catch((error: unknown) => {
    process.stderr.write(
      `[bench] failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    process.exitCode = 1;
  });
}
