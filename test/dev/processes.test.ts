import { createServer, type Server } from 'node:net';
import { describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  allStarted,
  freePort,
  isAlive,
  onFreshPortsIfTaken,
  startDaemon,
  waitUntilReady,
} from '../../dev/processes.ts';

function listen(port: number): Promise<Server> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve(server));
  });
}

describe('onFreshPortsIfTaken', () => {
  it('starts again on a new port when another process took the one picked', async () => {
    const squatter = await listen(await freePort());
    const taken = (squatter.address() as { port: number }).port;
    const tried: number[] = [];
    const server = await onFreshPortsIfTaken(async () => {
      const port = tried.length === 0 ? taken : await freePort();
      tried.push(port);
      return listen(port);
    });
    expect(tried).toHaveLength(2);
    expect((server.address() as { port: number }).port).toBe(tried[1]);
    await Promise.all([squatter, server].map((s) => new Promise((done) => s.close(done))));
  });

  it('throws any other failure at once', async () => {
    let attempts = 0;
    await expect(
      onFreshPortsIfTaken(() => {
        attempts++;
        return Promise.reject(new Error('etcd exited during start-up: no such file'));
      }),
    ).rejects.toThrow('no such file');
    expect(attempts).toBe(1);
  });
});

describe('allStarted', () => {
  it('throws the first failure only once every start has settled, so each started one is known', async () => {
    const recorded: string[] = [];
    const slow = new Promise<string>((resolve) => setTimeout(() => resolve('dynamodb'), 100)).then(
      (name) => (recorded.push(name), name),
    );
    await expect(
      allStarted([Promise.reject(new Error('etcd: address already in use')), slow]),
    ).rejects.toThrow('address already in use');
    expect(recorded).toEqual(['dynamodb']);
  });

  it('answers every value, in order, when all start', async () => {
    expect(await allStarted([Promise.resolve(1), Promise.resolve('two')] as const)).toEqual([1, 'two']);
  });
});

describe('waitUntilReady', () => {
  it('stops a component that is not ready in time, naming it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sluice-processes-'));
    try {
      const log = join(dir, 'sleeper.log');
      const pid = startDaemon('sleep', ['60'], log);
      await expect(
        waitUntilReady({ name: 'sleeper', pid, logFile: log, ready: async () => false, timeoutMs: 300 }),
      ).rejects.toThrow('sleeper was not ready within 0.3s');
      expect(isAlive(pid)).toBe(false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
