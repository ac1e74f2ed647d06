import { createServer, type Server } from 'node:net';
import { describe, expect, it } from 'vitest';
import { freePort, onFreshPortsIfTaken } from '../../dev/processes.ts';

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
