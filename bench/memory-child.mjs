// Runs one reconcile through a bundled reconcile handler, as Lambda would, and reports its time and
// memory as JSON on stdout: node bench/memory-child.mjs <bundle.mjs> <delivery>
import { pathToFileURL } from 'node:url';

const [bundle, delivery] = process.argv.slice(2);
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
const started = performance.now();
const results = await handler({ delivery }, { awsRequestId: 'bench-memory' });
const ms = performance.now() - started;
clearInterval(sampler);
process.stdout.write(
  JSON.stringify({
    ms,
    results,
    baselineRss,
    sampledPeakRss,
    peakHeapUsed,
    // The kernel's peak resident set of this process, sampled or not (KiB on Linux).
    maxRss: process.resourceUsage().maxRSS * 1024,
  }),
);
