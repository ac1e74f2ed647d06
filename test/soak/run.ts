// `npm run soak [-- --runs 120 --seed 42 --mix all]`: many random scenarios on its own local
// components: crash scenarios (test/support/kill-scenario.ts) and the attacks of issue 13
// (test/support/attack-scenarios.ts). `--mix all` (default): each run's seed picks its scenario
// type (seed modulo the number of types, so a seed reruns as the same scenario); `--mix kill`,
// `--mix attacks` or a comma list of types (kill, crd-removal, …) narrows it.
// Prints one line per run and a summary; exits 1 on any orphan, wrongful deletion, run that did
// not converge, unexpected outcome or scenario error.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { kubeConfigFor } from '../../functions/core/kube/connection.ts';
import { componentsEnv, startComponents, stopComponents } from '../../dev/components.ts';
import {
  ATTACK_KINDS,
  runAttackScenario,
  type AttackKind,
  type AttackReport,
} from '../support/attack-scenarios.ts';
import { startKubeFaultProxy } from '../support/kube-fault-proxy.ts';
import { runKillScenario, scenarioDeps, type ScenarioReport } from '../support/kill-scenario.ts';
import { startRegistryFaultProxy } from '../support/registry-fault-proxy.ts';

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '120' },
    seed: { type: 'string' },
    mix: { type: 'string', default: 'all' },
  },
});
type ScenarioType = 'kill' | AttackKind;
const ALL_TYPES: readonly ScenarioType[] = ['kill', ...ATTACK_KINDS];
const mix: readonly ScenarioType[] =
  values.mix === 'all'
    ? ALL_TYPES
    : values.mix === 'attacks'
      ? ATTACK_KINDS
      : values.mix.split(',').map((type) => {
          if (!ALL_TYPES.includes(type as ScenarioType))
            throw new Error(
              `--mix: unknown scenario type '${type}'; use all, attacks, or a comma list of ${ALL_TYPES.join(', ')}`,
            );
          return type as ScenarioType;
        });
/** The scenario type of a seed: consecutive seeds take the types of the mix in turn, evenly. */
const typeOf = (seed: number): ScenarioType => mix[seed % mix.length]!;
const runs = Number(values.runs);
const baseSeed = values.seed !== undefined ? Number(values.seed) : Date.now() % 1_000_000;
if (!Number.isInteger(runs) || runs < 1)
  throw new Error(`--runs must be a positive integer, not ${values.runs}`);

const dir = mkdtempSync(join(tmpdir(), 'sluice-soak-'));
const started = Date.now();
process.stdout.write(
  `sluice soak: ${runs} runs (${mix.join(', ')}) from seed ${baseSeed}; starting the local components in ${dir}\n`,
);
const bed = await startComponents(dir);
Object.assign(process.env, componentsEnv(bed));
const proxy = await startKubeFaultProxy(bed);
const registryProxy = await startRegistryFaultProxy(bed);
const reports: ScenarioReport[] = [];
const attacks: AttackReport[] = [];
const crashed: { seed: number; type: ScenarioType; error: string }[] = [];
const byType = new Map<ScenarioType, number>();
try {
  const env = {
    bed,
    proxy,
    kubeConfig: kubeConfigFor({ server: bed.kube.server, caData: bed.kube.caData, token: bed.kube.token }),
    deps: scenarioDeps(bed),
    registryProxy,
  };
  const oneLine = (text: string, max: number) => text.replace(/\s+/g, ' ').slice(0, max);
  for (let i = 0; i < runs; i++) {
    const seed = baseSeed + i;
    const type = typeOf(seed);
    byType.set(type, (byType.get(type) ?? 0) + 1);
    const runStarted = Date.now();
    const took = () => `${((Date.now() - runStarted) / 1000).toFixed(1)}s`;
    try {
      if (type !== 'kill') {
        const report = await runAttackScenario(env, type, seed);
        attacks.push(report);
        const bad =
          report.orphans.length + report.wrongfulDeletions.length + report.unexpected.length > 0 ||
          !report.converged;
        process.stdout.write(
          `${String(i + 1).padStart(4)} seed ${seed}: ${type}: ${report.label}; ${oneLine(report.outcome, 160)}; ${took()}` +
            `${bad ? `  <-- ${JSON.stringify(report)}` : ''}\n`,
        );
        continue;
      }
      const report = await runKillScenario(env, seed);
      reports.push(report);
      const bad = report.orphansAtKill.length + report.orphans.length + report.wrongfulDeletions.length > 0;
      process.stdout.write(
        `${String(i + 1).padStart(4)} seed ${seed}: kill: ${report.fault}; ${report.writesBeforeKill} writes; ` +
          `faulty run ${oneLine(report.faultyRun, 90)}; recovery ${oneLine(report.recovery, 60)}; ${took()}` +
          `${bad || !report.converged ? `  <-- ${JSON.stringify(report)}` : ''}\n`,
      );
    } catch (error) {
      crashed.push({ seed, type, error: String(error) });
      process.stdout.write(
        `${String(i + 1).padStart(4)} seed ${seed}: ${type}: scenario error: ${String(error)}  <--\n`,
      );
    }
  }
} finally {
  await proxy.close();
  await registryProxy.close();
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
const sumAttacks = (pick: (r: AttackReport) => number) => attacks.reduce((n, r) => n + pick(r), 0);
const orphansAtKill = sum((r) => r.orphansAtKill.length);
const orphans = sum((r) => r.orphans.length) + sumAttacks((r) => r.orphans.length);
const wrongful = sum((r) => r.wrongfulDeletions.length) + sumAttacks((r) => r.wrongfulDeletions.length);
const notConverged = reports.filter((r) => !r.converged).length + attacks.filter((r) => !r.converged).length;
const unexpected = sumAttacks((r) => r.unexpected.length);
const perType = ALL_TYPES.filter((type) => byType.has(type))
  .map((type) => `${type} ${byType.get(type)}`)
  .join(', ');
const histogram = [...points.entries()]
  .sort(([a], [b]) => a - b)
  .map(([at, n]) => `${at}:${n}`)
  .join(' ');

process.stdout.write(
  [
    '',
    'sluice soak summary',
    `  runs:                 ${reports.length + attacks.length} of ${runs} (${crashed.length} scenario errors), seeds ${baseSeed}..${baseSeed + runs - 1}`,
    `  runs per type:        ${perType}`,
    `  killed mid-run:       ${killed.length}`,
    `  under random faults:  ${reports.filter((r) => r.fault.startsWith('fault rate')).length} (5xx, hang-ups, timeouts, lost answers)`,
    `  kill points (writes before the kill: runs): ${histogram || 'none'}`,
    `  faulty runs ended:    ${[...faultyEndings.entries()].map(([k, n]) => `${k} ${n}`).join(', ') || 'none'}`,
    `  orphans at the kill:  ${orphansAtKill}`,
    `  orphans after:        ${orphans}`,
    `  wrongful deletions:   ${wrongful}`,
    `  not converged:        ${notConverged}`,
    `  unexpected outcomes:  ${unexpected}`,
    `  time:                 ${((Date.now() - started) / 1000).toFixed(0)}s`,
    '',
  ].join('\n'),
);
process.exitCode =
  crashed.length + orphansAtKill + orphans + wrongful + notConverged + unexpected > 0 ? 1 : 0;
