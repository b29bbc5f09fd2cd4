/**
 * Where a webhook may go, and the one way it is sent. Only http and https; no loopback, link-local,
 * private, unique-local, shared, multicast or unspecified address unless the configuration allows
 * them. A host name is checked when the endpoint is saved and again at each attempt: the request
 * connects to the very address the check resolved (the lookup is the guard), so a name that turns
 * private after its check (DNS rebinding) is refused, not reached. Redirects are never followed.
 */
import dns from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';

const BLOCKED = new net.BlockList();
for (const [address, prefix] of [
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
  BLOCKED.addSubnet(address, prefix, 'ipv4');
for (const [address, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
] as const)
  BLOCKED.addSubnet(address, prefix, 'ipv6');

/** The IPv4 address inside an IPv4-mapped IPv6 one (`::ffff:127.0.0.1`, `::ffff:7f00:1`). */
function mappedIpv4(address: string): string | undefined {
  const dotted = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (dotted) return dotted[1];
  const hex = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/i.exec(address);
  if (!hex) return undefined;
  const [high, low] = [parseInt(hex[1], 16), parseInt(hex[2], 16)];
  return [high >> 8, high & 255, low >> 8, low & 255].join('.');
}

/** Whether an IP address is one a webhook must not reach. */
export function isPrivateAddress(address: string): boolean {
  const v4 = mappedIpv4(address);
  if (v4) return BLOCKED.check(v4, 'ipv4');
  const family = net.isIP(address);
  if (family === 0) return true;
  return BLOCKED.check(address, family === 4 ? 'ipv4' : 'ipv6');
}

export class TargetRefused extends Error {}

/** The URL's host as a bare name or address (IPv6 without its brackets). */
function hostOf(url: URL): string {
  return url.hostname.replace(/^\[|\]$/g, '');
}

/** Parses an endpoint URL: http or https, with a host; throws TargetRefused with the reason. */
export function parseTargetUrl(value: string): URL {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new TargetRefused('must be an absolute http or https URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new TargetRefused('must be an http or https URL');
  if (!url.hostname) throw new TargetRefused('must name a host');
  return url;
}

/** Resolves a host name to every address it has, refusing a name with a private one. */
async function resolvePublic(host: string): Promise<dns.LookupAddress[]> {
  let addresses: dns.LookupAddress[];
  try {
    addresses = await dns.promises.lookup(host, { all: true, verbatim: true });
  } catch {
    throw new TargetRefused(`host ${host} does not resolve`);
  }
  const blocked = addresses.find(({ address }) => isPrivateAddress(address));
  if (blocked) throw new TargetRefused(`host ${host} resolves to a private address (${blocked.address})`);
  return addresses;
}

/** Checks an endpoint URL as it is saved: scheme, and unless private targets are allowed, the address it names or resolves to. */
export async function checkTarget(value: string, allowPrivate: boolean): Promise<URL> {
  const url = parseTargetUrl(value);
  if (allowPrivate) return url;
  const host = hostOf(url);
  if (net.isIP(host)) {
    if (isPrivateAddress(host)) throw new TargetRefused(`address ${host} is private`);
  } else {
    await resolvePublic(host);
  }
  return url;
}

/** The receiver's answer to one attempt. */
export interface TargetAnswer {
  statusCode: number;
  /** The first bytes of the answer's body (at most EXCERPT_BYTES), as text. */
  excerpt: string;
}

export const EXCERPT_BYTES = 1024;

/**
 * A lookup that answers only public addresses, so the socket connects to an address that was
 * checked; `options.all` is what Node asks for when it tries several addresses in turn.
 */
function guardedLookup(hostname: string, options: dns.LookupOptions, callback: (error: Error | null, address: string | dns.LookupAddress[], family?: number) => void): void {
  resolvePublic(hostname).then(
    (addresses) => (options.all ? callback(null, addresses) : callback(null, addresses[0].address, addresses[0].family)),
    (error: unknown) => callback(error as Error, ''),
  );
}

/**
 * POSTs `body` to `url` once: no redirect followed (a 3xx is an answer like any other), at most
 * `timeoutMs` for the whole exchange, and (unless private targets are allowed) only to a public address.
 */
export async function postTo(value: string, body: string, headers: Record<string, string>, options: { timeoutMs: number; allowPrivate: boolean }): Promise<TargetAnswer> {
  const url = parseTargetUrl(value);
  const host = hostOf(url);
  if (!options.allowPrivate && net.isIP(host) && isPrivateAddress(host)) throw new TargetRefused(`address ${host} is private`);
  const client = url.protocol === 'https:' ? https : http;
  return new Promise<TargetAnswer>((resolve, reject) => {
    const request = client.request(url, {
      method: 'POST',
      headers: { ...headers, 'Content-Length': String(Buffer.byteLength(body)) },
      lookup: options.allowPrivate ? undefined : guardedLookup,
      signal: AbortSignal.timeout(options.timeoutMs),
      agent: false,
    });
    request.on('error', (error) => reject(error.name === 'AbortError' || error.name === 'TimeoutError' ? new Error(`no answer within ${options.timeoutMs} ms`) : error));
    request.on('response', (response) => {
      const chunks: Buffer[] = [];
      let length = 0;
      const finish = () => {
        resolve({ statusCode: response.statusCode ?? 0, excerpt: Buffer.concat(chunks).subarray(0, EXCERPT_BYTES).toString('utf8') });
        response.destroy();
      };
      response.on('data', (chunk: Buffer) => {
        chunks.push(chunk);
        length += chunk.length;
        if (length >= EXCERPT_BYTES) finish();
      });
      response.on('end', finish);
      response.on('error', finish);
    });
    request.end(body);
  });
}
