// The kustomization check against its consumer: random kustomizations (keys in any case, every
// field that names a file, references to local files, parent dirs, outside the artifact and loopback
// URLs, sub-kustomizations, plugin configs) are checked by inspectKustomizations and built by the
// real kustomize as sluice runs it (runKustomize: kubectl's kustomize, sluice's child environment).
// What kustomize reads is recorded with strace (kubectl is a static Go binary: an LD_PRELOAD shim
// sees nothing, while ptrace sees every open(2) it makes); what it fetches, by a loopback trap.
import fc from 'fast-check';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, posix, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { straceBinary } from '../../../dev/provision.ts';
import { inspectKustomizations } from '../../../functions/core/manifests/kustomization.ts';
import { runKustomize } from '../../../functions/core/manifests/kustomize.ts';
import { configMap, kubectl } from './fixtures.ts';

const SEED = 3901;
const RUNS = 80;

const root = mkdtempSync(join(tmpdir(), 'sluice-differential-'));
const fetched: string[] = [];
const trap = createServer((request, response) => {
  fetched.push(request.url ?? '');
  const name = (request.url ?? '').replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '');
  response.end(request.url?.endsWith('.env') ? 'K=V\n' : configMap(`url-${name}`, { k: 'v' }));
});
let port = 0;
let tracedKubectl = '';
const traceLog = join(root, 'trace.log');

beforeAll(async () => {
  await new Promise<void>((listening) => trap.listen(0, '127.0.0.1', listening));
  port = (trap.address() as AddressInfo).port;
  tracedKubectl = join(root, 'kubectl-traced');
  // The child's PATH is empty: every path here is absolute.
  writeFileSync(
    tracedKubectl,
    `#!/bin/sh\nexec ${straceBinary()} -f -qq -e trace=open,openat -o ${traceLog} ${kubectl()} "$@"\n`,
  );
  chmodSync(tracedKubectl, 0o755);
});
afterAll(async () => {
  await new Promise<void>((closed) => trap.close(() => closed()));
  rmSync(root, { recursive: true, force: true });
});

/** The kustomization dirs of a case: `app` is built; `outside` is beside the artifact. */
const DIRS = ['app', 'app/sub', 'base', 'comp', '../outside'] as const;
type Dir = (typeof DIRS)[number];

/** Where a reference points, relative to the kustomization that names it. */
type Target = 'local' | 'parent' | 'outside' | 'absolute' | 'url';
type FileKind = 'cm' | 'base' | 'crd' | 'patch' | 'json' | 'env' | 'txt' | 'plugin' | 'replacement';
const FILE_OF: Record<FileKind, string> = {
  cm: 'cm.yaml',
  base: 'b.yaml',
  crd: 'c.yaml',
  replacement: 'r.yaml',
  patch: 'p.yaml',
  json: 'j.yaml',
  env: 'v.env',
  txt: 'f.txt',
  plugin: 't.yaml',
};

/** Each field that names files or dirs, with the file kind it names. */
const FIELDS = {
  resources: 'cm',
  bases: 'base',
  components: 'dir',
  crds: 'crd',
  patchesStrategicMerge: 'patch',
  patches: 'patch',
  patchesJson6902: 'json',
  configMapGenerator: 'txt',
  secretGenerator: 'env',
  openapi: 'txt',
  transformers: 'plugin',
  replacements: 'replacement',
  namePrefix: 'none',
} as const;
type Field = keyof typeof FIELDS;

interface Entry {
  readonly field: Field;
  readonly casing: number;
  readonly target: Target;
  readonly nestedCasing: number;
  readonly directory: boolean;
}

const entry: fc.Arbitrary<Entry> = fc.record({
  field: fc.constantFrom(...(Object.keys(FIELDS) as Field[])),
  casing: fc.nat(5),
  target: fc.oneof(
    { arbitrary: fc.constant<Target>('local'), weight: 8 },
    { arbitrary: fc.constantFrom<Target>('parent', 'outside', 'absolute', 'url'), weight: 3 },
  ),
  nestedCasing: fc.nat(5),
  directory: fc.boolean(),
});

