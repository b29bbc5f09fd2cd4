/**
 * Where a webhook may go, and the one way it is sent. Only http and https; no loopback, link-local,
 * private, unique-local, site-local, shared, multicast or unspecified address, nor an IPv6 address
 * that carries one of those IPv4 addresses (mapped, translated, compatible, NAT64, 6to4, Teredo),
 * unless the configuration allows them. A host name is checked when the endpoint is saved and again at each attempt: the request
 * connects to the very address the check resolved (the lookup is the guard), so a name that turns
 * private after its check (DNS rebinding) is refused, not reached. Redirects are never followed.
 */
import dns from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import ipaddr from 'ipaddr.js';

/** The IPv4 ranges a webhook must not reach (CONTRACT §11), as address and prefix length. */
export const REFUSED_IPV4_RANGES: readonly (readonly [string, number])[] = [
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
];

/** The IPv6 ranges refused whatever they carry; the forms that carry an IPv4 address are judged by it (`embeddedIpv4`). */
export const REFUSED_IPV6_RANGES: readonly (readonly [string, number])[] = [
  ['::', 128],
  ['::1', 128],
  // The local-use NAT64 prefix (RFC 8215): a translator of the network's own, to its own IPv4 space.
  ['64:ff9b:1::', 48],
  ['fc00::', 7],
  ['fe80::', 10],
  // Site-local (deprecated by RFC 3879, still routed inside some networks).
  ['fec0::', 10],
  ['ff00::', 8],
];

const BLOCKED = new net.BlockList();
for (const [address, prefix] of REFUSED_IPV4_RANGES) BLOCKED.addSubnet(address, prefix, 'ipv4');
for (const [address, prefix] of REFUSED_IPV6_RANGES) BLOCKED.addSubnet(address, prefix, 'ipv6');

/** An IPv4 address from 32 bits. */
const ipv4Of = (high: number, low: number) => [high >> 8, high & 255, low >> 8, low & 255].join('.');

/**
 * The IPv4 addresses an IPv6 one carries, by the forms that reach IPv4 (each judged as the IPv4
 * address it carries): IPv4-mapped `::ffff:0:0/96`, IPv4-translated `::ffff:0:0:0/96` (RFC 6145),
 * IPv4-compatible `::/96` (deprecated), NAT64's well-known prefix `64:ff9b::/96` (RFC 6052), 6to4
 * `2002::/16` (the 32 bits after the prefix) and Teredo `2001::/32` (its server, and its client
 * with the bits inverted, RFC 4380).
 */
export function embeddedIpv4(address: string): string[] {
  if (!ipaddr.IPv6.isValid(address)) return [];
  const parts = ipaddr.IPv6.parse(address).parts;
  const zeros = (from: number, to: number) => parts.slice(from, to).every((part) => part === 0);
  const [last, lastLow] = [parts[6], parts[7]];
  if (zeros(0, 5) && (parts[5] === 0xffff || parts[5] === 0)) return [ipv4Of(last, lastLow)];
  if (zeros(0, 4) && parts[4] === 0xffff && parts[5] === 0) return [ipv4Of(last, lastLow)];
  if (parts[0] === 0x64 && parts[1] === 0xff9b && zeros(2, 6)) return [ipv4Of(last, lastLow)];
  if (parts[0] === 0x2002) return [ipv4Of(parts[1], parts[2])];
  if (parts[0] === 0x2001 && parts[1] === 0) return [ipv4Of(parts[2], parts[3]), ipv4Of(last ^ 0xffff, lastLow ^ 0xffff)];
  return [];
}

/**
 * Whether an IP address is one a webhook must not reach: not an address, a blocked one, or one that
 * carries a blocked IPv4 address. An IPv6 zone id (`%eth0`) is left out: the address is judged.
 */
export function isPrivateAddress(address: string): boolean {
  const family = net.isIP(address);
  if (family === 0) return true;
  if (family === 4) return BLOCKED.check(address, 'ipv4');
  const [bare] = address.split('%', 1);
  return BLOCKED.check(bare, 'ipv6') || embeddedIpv4(bare).some((v4) => BLOCKED.check(v4, 'ipv4'));
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
    addresses = await dns.promises.lookup(host, { all: true, order: 'verbatim' });
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
