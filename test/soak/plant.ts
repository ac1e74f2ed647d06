// The planted-fault harness of the invariant soak: `npm run soak:plant [-- --fault status-leak
// --minutes 10 --seed 1]`. For each fault (test/soak/faults/<fault>.patch), copies the committed
// repository (git archive HEAD) to a temporary folder, applies the patch there (git apply), and
// runs the invariant soak in the copy (`test/soak/run.ts --mix invariants --stop-on <the
// invariant expected>`, every generator) for at most `--minutes`; the fault counts as caught when
// the soak reports a violation of the invariant expected for it (in its summary, or from the
// watchdog or memory thread that ended it; then this stops the components it left running). Prints, per fault, the seed that caught it and how long it took.
// Exits 1 if any fault was not caught.
//
// Why a patched copy, not a hook: product code carries no test-only switch (an environment
// variable or hook would be one more way to turn a guard off), and vitest's module mocks would
// reach only this process, not the `sluice diff`/`status` children the soak runs. A patch plants
// the fault in the code as shipped, everywhere it runs, as an outside reviewer would.
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { stopComponents } from '../../dev/components.ts';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const FAULTS_DIR = join(ROOT, 'test', 'soak', 'faults');
/** The hostile kinds a fault needs the generator to draw (a quarter of the artifacts), when not any. */
const FOCUS: Record<string, string> = { 'remote-fetch': 'remote', 'memory-blowup': 'laughs' };
/** Each fault, and the invariant that must catch it. */
const EXPECTED: Record<string, string> = {
  'status-leak': 'no-leak',
  'unowned-delete': 'owns-deletes',
  'remote-fetch': 'no-outbound',
  'memory-blowup': 'bounded-memory',
  stall: 'bounded-time',
};

const { values } = parseArgs({
  options: {
    fault: { type: 'string', default: 'all' },
    minutes: { type: 'string', default: '10' },
    seed: { type: 'string', default: '1' },
  },
});
const available = readdirSync(FAULTS_DIR)
  .filter((f) => f.endsWith('.patch'))
  .map((f) => f.replace(/\.patch$/, ''));
const faults = values.fault === 'all' ? available : values.fault.split(',');
for (const fault of faults)
  if (!available.includes(fault) || !EXPECTED[fault])
    throw new Error(`--fault: unknown fault '${fault}'; use all or a comma list of ${available.join(', ')}`);

interface Outcome {
  fault: string;
  caught: boolean;
  seed?: string;
  invariants?: string;
  seconds: number;
}
const outcomes: Outcome[] = [];
for (const fault of faults) {
  const copy = mkdtempSync(join(tmpdir(), `sluice-plant-${fault}-`));
  const started = Date.now();
  try {
    execFileSync('sh', ['-c', `git -C "${ROOT}" archive HEAD | tar -x -C "${copy}"`]);
    symlinkSync(join(ROOT, 'node_modules'), join(copy, 'node_modules'));
    execFileSync('git', ['apply', join(FAULTS_DIR, `${fault}.patch`)], { cwd: copy });
    process.stdout.write(
      `\n== ${fault}: planted in ${copy}; soaking (expecting ${EXPECTED[fault]}${FOCUS[fault] ? `; hostile kinds ${FOCUS[fault]}` : ''})\n`,
    );
    const output = await new Promise<string>((resolve) => {
      let text = '';
      const child = spawn(
        process.execPath,
        [
          join(ROOT, 'node_modules', 'tsx', 'dist', 'cli.mjs'),
          'test/soak/run.ts',
          '--mix',
          'invariants',
          '--minutes',
          values.minutes,
          '--seed',
          values.seed,
          '--stop-on',
          EXPECTED[fault]!,
          '--shrink-seconds',
          '0',
          ...(FOCUS[fault] ? ['--hostile', FOCUS[fault]] : []),
        ],
        { cwd: copy, stdio: ['ignore', 'pipe', 'pipe'] },
      );
      const take = (chunk: Buffer) => {
        text += chunk.toString();
        process.stdout.write(chunk);
      };
      child.stdout.on('data', take);
      child.stderr.on('data', take);
      child.on('close', () => resolve(text));
    });
    // A soak ended by one of its threads could not stop its components (detached daemons).
    const soakDir = /starting the local components in (\S+)/.exec(output)?.[1];
    if (soakDir) {
      await stopComponents(soakDir);
      rmSync(soakDir, { recursive: true, force: true });
    }
    const hit = [...output.matchAll(/seed (\d+): invariants: VIOLATED \(([^)]*)\)/g)].find((m) =>
      m[2]!.split(', ').includes(EXPECTED[fault]!),
    );
    // A thread's report before it ended the process (the watchdog's stall, the sampler's blow-up).
    const fatal = /\[(bounded-time|bounded-memory)\] VIOLATED: seed (\d+)/.exec(output);
    const invariants = hit?.[2] ?? fatal?.[1] ?? '';
    outcomes.push({
      fault,
      caught: invariants.split(', ').includes(EXPECTED[fault]!),
      ...((hit ?? fatal) && { seed: hit ? hit[1] : fatal![2] }),
      invariants,
      seconds: Math.round((Date.now() - started) / 1000),
    });
  } finally {
    rmSync(copy, { recursive: true, force: true });
  }
}

process.stdout.write('\nplanted faults\n');
for (const o of outcomes)
  process.stdout.write(
    `  ${o.fault.padEnd(16)} ${o.caught ? 'CAUGHT' : 'MISSED'} (expected ${EXPECTED[o.fault]}; violated: ${o.invariants || 'none'})${o.seed ? `, seed ${o.seed}` : ''}, ${o.seconds} s\n`,
  );
process.exitCode = outcomes.every((o) => o.caught) ? 0 : 1;