interface Case {
  readonly kustomizations: Record<Dir, readonly Entry[]>;
  readonly unknownKey: boolean;
}

const caseArbitrary: fc.Arbitrary<Case> = fc.record({
  kustomizations: fc.record({
    app: fc.array(entry, { minLength: 1, maxLength: 5 }),
    'app/sub': fc.array(entry, { maxLength: 3 }),
    base: fc.array(entry, { maxLength: 3 }),
    comp: fc.array(entry, { maxLength: 2 }),
    '../outside': fc.array(entry, { maxLength: 2 }),
  }),
  unknownKey: fc.nat(9).map((n) => n === 0),
});

/** A key as written: as is, Capitalized, UPPER, lower, alternating, or with `ſ`/`K` for s/k. */
function cased(key: string, casing: number): string {
  switch (casing) {
    case 1:
      return key[0]!.toUpperCase() + key.slice(1);
    case 2:
      return key.toUpperCase();
    case 3:
      return key.toLowerCase();
    case 4:
      return [...key].map((c, i) => (i % 2 ? c.toUpperCase() : c.toLowerCase())).join('');
    case 5:
      return key.replace(/s/, '\u017f').replace(/k/, '\u212a');
    default:
      return key;
  }
}

let caseNumber = 0;

/**
 * The value of a reference from `dir` to `path` (relative to the artifact root) when `target` is
 * local or parent; to the same name beside the artifact, at an absolute path or at a trap URL else.
 */
function reference(dir: Dir, target: Target, path: string, id: string): string {
  const name = posix.basename(path);
  if (target === 'url') return `http://127.0.0.1:${port}/${id}/${dir.replace(/\W/g, '')}/${name}`;
  if (target === 'absolute') return join(root, id, 'outside', name);
  const to = target === 'outside' ? `../outside/${name}` : path;
  return posix.relative(`/art/${dir}`, `/art/${to}`) || '.';
}

/** Where a reference of `field` from `dir` points in the artifact (local or parent). */
function targetPath(dir: Dir, field: Field, target: Target, directory: boolean): string {
  const at = target === 'parent' ? (dir === 'base' ? 'app' : 'base') : dir;
  if (field === 'components') return 'comp';
  if (directory && (field === 'resources' || field === 'bases')) return dir === 'app' ? 'app/sub' : at;
  const kind = FIELDS[field];
  return kind === 'none' ? at : posix.join(at, FILE_OF[kind]);
}

/** A kustomization for `dir` from its entries, as YAML text. */
function kustomizationText(dir: Dir, entries: readonly Entry[], id: string, unknownKey: boolean): string {
  const lines: string[] = [];
  if (dir === 'comp') lines.push('apiVersion: kustomize.config.k8s.io/v1alpha1', 'kind: Component');
  const used = new Set<string>();
  for (const { field, casing, target, nestedCasing, directory } of entries) {
    const key = cased(field, casing);
    if (used.has(key)) continue; // YAML refuses a key twice; keys differing in case are kept
    used.add(key);
    const value = reference(dir, target, targetPath(dir, field, target, directory), id);
    const n = cased('path', nestedCasing);
    const q = JSON.stringify(value);
    switch (field) {
      case 'patches':
        lines.push(`${key}:`, `  - ${n}: ${q}`, `    ${cased('target', nestedCasing)}: {kind: ConfigMap}`);
        break;
      case 'patchesJson6902':
        lines.push(`${key}:`, `  - ${n}: ${q}`, '    target: {version: v1, kind: ConfigMap, name: cm}');
        break;
      case 'replacements':
        lines.push(`${key}:`, `  - ${n}: ${q}`);
        break;
      case 'configMapGenerator':
        lines.push(
          `${key}:`,
          `  - name: g${caseNumber}`,
          `    ${cased('files', nestedCasing)}: [${JSON.stringify(`k=${value}`)}]`,
        );
        break;
      case 'secretGenerator':
        lines.push(`${key}:`, `  - name: s${caseNumber}`, `    ${cased('envs', nestedCasing)}: [${q}]`);
        break;
      case 'openapi':
        lines.push(`${key}:`, `  ${nestedCasing === 5 ? 'Path' : 'path'}: ${q}`);
        break;
      case 'namePrefix':
        lines.push(`${key}: ${dir.replace(/\W/g, '')}-`);
        break;
      default:
        lines.push(`${key}: [${q}]`);
    }
  }
  if (unknownKey && dir === 'app') lines.push('resourcez: [cm.yaml]');
  return `${lines.join('\n')}\n`;
}

