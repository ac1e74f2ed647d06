// What the rollout phase must never see; each check names the members that broke it.

/**
 * Members of a later wave whose run took the new revision before the wave before theirs had
 * soaked (every member Ready at it, the last for `soakMs`). `takenAt`: when the first run that
 * took it started; `readySince`: when each member became Ready at it (ms since the epoch).
 */
export function tookBeforeSoak(
  waves: readonly (readonly string[])[],
  takenAt: ReadonlyMap<string, number>,
  readySince: ReadonlyMap<string, number>,
  soakMs: number,
): string[] {
  const broken: string[] = [];
  for (let w = 1; w < waves.length; w++) {
    const before = waves[w - 1]!;
    const ready = before.map((name) => readySince.get(name));
    const soakEnd = ready.every((at) => at !== undefined) ? Math.max(...ready) + soakMs : Infinity;
    for (const name of waves[w]!) {
      const at = takenAt.get(name);
      if (at !== undefined && at < soakEnd)
        broken.push(
          `${name} (wave ${w + 1}) took the revision at ${new Date(at).toISOString()}, before wave ${w} had soaked (${
            soakEnd === Infinity ? 'not every member Ready' : `until ${new Date(soakEnd).toISOString()}`
          })`,
        );
    }
  }
  return broken;
}

type Live = ReadonlyMap<string, string | undefined>;

/** The members of waves `[from, to)` that `broken` names, as `<name> (wave n) <what>`. */
function inWaves(
  waves: readonly (readonly string[])[],
  from: number,
  to: number,
  broken: (name: string) => string | undefined,
): string[] {
  return waves.slice(from, to).flatMap((members, i) =>
    members.flatMap((name) => {
      const what = broken(name);
      return what === undefined ? [] : [`${name} (wave ${from + i + 1}) ${what}`];
    }),
  );
}

/** Members of waves after the first `through` that run `version` on their API server. */
export const aheadOfTheirWave = (
  waves: readonly (readonly string[])[],
  live: Live,
  version: string,
  through: number,
) =>
  inWaves(waves, through, waves.length, (name) =>
    live.get(name) === version ? `runs ${version}` : undefined,
  );

/** Members of the first `through` waves that do not run `version`. */
export const behindTheirWave = (
  waves: readonly (readonly string[])[],
  live: Live,
  version: string,
  through: number,
) =>
  inWaves(waves, 0, through, (name) =>
    live.get(name) === version ? undefined : `runs ${live.get(name) ?? 'nothing'}, not ${version}`,
  );

/** Members that run `version` after the halt but did not when it was recorded. */
export function movedAfterHalt(
  atHalt: ReadonlyMap<string, string | undefined>,
  later: ReadonlyMap<string, string | undefined>,
  version: string,
): string[] {
  return [...later]
    .filter(([name, v]) => v === version && atHalt.get(name) !== version)
    .map(([name]) => `${name} took ${version} after the halt`);
}

/** Throws naming every broken rule, so `npm run scale` exits non-zero. */
export function mustHold(what: string, broken: readonly string[]): void {
  if (broken.length === 0) return;
  const shown = broken.slice(0, 10).join('; ');
  throw new Error(
    `rollout invariant broken (${what}): ${shown}${broken.length > 10 ? `; and ${broken.length - 10} more` : ''}`,
  );
}
