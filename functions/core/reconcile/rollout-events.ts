// A rollout's events on the bus: `Rollout Wave Started` when a wave starts taking the revision,
// `Rollout Halted` for each halt recorded, `Rollout Complete` when every wave is Ready at it. The
// runs that follow the members announce them; a marker in the table lets each go out once.
import type { Rollout } from '../config/index.ts';
import { rolloutSummary, waveStarted, type RolloutState } from '../rollout/state.ts';
import { claimRolloutEvent } from '../store/rollouts.ts';
import type { TableClient } from '../store/table-client.ts';
import { ROLLOUT_EVENTS, type EventSink, type RolloutEvent, type RolloutEventType } from './events.ts';

export interface RolloutEventDeps {
  readonly db: TableClient;
  readonly events?: Pick<EventSink, 'rollout'>;
  readonly log?: (message: string) => void;
}

/** Publishes what `state` shows that no run published yet: the active wave's start, a halt, the completion. */
export async function announceRollout(
  rollout: Pick<Rollout, 'name'>,
  state: RolloutState,
  deps: RolloutEventDeps,
  now: Date,
): Promise<void> {
  const publish = deps.events?.rollout?.bind(deps.events);
  const generation = state.generation;
  if (!publish || !generation) return;
  const base = {
    rollout: rollout.name,
    generation: generation.generation,
    revision: generation.revision,
    kind: generation.kind,
    waves: state.waves.length,
    time: now.toISOString(),
  };
  const once = async (key: string, type: RolloutEventType, event: RolloutEvent) => {
    if (!(await claimRolloutEvent(deps.db, rollout.name, `${generation.generation}#${key}`))) return;
    await publish(type, event).catch((error: unknown) =>
      deps.log?.(`could not publish '${type}' of rollout '${rollout.name}': ${String(error)}`),
    );
  };
  const summary = `rollout '${rollout.name}': ${rolloutSummary(state)}`;
  if (state.halt) {
    const { halt } = state;
    await once(`halt#${halt.sequence ?? halt.at ?? base.time}`, ROLLOUT_EVENTS.halted, {
      ...base,
      wave: halt.wave,
      ...(halt.delivery && { delivery: halt.delivery }),
      why: halt.why,
      by: halt.by ?? 'sluice',
      message: `${summary}; to do: ${halt.todo}`,
    });
    return;
  }
  if (state.phase === 'Complete') {
    await once('complete', ROLLOUT_EVENTS.complete, { ...base, message: summary });
    return;
  }
  const wave = state.activeWave !== undefined ? state.waves[state.activeWave - 1] : undefined;
  if (wave && waveStarted(wave))
    await once(`wave#${wave.number}`, ROLLOUT_EVENTS.waveStarted, {
      ...base,
      wave: wave.number,
      message: summary,
    });
}
