// Live calendars over HTTPS: what is refused before any connection (http://, a host calendarHosts
// does not list, an IP address), a host resolving to a private or loopback address (the SSRF guard,
// on the address the socket would use), and a read from a local HTTPS server trusting the test CA
// (the one injection point: trust root and private addresses allowed): ETag and 304, no redirects,
// a body over the bound stopped as it streams.
import { readFileSync, mkdtempSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeApiServerCerts } from '../../../dev/certs.ts';
import { httpsCalendarReader, isPrivateAddress } from '../../../functions/core/calendars/https-calendar.ts';

const url = (url: string) => ({ url });

describe('a calendar URL', () => {
  const read = httpsCalendarReader({ allowedHosts: ['calendar.example.com', 'localhost'] });

  it('is refused unless https://, on a host calendarHosts lists, by name', async () => {
    await expect(read(url('http://calendar.example.com/freeze.ics'), undefined)).rejects.toThrow(
      '"http://calendar.example.com/freeze.ics" is not https://: a calendar is read over HTTPS only (or give it as an S3 object)',
    );
    await expect(read(url('https://evil.example.net/freeze.ics'), undefined)).rejects.toThrow(
      '"https://evil.example.net/freeze.ics": host "evil.example.net" is not in calendarHosts (calendar.example.com, localhost)',
    );
    await expect(read(url('https://169.254.169.254/latest/meta-data/'), undefined)).rejects.toThrow(
      '"169.254.169.254" is not a host name (lower-case DNS labels, e.g. calendar.example.com; IP addresses are not allowed)',
    );
    await expect(read(url('https://[::1]/freeze.ics'), undefined)).rejects.toThrow('is not a host name');
    await expect(read(url('https://user:pw@calendar.example.com/x.ics'), undefined)).rejects.toThrow(
      'carries credentials',
    );
    await expect(
      httpsCalendarReader({ allowedHosts: [] })(url('https://calendar.example.com/x.ics'), undefined),
    ).rejects.toThrow(
      'no host is allowed for calendars: add "calendar.example.com" to calendarHosts to allow it',
    );
  });

  it('is not read from a host that resolves to a loopback address (an allowed name is no way into the network)', async () => {
    await expect(read(url('https://localhost:1/freeze.ics'), undefined)).rejects.toThrow(
      /^localhost resolves to (127\.0\.0\.1|::1), a private, loopback or link-local address: calendars are not read from inside the network$/,
    );
  });

  it('judges addresses as the SSRF guard must: private, loopback, link-local (IMDS), mapped IPv4, unique-local IPv6', () => {
    for (const address of [
      '10.1.2.3',
      '172.20.0.1',
      '192.168.1.1',
      '127.0.0.1',
      '169.254.169.254',
      '100.64.0.1',
      '0.0.0.0',
      '::1',
      '::',
      '::ffff:127.0.0.1',
      '::ffff:169.254.169.254',
      'fd00:ec2::254',
      'fe80::1',
    ])
      expect([address, isPrivateAddress(address)]).toEqual([address, true]);
    for (const address of ['93.184.216.34', '52.94.236.248', '2600:1f18::1', '::ffff:93.184.216.34'])
      expect([address, isPrivateAddress(address)]).toEqual([address, false]);
  });
});

describe('a read from a local HTTPS server (test CA, private addresses allowed)', () => {
  let server: Server;
  let base: string;
  let ca: string;
  const ICS = 'BEGIN:VCALENDAR\r\nVERSION:2.0\r\nEND:VCALENDAR\r\n';
  const seen: { path: string; ifNoneMatch?: string }[] = [];

  beforeAll(async () => {
    const certs = makeApiServerCerts(mkdtempSync(join(tmpdir(), 'sluice-https-calendar-')));
    ca = readFileSync(certs.caCert, 'utf8');
    server = createServer(
      { cert: readFileSync(certs.serverCert), key: readFileSync(certs.serverKey) },
      (req, res) => {
        const ifNoneMatch = req.headers['if-none-match'];
        seen.push({ path: req.url ?? '', ...(ifNoneMatch !== undefined && { ifNoneMatch }) });
        if (req.url === '/moved.ics') {
          res.writeHead(302, { location: 'https://169.254.169.254/latest/meta-data/' });
          return res.end();
        }
        if (req.url === '/endless.ics') {
          // Chunked, no Content-Length: the bound is kept as the bytes arrive.
          res.writeHead(200, { 'content-type': 'text/calendar' });
          const chunk = 'X'.repeat(4096);
          const write = () => {
            while (res.write(chunk));
            res.once('drain', write);
          };
          res.on('close', () => res.removeAllListeners('drain'));
          return write();
        }
        if (ifNoneMatch === '"v1"') {
          res.writeHead(304, { etag: '"v1"' });
          return res.end();
        }
        res.writeHead(200, {
          etag: '"v1"',
          'content-type': 'text/calendar',
          'content-length': Buffer.byteLength(ICS),
        });
        res.end(ICS);
      },
    );
    await new Promise<void>((ready) => server.listen(0, '127.0.0.1', ready));
    base = `https://localhost:${(server.address() as AddressInfo).port}`;
  });
  afterAll(
    () =>
      new Promise<void>((done) => {
        server.closeAllConnections();
        server.close(() => done());
      }),
  );

  const reader = (maxBytes?: number) =>
    httpsCalendarReader({
      allowedHosts: ['localhost'],
      ca,
      allowPrivateAddresses: true,
      timeoutMs: 10_000,
      ...(maxBytes !== undefined && { maxBytes }),
    });

  it('reads the calendar with its ETag, and sends it back as If-None-Match (304: unchanged)', async () => {
    expect(await reader()(url(`${base}/freeze.ics`), undefined)).toEqual({
      status: 'changed',
      text: ICS,
      etag: '"v1"',
    });
    expect(await reader()(url(`${base}/freeze.ics`), '"v1"')).toEqual({ status: 'unchanged' });
    expect(seen.filter((request) => request.path === '/freeze.ics')).toEqual([
      { path: '/freeze.ics' },
      { path: '/freeze.ics', ifNoneMatch: '"v1"' },
    ]);
  });

  it('does not trust the server without the test CA (Node’s own roots only)', async () => {
    await expect(
      httpsCalendarReader({ allowedHosts: ['localhost'], allowPrivateAddresses: true })(
        url(`${base}/freeze.ics`),
        undefined,
      ),
    ).rejects.toThrow(/self.signed|unable to (get|verify)/i);
  });

  it('follows no redirect, naming where it pointed', async () => {
    await expect(reader()(url(`${base}/moved.ics`), undefined)).rejects.toThrow(
      `${base}/moved.ics answered 302, a redirect to https://169.254.169.254/latest/meta-data/: redirects are not followed (give the calendar's own URL)`,
    );
  });

  it('stops a body that grows past the bound as it streams in', async () => {
    await expect(reader(64 * 1024)(url(`${base}/endless.ics`), undefined)).rejects.toThrow(
      `${base}/endless.ics is more than 64 KiB: refused after reading that much`,
    );
  });
});
