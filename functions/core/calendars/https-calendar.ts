// A live calendar read over HTTPS: only `https://` on a host the stack allows (`calendarHosts`),
// never to a private, loopback or link-local address (the check is made on the address the socket
// connects to, so a name that resolves elsewhere later cannot slip through), no redirects, bounded
// in size and time. A Lambda function in a VPC can reach what the internet cannot: the instance
// metadata service, internal load balancers; a calendar URL must not become a way to read them.
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { request } from 'node:https';
import { BlockList, isIP } from 'node:net';
import { calendarUrlProblem } from '../config/calendar-sources.ts';
import { formatBytes, LIVE_CALENDAR_LIMITS } from '../limits.ts';
import { readBounded, type ReadCalendarSource } from './live-calendars.ts';

export interface HttpsCalendarOptions {
  /** The hosts a calendar URL may name (SLUICE_CALENDAR_HOSTS, from the stack's `calendarHosts`). */
  readonly allowedHosts: readonly string[];
  readonly maxBytes?: number;
  readonly timeoutMs?: number;
  /** Trust roots (PEM) in place of Node's bundled ones. For a test server; production leaves it unset. */
  readonly ca?: string;
  /** Let a host resolve to a private or loopback address. For a test server on 127.0.0.1 only. @default false */
  readonly allowPrivateAddresses?: boolean;
}

/** Addresses a calendar host may not resolve to: private, loopback, link-local (IMDS), shared, multicast, reserved. */
const PRIVATE = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const)
  PRIVATE.addSubnet(network, prefix, 'ipv4');
for (const [network, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['64:ff9b::', 96],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
] as const)
  PRIVATE.addSubnet(network, prefix, 'ipv6');

/** True for an address a calendar may not be read from (an IPv4-mapped IPv6 address is judged as its IPv4 one). */
export function isPrivateAddress(address: string): boolean {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)?.[1];
  if (mapped) return PRIVATE.check(mapped, 'ipv4');
  const family = isIP(address);
  if (family === 0) return true;
  return PRIVATE.check(address, family === 4 ? 'ipv4' : 'ipv6');
}

type LookupCallback = (error: Error | null, address: string | LookupAddress[], family?: number) => void;

/** dns.lookup that refuses a host resolving to any private address (unless allowed). */
function checkedLookup(allowPrivate: boolean) {
  return (hostname: string, options: { all?: boolean }, callback: LookupCallback): void => {
    dnsLookup(hostname, { all: true }, (error, addresses) => {
      if (error) return callback(error, []);
      const refused = addresses.find((address) => isPrivateAddress(address.address));
      if (refused && !allowPrivate)
        return callback(
          new Error(
            `${hostname} resolves to ${refused.address}, a private, loopback or link-local address: calendars are not read from inside the network`,
          ),
          [],
        );
      if (options.all) return callback(null, addresses);
      const first = addresses[0];
      if (!first) return callback(new Error(`${hostname} resolves to no address`), []);
      callback(null, first.address, first.family);
    });
  };
}

/** GET of a live calendar's URL under the rules above, conditional on the last good copy's ETag. */
export function httpsCalendarReader(options: HttpsCalendarOptions): ReadCalendarSource {
  const maxBytes = options.maxBytes ?? LIVE_CALENDAR_LIMITS.maxBytes;
  const timeoutMs = options.timeoutMs ?? LIVE_CALENDAR_LIMITS.timeoutMs;
  return (source, etag) =>
    new Promise((resolve, reject) => {
      if (!('url' in source)) return reject(new Error('is not an HTTPS URL'));
      const problem = calendarUrlProblem(source.url, options.allowedHosts);
      if (problem) return reject(new Error(problem));
      const url = new URL(source.url);
      if (isIP(url.hostname.replace(/^\[|\]$/g, '')) !== 0)
        return reject(
          new Error(`"${source.url}" names an IP address: give a host name calendarHosts allows`),
        );
      const abort = new AbortController();
      const timer = setTimeout(
        () => abort.abort(new Error(`${source.url} gave no answer within ${timeoutMs / 1000}s`)),
        timeoutMs,
      );
      const done =
        <T>(settle: (value: T) => void) =>
        (value: T) => {
          clearTimeout(timer);
          settle(value);
        };
      const ok = done(resolve);
      const fail = done(reject);
      const req = request(
        {
          protocol: 'https:',
          hostname: url.hostname,
          port: url.port || 443,
          path: `${url.pathname}${url.search}`,
          method: 'GET',
          headers: {
            accept: 'text/calendar',
            'accept-encoding': 'identity',
            ...(etag !== undefined && { 'if-none-match': etag }),
          },
          agent: false,
          signal: abort.signal,
          lookup: checkedLookup(options.allowPrivateAddresses ?? false) as never,
          ...(options.ca !== undefined && { ca: options.ca }),
        },
        (response) => {
          const status = response.statusCode ?? 0;
          if (status === 304) {
            response.destroy();
            return ok({ status: 'unchanged' });
          }
          if (status >= 300 && status < 400) {
            response.destroy();
            return fail(
              new Error(
                `${source.url} answered ${status}, a redirect${response.headers.location ? ` to ${response.headers.location}` : ''}: redirects are not followed (give the calendar's own URL)`,
              ),
            );
          }
          if (status !== 200) {
            response.destroy();
            return fail(new Error(`${source.url} answered ${status} ${response.statusMessage ?? ''}`.trim()));
          }
          const length = Number(response.headers['content-length']);
          if (Number.isFinite(length) && length > maxBytes) {
            response.destroy();
            return fail(
              new Error(
                `${source.url} is ${length} bytes, more than ${formatBytes(maxBytes)}: refused unread`,
              ),
            );
          }
          const etagHeader = response.headers.etag;
          readBounded(response, maxBytes, source.url, abort.signal).then(
            (text) => ok({ status: 'changed', text, ...(etagHeader !== undefined && { etag: etagHeader }) }),
            fail,
          );
        },
      );
      req.on('error', (error) => fail(abort.signal.aborted ? (abort.signal.reason as Error) : error));
      req.end();
    });
}
