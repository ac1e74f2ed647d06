import { readFileSync } from 'node:fs';
import { clockTicks } from './machine.ts';

/** CPU seconds (user + system) a process has used so far, from /proc/<pid>/stat; 0 if it is gone. */
export function cpuSecondsOf(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may hold spaces) start at ") "; utime and stime are 14 and 15.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / clockTicks();
  } catch {
    return 0;
  }
}

/** This process's own CPU seconds so far. */
export function ownCpuSeconds(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1e6;
}

/** CPU used by some processes between `start` and `stop`, in seconds. */
export function cpuMeter(pids: Record<string, number>): { stop(): Record<string, number> } {
  const read = () => Object.fromEntries(Object.entries(pids).map(([name, pid]) => [name, cpuSecondsOf(pid)]));
  const before = read();
  return {
    stop() {
      const after = read();
      return Object.fromEntries(Object.keys(pids).map((name) => [name, after[name]! - before[name]!]));
    },
  };
}
