// `npm run soak [-- --runs 120 --seed 42]`: many random crash scenarios (test/support/kill-scenario.ts)
// on its own local components. Prints one line per run and a summary; exits 1 on any orphan,
// wrongful deletion or run that did not converge.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { kubeConfigFor } from '../../functions/core/kube/connection.ts';
import { componentsEnv, startComponents, stopComponents } from '../support/components.ts';
import { startKubeFaultProxy } from '../support/kube-fault-proxy.ts';
import { runKillScenario, scenarioDeps, type ScenarioReport } from '../support/kill-scenario.ts';

const { values } = parseArgs({
  options: { runs: { type: 'string', default: '120' }, seed: { type: 'string' } },
});
const runs = Number(values.runs);
const baseSeed = values.seed !== undefined ? Number(values.seed) : Date.now() % 1_000_000;
if (!Number.isInteger(runs) || runs < 1)
  throw new Error(`--runs must be a positive integer, not ${values.runs}`);

const dir = mkdtempSync(join(tmpdir(), 'sluice-soak-'));
const started = Date.now();
process.stdout.write(
  `sluice soak: ${runs} runs from seed ${baseSeed}; starting the local components in ${dir}\n`,
);
const bed = await startComponents(dir);
Object.assign(process.env, componentsEnv(bed));
const proxy = await startKubeFaultProxy(bed);
const reports: ScenarioReport[] = [];
const crashed: { seed: number; error: string }[] = [];
try {
  const env = {
    bed,
    proxy,
    kubeConfig: kubeConfigFor({ server: bed.kube.server, caData: bed.kube.caData, token: bed.kube.token }),
    deps: scenarioDeps(bed),
  };
  for (let i = 0; i < runs; i++) {
    const seed = baseSeed + i;
    try {
      const report = await runKillScenario(env, seed);
      reports.push(report);
      const bad = report.orphansAtKill.length + report.orphans.length + report.wrongfulDeletions.length > 0;
      const oneLine = (text: string, max: number) => text.replace(/\s+/g, ' ').slice(0, max);
      process.stdout.write(
        `${String(i + 1).padStart(4)} seed ${seed}: ${report.fault}; ${report.writesBeforeKill} writes; ` +
          `faulty run ${oneLine(report.faultyRun, 90)}; recovery ${oneLine(report.recovery, 60)}` +
          `${bad || !report.converged ? `  <-- ${JSON.stringify(report)}` : ''}\n`,
      );
    } catch (error) {
      crashed.push({ seed, error: String(error) });
      process.stdout.write(`${String(i + 1).padStart(4)} seed ${seed}: scenario error: ${String(error)}\n`);
    }
  }
} finally {
  await proxy.close();
  await stopComponents(dir);
  rmSync(dir, { recursive: true, force: true });
}

const killed = reports.filter((r) => r.killed);
const points = new Map<number, number>();
for (const r of killed) points.set(r.writesBeforeKill, (points.get(r.writesBeforeKill) ?? 0) + 1);
const faultyEndings = new Map<string, number>();
for (const r of reports) {
  const ending = r.faultyRun.startsWith('died') ? 'died' : r.faultyRun.split(':')[0]!;
  faultyEndings.set(ending, (faultyEndings.get(ending) ?? 0) + 1);
}
const sum = (pick: (r: ScenarioReport) => number) => reports.reduce((n, r) => n + pick(r), 0);
const orphansAtKill = sum((r) => r.orphansAtKill.length);
const orphans = sum((r) => r.orphans.length);
const wrongful = sum((r) => r.wrongfulDeletions.length);
const notConverged = reports.filter((r) => !r.converged).length;
const histogram = [...points.entries()]
  .sort(([a], [b]) => a - b)
  .map(([at, n]) => `${at}:${n}`)
  .join(' ');

process.stdout.write(
  [
    '',
    'sluice soak summary',
    `  runs:                 ${reports.length} of ${runs} (${crashed.length} scenario errors), seeds ${baseSeed}..${baseSeed + runs - 1}`,
    `  killed mid-run:       ${killed.length}`,
    `  under random faults:  ${reports.filter((r) => r.fault.startsWith('fault rate')).length} (5xx, hang-ups, timeouts, lost answers)`,
    `  kill points (writes before the kill: runs): ${histogram || 'none'}`,
    `  faulty runs ended:    ${[...faultyEndings.entries()].map(([k, n]) => `${k} ${n}`).join(', ')}`,
    `  orphans at the kill:  ${orphansAtKill}`,
    `  orphans after:        ${orphans}`,
    `  wrongful deletions:   ${wrongful}`,
    `  not converged:        ${notConverged}`,
    `  time:                 ${((Date.now() - started) / 1000).toFixed(0)}s`,
    '',
  ].join('\n'),
);
process.exitCode = crashed.length + orphansAtKill + orphans + wrongful + notConverged > 0 ? 1 : 0;
