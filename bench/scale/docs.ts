import type { Machine } from '../machine.ts';
import type { ScaleResult } from './simulate.ts';

export async function writeScaleDocs(
  _root: string,
  _result: ScaleResult,
  _machine: Machine,
  _run: { totalMs: number; load: readonly [number, number] },
): Promise<void> {}
