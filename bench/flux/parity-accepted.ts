// The differences `npm run parity` accepts: an exact list (bench/flux/parity-accepted.json) of kind,
// field path and both values, each with its reason, rendered into docs/flux-parity.md. A
// difference not on it fails the run; an entry no difference matched is reported and fails too.
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Difference } from './parity-compare.ts';

export interface AcceptedDifference {
  readonly kind: string;
  /** A path as the comparison names it; `*` stands for any text without a `.` (a container's name). */
  readonly path: string;
  readonly sluice: string;
  readonly flux: string;
  readonly reason: string;
}

const here = dirname(fileURLToPath(import.meta.url));
const LIST = join(here, 'parity-accepted.json');
const DOC = join(here, '..', '..', 'docs', 'flux-parity.md');
const BEGIN =
  '<!-- accepted differences: rendered by npm run parity from bench/flux/parity-accepted.json -->';
const END = '<!-- end of accepted differences -->';

export function acceptedDifferences(): AcceptedDifference[] {
  const list = JSON.parse(readFileSync(LIST, 'utf8')) as AcceptedDifference[];
  for (const [i, entry] of list.entries())
    for (const key of ['kind', 'path', 'sluice', 'flux', 'reason'] as const)
      if (typeof entry[key] !== 'string' || entry[key] === '')
        throw new Error(`${LIST}: entry ${i} has no ${key}`);
  return list;
}

const pattern = (path: string) =>
  new RegExp(`^${path.replace(/[.*+?^${}()|[\]\\]/g, (c) => (c === '*' ? '[^.]*' : `\\${c}`))}$`);

/** The entry that accepts `difference`, if any. */
export function acceptedBy(
  difference: Difference,
  list: readonly AcceptedDifference[],
): AcceptedDifference | undefined {
  return list.find(
    (entry) =>
      entry.kind === difference.kind &&
      entry.sluice === difference.sluice &&
      entry.flux === difference.flux &&
      pattern(entry.path).test(difference.path),
  );
}

const cell = (text: string) => text.replaceAll('|', '\\|');

/** The list as a Markdown table, in docs/flux-parity.md between its markers; true if the file changed. */
export function renderIntoDocs(list: readonly AcceptedDifference[]): boolean {
  // Kept as written: prettier would pad the cells, and the next run would render them anew.
  const table = [
    '<!-- prettier-ignore-start -->',
    '| Kind | Field path | sluice | Flux | Reason |',
    '| --- | --- | --- | --- | --- |',
    ...list.map(
      (e) => `| ${e.kind} | \`${cell(e.path)}\` | ${cell(e.sluice)} | ${cell(e.flux)} | ${cell(e.reason)} |`,
    ),
    '<!-- prettier-ignore-end -->',
  ].join('\n');
  const doc = readFileSync(DOC, 'utf8');
  const [start, end] = [doc.indexOf(BEGIN), doc.indexOf(END)];
  if (start < 0 || end < start)
    throw new Error(`${DOC}: the markers of the accepted differences are missing`);
  const next = `${doc.slice(0, start + BEGIN.length)}\n\n${table}\n\n${doc.slice(end)}`;
  if (next === doc) return false;
  writeFileSync(DOC, next);
  return true;
}
