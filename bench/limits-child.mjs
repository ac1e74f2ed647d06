// Runs one reconcile through a bundled reconcile handler, as Lambda would, and reports its peak
// memory and its longest event-loop stall as JSON on stdout:
// node bench/limits-child.mjs <bundle.mjs> <delivery>
import { readFileSync } from 'node:fs';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';

const [bundle, delivery] = process.argv.slice(2);

/** This process's own peak resident set (VmHWM of its address space), in bytes. */
function peakRss() {
  const kib = /^VmHWM:\s+(\d+) kB$/m.exec(readFileSync('/proc/self/status', 'utf8'))?.[1];
  if (kib === undefined) throw new Error('no VmHWM in /proc/self/status (Linux only)');
  return Number(kib) * 1024;
}
const { handler } = await import(pathToFileURL(bundle).href);
globalThis.gc?.();
const baselineRss = process.memoryUsage().rss;
let sampledPeakRss = baselineRss;
let peakHeapUsed = 0;
const sampler = setInterval(() => {
  const usage = process.memoryUsage();
  sampledPeakRss = Math.max(sampledPeakRss, usage.rss);
  peakHeapUsed = Math.max(peakHeapUsed, usage.heapUsed);
}, 10);
// The longest time a timer (such as the lease renewal) waited past its due time.
const delay = monitorEventLoopDelay({ resolution: 10 });
delay.enable();
// SLUICE_BENCH_STALLS=<ms>: also list each stall longer than that, as [start, end] in microseconds of
// the monotonic clock, which is the clock of a `--cpu-prof` profile: to find what ran in it.
const stallMs = Number(process.env.SLUICE_BENCH_STALLS ?? 0);
const stalls = [];
let lastTick = process.hrtime.bigint();
const watcher =
  stallMs > 0 &&
  setInterval(() => {
    const now = process.hrtime.bigint();
    if (Number(now - lastTick) / 1e6 > stallMs) stalls.push([Number(lastTick / 1000n), Number(now / 1000n)]);
    lastTick = now;
  }, 5);
const started = performance.now();
const results = await handler({ delivery }, { awsRequestId: `bench-limits-${Date.now()}` });
const ms = performance.now() - started;
delay.disable();
clearInterval(sampler);
if (watcher) clearInterval(watcher);
process.stdout.write(
  JSON.stringify({
    ms,
    results,
    baselineRss,
    sampledPeakRss,
    peakHeapUsed,
    maxRss: peakRss(),
    // Not used: getrusage carries the parent's resident set from before exec over into the child's.
    kernelMaxRss: process.resourceUsage().maxRSS * 1024,
    longestStallMs: delay.max / 1e6,
    ...(watcher && { stalls }),
  }),
);
