import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/support/global-setup.ts'],
    // Integration tests share one API server, registry and table; files run in parallel on
    // separate namespaces/repositories/delivery names, so two workers match the 2-core machine.
    pool: 'forks',
    maxWorkers: 2,
    // A bound on a test that hangs, not a speed target: tests wait on readiness (a process exiting,
    // an object's condition), which on a busy 2-core machine can take minutes (CLI tests spawn
    // several processes each). Speed is measured by the benchmarks.
    testTimeout: 300_000,
    // Handlers run in-process emit their metrics (Embedded Metric Format) to stdout; tests of
    // metrics use their own recorder, so the suite's output stays readable.
    env: { POWERTOOLS_LOG_LEVEL: 'WARN', POWERTOOLS_METRICS_DISABLED: 'true' },
    hookTimeout: 120_000,
    reporters: ['default', './test/support/summary-reporter.ts'],
  },
});