/** Files of each kustomization dir, so that local references resolve. */
function dirFiles(dir: Dir, id: string, entries: readonly Entry[]): Record<string, string> {
  const name = `${dir.replace(/\W/g, '')}-cm`;
  const plugin = (entries.find((e) => e.field === 'transformers') ?? entries[0])!;
  return {
    'cm.yaml': configMap(name, { k: 'v' }),
    'b.yaml': configMap(`${name}-b`, { k: 'v' }),
    'c.yaml': configMap(`${name}-c`, { k: 'v' }),
    'r.yaml': `- source: {kind: ConfigMap, name: ${name}, fieldPath: data.k}\n  targets: [{select: {kind: ConfigMap, name: ${name}}, fieldPaths: [data.r], options: {create: true}}]\n`,
    'p.yaml': configMap('any', { patched: 'yes' }),
    'j.yaml': '- op: add\n  path: /data/j\n  value: x\n',
    'v.env': 'K=V\n',
    'f.txt': 'text\n',
    't.yaml': [
      'apiVersion: builtin',
      'kind: PatchTransformer',
      'metadata: {name: t}',
      `${cased('path', plugin.nestedCasing)}: ${JSON.stringify(reference(dir, plugin.target, posix.join(dir, 'p.yaml'), id))}`,
      'target: {kind: ConfigMap}',
      '',
    ].join('\n'),
  };
}

interface Outcome {
  readonly admitted?: readonly string[];
  readonly refusal?: string;
  readonly reads: string[];
  readonly outsideReads: string[];
  readonly fetches: string[];
  readonly built: boolean;
}

async function runCase(testCase: Case): Promise<Outcome> {
  const id = `case-${++caseNumber}`;
  const base = join(root, id);
  const artifact = new Map<string, Buffer>();
  for (const dir of DIRS) {
    const entries = testCase.kustomizations[dir];
    if (entries.length === 0 && dir !== 'app') continue;
    const files = {
      ...dirFiles(dir, id, entries),
      'kustomization.yaml': kustomizationText(dir, entries, id, testCase.unknownKey),
    };
    for (const [name, text] of Object.entries(files)) {
      const path = join(base, 'art', dir, name);
      mkdirSync(dirname(path), { recursive: true });
      writeFileSync(path, text);
      if (!dir.startsWith('..')) artifact.set(`${dir}/${name}`, Buffer.from(text));
    }
  }
  let admitted: readonly string[] | undefined;
  let refusal: string | undefined;
  try {
    admitted = inspectKustomizations(artifact, 'app').files;
  } catch (error) {
    refusal = (error as Error).message;
  }
  const before = fetched.length;
  const built = await runKustomize(
    join(base, 'art', 'app'),
    { kubectl: tracedKubectl, timeoutMs: 60_000 },
    { home: base, hide: base, as: '' },
  ).then(
    () => true,
    () => false,
  );
  const opened = openedFiles(readFileSync(traceLog, 'utf8')).filter((path) => path.startsWith(`${base}/`));
  const artRoot = join(base, 'art');
  const reads = opened
    .filter((path) => path.startsWith(`${artRoot}/`))
    .map((path) => relative(artRoot, path));
  const outsideReads = opened.filter(
    (path) => !path.startsWith(`${artRoot}/`) && !path.startsWith(join(base, 'home-')),
  );
  return {
    admitted,
    refusal,
    reads: [...new Set(reads)].sort(),
    outsideReads: [...new Set(outsideReads)],
    fetches: fetched.slice(before).filter((url) => url.startsWith(`/${id}/`)),
    built,
  };
}

