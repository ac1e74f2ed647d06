import type { AlarmStateReader } from './alarms.ts';

/**
 * An AlarmStateReader that loads the real one on first use, so a function whose gates name no
 * alarm never loads the CloudWatch client (a chunk of its own in the Lambda bundle).
 */
export function lazyAlarmStates(load: () => Promise<AlarmStateReader>): AlarmStateReader {
  let loading: Promise<AlarmStateReader> | undefined;
  return {
    async readAlarms(names) {
      loading ??= load().catch((error: unknown) => {
        loading = undefined;
        throw error;
      });
      return (await loading).readAlarms(names);
    },
  };
}
