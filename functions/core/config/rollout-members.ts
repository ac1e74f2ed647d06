// Which deliveries each wave of a rollout takes, and the checks across a config that rollouts
// call for: names used once, patterns that match deliveries, one rollout per delivery, wave gates
// that exist, members that pull from the rollout's repository.
import type * as z from 'zod';
import { closest, isRecord } from './issues.ts';
import { isPattern, isPlainName, matchesPattern } from './rollout-schema.ts';
import type { Delivery, Rollout } from './types.ts';

type Ctx = z.core.$RefinementCtx;

/**
 * Per wave, the deliveries it takes, in the order of `names`: those a pattern of the wave matches
 * that no earlier wave took.
 */
export function waveMembers(waves: readonly (readonly string[])[], names: readonly string[]): string[][] {
  const taken = new Set<string>();
  return waves.map((patterns) => {
    const members = names.filter(
      (name) => !taken.has(name) && patterns.some((pattern) => matchesPattern(pattern, name)),
    );
    for (const member of members) taken.add(member);
    return members;
  });
}

/** The rollouts with each wave's members settled against the config's deliveries. */
export function settleRollouts(rollouts: readonly Rollout[], deliveries: readonly Delivery[]): Rollout[] {
  const names = deliveries.map((delivery) => delivery.name);
  return rollouts.map((rollout) => {
    const members = waveMembers(
      rollout.waves.map((wave) => wave.patterns),
      names,
    );
    return {
      ...rollout,
      waves: rollout.waves.map((wave, index) => ({ ...wave, deliveries: members[index]! })),
    };
  });
}

/** `team/app` from `oci://host/team/app`, or undefined when it is not such a URL. */
const repositoryOf = (url: unknown): string | undefined =>
  typeof url === 'string' && url.startsWith('oci://')
    ? url.slice('oci://'.length).split('/').slice(1).join('/')
    : undefined;

const nameOf = (item: unknown) => (isRecord(item) && typeof item.name === 'string' ? item.name : undefined);

/** The patterns of each wave as written (non-strings left out: the schema reports them). */
function wavePatterns(rollout: Record<string, unknown>): string[][] {
  if (!Array.isArray(rollout.waves)) return [];
  return rollout.waves.map((wave: unknown) =>
    isRecord(wave) && Array.isArray(wave.deliveries)
      ? wave.deliveries.map((pattern: unknown) =>
          // A malformed pattern is the schema's to report; here it matches nothing.
          typeof pattern === 'string' && isPattern(pattern) ? pattern : '',
        )
      : [],
  );
}

/** Checks the rollouts of a raw config against its deliveries and gates, reporting at the field at fault. */
export function checkRollouts(config: Record<string, unknown>, ctx: Ctx): void {
  if (!Array.isArray(config.rollouts)) return;
  const rollouts = config.rollouts as unknown[];
  const deliveries = Array.isArray(config.deliveries) ? (config.deliveries as unknown[]) : [];
  const gates = Array.isArray(config.gates) ? (config.gates as unknown[]) : [];
  const byName = new Map(deliveries.flatMap((d) => (nameOf(d) === undefined ? [] : [[nameOf(d)!, d]])));
  const names = [...byName.keys()];
  const definedGates = new Set(gates.map(nameOf).filter((g) => g !== undefined));
  const memberOf = new Map<string, string>();
  const seen = new Map<string, number>();

  rollouts.forEach((rollout, index) => {
    if (!isRecord(rollout)) return;
    const own = nameOf(rollout);
    const at = (...path: (string | number)[]) => ['rollouts', index, ...path];
    const issue = (path: (string | number)[], message: string) =>
      ctx.addIssue({ code: 'custom', message, path });
    if (own !== undefined) {
      const earlier = seen.get(own);
      if (earlier !== undefined)
        issue(at('name'), `duplicate rollout name "${own}" (also rollouts[${earlier}])`);
      else seen.set(own, index);
    }
    const who = own === undefined ? 'the rollout' : `rollout "${own}"`;
    const repository = isRecord(rollout.source) ? repositoryOf(rollout.source.url) : undefined;
    const patterns = wavePatterns(rollout);
    const members = waveMembers(patterns, names);
    patterns.forEach((wavePatterns, wave) => {
      const waveRecord = (rollout.waves as unknown[])[wave];
      wavePatterns.forEach((pattern, k) => {
        if (pattern === '' || names.some((name) => matchesPattern(pattern, name))) return;
        const near = isPlainName(pattern) ? closest(pattern, names) : undefined;
        issue(
          at('waves', wave, 'deliveries', k),
          `"${pattern}" matches no delivery in deliveries${near ? ` (did you mean "${near}"?)` : ''}`,
        );
      });
      const taken = members[wave]!;
      if (taken.length === 0 && wavePatterns.some((pattern) => names.some((n) => matchesPattern(pattern, n))))
        issue(
          at('waves', wave, 'deliveries'),
          `wave ${wave + 1} of ${who} takes no delivery: every delivery its patterns match is in an earlier wave`,
        );
      for (const member of taken) {
        const pattern = wavePatterns.findIndex((p) => matchesPattern(p, member));
        const path = at('waves', wave, 'deliveries', pattern);
        const other = memberOf.get(member);
        if (other !== undefined && other !== own)
          issue(
            path,
            `delivery "${member}" is already in rollout "${other}": a delivery takes part in one rollout at most`,
          );
        else if (own !== undefined) memberOf.set(member, own);
        const delivery = byName.get(member);
        const theirs =
          isRecord(delivery) && isRecord(delivery.source) ? repositoryOf(delivery.source.url) : undefined;
        if (repository !== undefined && theirs !== undefined && theirs !== repository)
          issue(
            path,
            `delivery "${member}" pulls from repository "${theirs}", not "${repository}" as ${who} does: every member takes the rollout's digest, so it must pull from the same repository`,
          );
      }
      const gate = isRecord(waveRecord) ? waveRecord.gate : undefined;
      if (typeof gate === 'string' && gate !== '' && !definedGates.has(gate)) {
        const near = closest(gate, definedGates);
        issue(
          at('waves', wave, 'gate'),
          `wave ${wave + 1} of ${who} is held by gate "${gate}", which is not defined in gates${near ? ` (did you mean "${near}"?)` : ''}`,
        );
      }
    });
  });
}
