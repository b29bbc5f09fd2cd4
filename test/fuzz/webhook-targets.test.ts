/**
 * Property-based fuzzing of the webhook target check (subgraphs/order/webhooks/targets.ts): an
 * address is refused or allowed by the contract's list of refused targets (CONTRACT §11), matched
 * here by the test's own arithmetic on the address it generated, whatever notation it is written in: IPv4 dotted, as one number, in hex or
 * octal, in its short forms; IPv6 compressed or expanded, in either case, with leading zeros or an
 * embedded dotted IPv4, with a zone id; every IPv6 form that carries an IPv4 address (mapped,
 * translated, compatible, NAT64, 6to4, Teredo); bare or as a URL's bracketed host.
 *
 * A failure prints fast-check's seed and path: replay it with FUZZ_SEED=<seed> FUZZ_PATH=<path>;
 * FUZZ_SCALE=10 runs ten times as many cases.
 */
import fc from 'fast-check';
import ipaddr from 'ipaddr.js';
import { REFUSED_IPV4_RANGES, REFUSED_IPV6_RANGES, TargetRefused, checkTarget, isPrivateAddress } from '../../subgraphs/order/webhooks/targets';
import { fuzzRuns } from './arbitraries';

/** The contract's refused ranges as the check holds them (its unit tests pin the list); matched here by arithmetic of the test's own. */
const REFUSED_IPV4 = REFUSED_IPV4_RANGES;
const REFUSED_IPV6 = REFUSED_IPV6_RANGES.map(([base, bits]) => [ipaddr.IPv6.parse(base).parts, bits] as const);

const toInt = (dotted: string) => dotted.split('.').reduce((value, part) => value * 256 + Number(part), 0);
const dottedOf = (value: number) => [value >>> 24, (value >>> 16) & 255, (value >>> 8) & 255, value & 255].join('.');
const refusedIpv4 = (value: number) => REFUSED_IPV4.some(([base, bits]) => Math.floor(value / 2 ** (32 - bits)) === Math.floor(toInt(base) / 2 ** (32 - bits)));

/** Whether the first `bits` bits of two addresses (as eight 16-bit parts) agree. */
function samePrefix(a: readonly number[], b: readonly number[], bits: number): boolean {
  for (let part = 0; part < 8 && bits > 0; part += 1, bits -= 16) {
    const keep = Math.min(16, bits);
    if (a[part] >> (16 - keep) !== b[part] >> (16 - keep)) return false;
  }
  return true;
}

/** An IPv6 address as eight parts, with the IPv4 addresses it carries by the contract's forms. */
interface Ipv6 {
  parts: readonly number[];
  carried: readonly number[];
}

const refusedIpv6 = (address: Ipv6) => REFUSED_IPV6.some(([base, bits]) => samePrefix(address.parts, base, bits)) || address.carried.some(refusedIpv4);

/** IPv4 addresses, half of them inside a refused range (edges included). */
const ipv4: fc.Arbitrary<number> = fc.oneof(
  fc.integer({ min: 0, max: 2 ** 32 - 1 }),
  fc.constantFrom(...REFUSED_IPV4).chain(([base, bits]) =>
    fc.oneof(
      fc.integer({ min: 0, max: 2 ** (32 - bits) - 1 }).map((offset) => toInt(base) + offset),
      fc.constantFrom(toInt(base), toInt(base) + 2 ** (32 - bits) - 1, toInt(base) - 1, toInt(base) + 2 ** (32 - bits)).filter((value) => value >= 0 && value < 2 ** 32),
    ),
  ),
);

const hex = (value: number) => value.toString(16);
const oct = (value: number) => `0${value.toString(8)}`;
const high = (value: number) => Math.floor(value / 65536);
const low = (value: number) => value % 65536;

/** Every way a URL's host may write an IPv4 address (the WHATWG URL parser reads them all, as inet_aton does). */
function ipv4Notations(value: number): fc.Arbitrary<string> {
  const bytes = dottedOf(value).split('.').map(Number);
  return fc.constantFrom(
    dottedOf(value),
    String(value),
    `0x${hex(value)}`,
    `0X${hex(value).toUpperCase()}`,
    bytes.map((b) => `0x${hex(b)}`).join('.'),
    bytes.map(oct).join('.'),
    `${bytes[0]}.${value % 2 ** 24}`,
    `${bytes[0]}.${bytes[1]}.${value % 65536}`,
    `0${value.toString(8)}`,
    `${bytes[0]}.0x${hex(bytes[1])}.${oct(bytes[2])}.${bytes[3]}`,
    `${dottedOf(value)}.`,
  );
}

