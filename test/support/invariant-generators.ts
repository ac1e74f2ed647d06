// Which generators of the invariant soak find bugs known today, and the configuration the seeded
// test in `npm test` runs without them. Each entry names the generator, the invariant it breaks on
// today's code and the fix that closes it; once the fix is merged, delete its entry here and the
// seeded test runs that generator too (`npm run soak -- --mix invariants` runs all of them anyway).
// No vitest imports: the soak runs it under plain tsx.
import { ALL_GENERATORS, type GeneratorOptions, type HostileKind } from './invariant-artifacts.ts';

export interface KnownBug {
  readonly generator: HostileKind | 'quoting-policy';
  readonly invariant: string;
  readonly bug: string;
}

export const KNOWN_BUGS: readonly KnownBug[] = [
  {
    generator: 'key-case',
    invariant: 'no-outbound',
    bug: 'the pre-kustomize reference check reads `resources:`/`bases:` exactly, kustomize reads `Resources:` too (kustomize key case)',
  },
  {
    generator: 'crd-pattern',
    invariant: 'bounded-time',
    bug: "a CRD's `pattern` is compiled as a JavaScript RegExp (ajv): a catastrophic one backtracks for seconds, blocking the event loop (RE2)",
  },
  {
    generator: 'sops-regex',
    invariant: 'bounded-time',
    bug: "a sops block's `encrypted_regex` is compiled as a JavaScript RegExp: edited to a catastrophic one, it backtracks on a long key (RE2)",
  },
  {
    generator: 'quoting-policy',
    invariant: 'no-leak',
    bug: "an admission policy's message quoting a Secret an earlier revision applied is not redacted: the taint holds only this run's values (taint across revisions)",
  },
];

const known = new Set(KNOWN_BUGS.map((b) => b.generator));

/** Every generator but those finding the known bugs above. */
export const TRIAGED: GeneratorOptions = {
  hostile: ALL_GENERATORS.hostile.filter((kind) => !known.has(kind)),
  quotingPolicy: !known.has('quoting-policy'),
};