/** Regular files successfully opened, from `strace -f -e trace=open,openat` output. */
function openedFiles(log: string): string[] {
  const pending = new Map<string, string>();
  const opened: string[] = [];
  for (const line of log.split('\n')) {
    const start = /^(\d+)\s+open(?:at)?\((?:AT_FDCWD, )?"((?:[^"\\]|\\.)*)"(.*)$/.exec(line);
    if (start) {
      const [, pid, path, rest] = start;
      if (rest!.endsWith('<unfinished ...>')) pending.set(pid!, path!);
      else if (/= \d+$/.test(rest!)) opened.push(path!);
      continue;
    }
    const resumed = /^(\d+)\s+<\.\.\. open(?:at)? resumed>.*= (-?\d+)/.exec(line);
    if (resumed && pending.has(resumed[1]!)) {
      if (Number(resumed[2]) >= 0) opened.push(pending.get(resumed[1]!)!);
      pending.delete(resumed[1]!);
    }
  }
  return opened.filter((path) => {
    try {
      return statSync(path).isFile();
    } catch {
      return false;
    }
  });
}

/** Refusals that stand by deny by default, without kustomize having to be shown to escape. */
const DENY_BY_DEFAULT =
  /is not a field sluice knows|is not a key sluice knows|is not supported|sluice runs no plugins/;

describe('the kustomization check against the real kustomize', () => {
  it(`admits exactly what kustomize reads, and nothing it fetches (seed ${SEED}, ${RUNS} runs)`, async () => {
    const tally = {
      admittedBuilt: 0,
      admittedFailed: 0,
      refusedEscaped: 0,
      refusedDenied: 0,
      refusedFailed: 0,
      fetches: 0,
    };
    await fc.assert(
      fc.asyncProperty(caseArbitrary, async (testCase) => {
        const outcome = await runCase(testCase);
        tally.fetches += outcome.fetches.length;
        if (outcome.admitted) {
          // What the check admits, kustomize may read; it reads nothing else and fetches nothing.
          expect({ fetches: outcome.fetches, outside: outcome.outsideReads }).toEqual({
            fetches: [],
            outside: [],
          });
          expect(outcome.reads.filter((path) => !outcome.admitted!.includes(path))).toEqual([]);
          if (outcome.built) expect(outcome.reads).toEqual(outcome.admitted);
          tally[outcome.built ? 'admittedBuilt' : 'admittedFailed']++;
        } else {
          const escaped = outcome.fetches.length > 0 || outcome.outsideReads.length > 0;
          const denied = DENY_BY_DEFAULT.test(outcome.refusal!);
          // A refusal is either deny by default, or kustomize escapes (or cannot build it at all).
          expect(escaped || denied || !outcome.built, outcome.refusal).toBe(true);
          tally[escaped ? 'refusedEscaped' : denied ? 'refusedDenied' : 'refusedFailed']++;
        }
      }),
      { seed: SEED, numRuns: RUNS, endOnFailure: true },
    );
    console.log(`kustomize differential: ${JSON.stringify(tally)}`);
    // The runs exercised both sides: builds admitted and escapes refused.
    expect(tally.admittedBuilt).toBeGreaterThan(0);
    expect(tally.refusedEscaped).toBeGreaterThan(0);
  }, 600_000);
});