/** The forms of the contract's list that carry an IPv4 address in an IPv6 one. */
function carrying(value: number): fc.Arbitrary<Ipv6> {
  const [h, l] = [high(value), low(value)];
  const part = fc.integer({ min: 0, max: 0xffff });
  return fc.oneof<fc.Arbitrary<Ipv6>[]>(
    fc.constant({ parts: [0, 0, 0, 0, 0, 0xffff, h, l], carried: [value] }),
    fc.constant({ parts: [0, 0, 0, 0, 0xffff, 0, h, l], carried: [value] }),
    fc.constant({ parts: [0, 0, 0, 0, 0, 0, h, l], carried: [value] }),
    fc.constant({ parts: [0x64, 0xff9b, 0, 0, 0, 0, h, l], carried: [value] }),
    fc.tuple(part, part, part, part, part).map(([a, b, c, d, e]) => ({ parts: [0x2002, h, l, a, b, c, d, e], carried: [value] })),
    fc.tuple(ipv4, part, part).map(([client, flags, port]) => ({
      parts: [0x2001, 0, h, l, flags, port, high(client) ^ 0xffff, low(client) ^ 0xffff],
      carried: [value, client],
    })),
  );
}

/** IPv6 addresses: inside a refused range, carrying an IPv4 address, or anywhere. */
const ipv6: fc.Arbitrary<Ipv6> = fc.oneof(
  ipv4.chain(carrying),
  fc.tuple(fc.constantFrom(...REFUSED_IPV6), fc.array(fc.integer({ min: 0, max: 0xffff }), { minLength: 8, maxLength: 8 })).map(([[base, bits], random]) => ({
    parts: base.map((part, i) => {
      const keep = Math.max(0, Math.min(16, bits - 16 * i));
      const mask = keep === 0 ? 0 : (0xffff << (16 - keep)) & 0xffff;
      return (part & mask) | (random[i] & ~mask & 0xffff);
    }),
    carried: [],
  })),
  fc
    .array(fc.integer({ min: 0, max: 0xffff }), { minLength: 8, maxLength: 8 })
    .map((parts) => ({ parts, carried: [] }))
    // Outside the prefixes that carry an IPv4 address, whose own generator says what they carry.
    .filter(
      ({ parts }) =>
        !(parts[0] === 0 && parts[1] === 0 && parts[2] === 0 && parts[3] === 0) &&
        parts[0] !== 0x2002 &&
        !(parts[0] === 0x2001 && parts[1] === 0) &&
        !(parts[0] === 0x64 && parts[1] === 0xff9b),
    ),
);

/** Every way to write an IPv6 address: expanded, compressed at each run of zeros, leading zeros, upper case, its last 32 bits dotted. */
function ipv6Notations(address: Ipv6): fc.Arbitrary<string> {
  const { parts } = address;
  const compressions = [parts.map(hex).join(':')];
  for (let start = 0; start < 8; start += 1) {
    for (let end = start + 1; end <= 8; end += 1) {
      if (parts.slice(start, end).every((p) => p === 0)) compressions.push(`${parts.slice(0, start).map(hex).join(':')}::${parts.slice(end).map(hex).join(':')}`);
    }
  }
  const dotted = `${parts.slice(0, 6).map(hex).join(':')}:${dottedOf(parts[6] * 65536 + parts[7])}`;
  return fc.oneof(
    fc.constantFrom(...compressions),
    fc.constant(parts.map((p) => hex(p).padStart(4, '0')).join(':')),
    fc.constant(parts.map((p) => hex(p).toUpperCase()).join(':')),
    fc.constant(dotted),
  );
}

const refused = async (url: string) => {
  try {
    await checkTarget(url, false);
    return false;
  } catch (error) {
    if (error instanceof TargetRefused) return true;
    throw error;
  }
};

const scheme = fc.constantFrom('http', 'https');
const port = fc.option(fc.integer({ min: 1, max: 65535 }), { nil: undefined }).map((p) => (p === undefined ? '' : `:${p}`));

describe('the webhook target check over addresses in every notation', () => {
  it('refuses an IPv4 address in any notation of a URL exactly when the contract refuses it', async () => {
    await fc.assert(
      fc.asyncProperty(
        ipv4.chain((value) => fc.tuple(fc.constant(value), ipv4Notations(value), scheme, port)),
        async ([value, host, protocol, portText]) => {
          expect(isPrivateAddress(dottedOf(value))).toBe(refusedIpv4(value));
          expect(await refused(`${protocol}://${host}${portText}/hook`)).toBe(refusedIpv4(value));
        },
      ),
      fuzzRuns(500),
    );
  });

  it('refuses an IPv6 address, bare or bracketed in a URL, exactly when the contract refuses it or an IPv4 address it carries', async () => {
    await fc.assert(
      fc.asyncProperty(
        ipv6.chain((address) => fc.tuple(fc.constant(address), ipv6Notations(address), scheme, port)),
        async ([address, written, protocol, portText]) => {
          const expected = refusedIpv6(address);
          expect(isPrivateAddress(written)).toBe(expected);
          expect(await refused(`${protocol}://[${written}]${portText}/hook`)).toBe(expected);
        },
      ),
      fuzzRuns(1000),
    );
  });

  it('refuses a zone id the URL parser cannot read, and judges a bare address with a zone id by its address', async () => {
    await fc.assert(
      fc.asyncProperty(ipv6, fc.stringMatching(/^[a-z0-9]{1,8}$/), async (address, zone) => {
        const written = address.parts.map(hex).join(':');
        expect(await refused(`http://[${written}%25${zone}]/hook`)).toBe(true);
        expect(isPrivateAddress(`${written}%${zone}`)).toBe(refusedIpv6(address));
      }),
      fuzzRuns(300),
    );
  });
});
