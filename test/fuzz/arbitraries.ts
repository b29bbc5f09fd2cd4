/**
 * fast-check generators of hostile input: field values, JSON bodies (as text, so nesting and
 * malformed JSON are not limited by what JSON.stringify can write), path segments, query strings,
 * header values and GraphQL documents.
 */
import fc from 'fast-check';

/**
 * A property's parameters: its bounded run count, scaled by FUZZ_SCALE for a deeper local run;
 * FUZZ_SEED and FUZZ_PATH to replay a failure fast-check reported; and the inputs that once broke
 * the system, which run first every time so those bugs stay fixed.
 */
export function fuzzRuns<T>(numRuns: number, regressions: T[] = []): fc.Parameters<T> {
  const scale = Number(process.env.FUZZ_SCALE ?? 1);
  const seed = process.env.FUZZ_SEED;
  return {
    numRuns: Math.max(1, Math.round(numRuns * (Number.isFinite(scale) ? scale : 1))),
    examples: regressions,
    ...(seed ? { seed: Number(seed), path: process.env.FUZZ_PATH } : {}),
  };
}

/** Strings that have broken parsers, validators, LIKE patterns and loggers before. */
export const NOTORIOUS_STRINGS = [
  '',
  ' ',
  '   \t ',
  '\u0000',
  'a\u0000b',
  '\r\n',
  '\u2028\u2029',
  '\u202eevil',
  '\ufeff',
  '💥📚',
  'e\u0301',
  '\ud800',
  '%',
  '_',
  '!',
  '\\',
  '%_!\\',
  "' OR 1=1 --",
  "'; DROP TABLE books; --",
  '"; DROP TABLE user_profiles; --',
  '1; SELECT SLEEP(5)',
  '<script>alert(1)</script>',
  '{{7*7}}',
  '${jndi:ldap://127.0.0.1/x}',
  '../../etc/passwd',
  '__proto__',
  'constructor',
  'null',
  'undefined',
  'NaN',
  'Infinity',
  '-0',
  '1e308',
  'true',
  '0x1F',
  '2024-02-30',
  '0000-00-00',
  '9999-12-31',
  'admin@bookstore.local',
  'ADMIN',
];

/** Any string: unicode of every plane, control characters, and the notorious ones. */
export const hostileString: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
  { weight: 3, arbitrary: fc.constantFrom(...NOTORIOUS_STRINGS) },
  { weight: 1, arbitrary: fc.string({ unit: 'grapheme', maxLength: 60 }) },
  { weight: 1, arbitrary: fc.integer({ min: 101, max: 300_000 }).map((n) => 'x'.repeat(n)) },
);

/** Numbers at the edges of JSON, JavaScript and the columns behind them, written as JSON text. */
export const hostileNumberText: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    '0',
    '-0',
    '1e308',
    '-1e308',
    '1e309',
    '5e-324',
    '9007199254740993',
    '2147483648',
    '-2147483649',
    '0.1',
    '1.005',
    '19.999',
    '2000',
    '2001',
    '99999999.99',
    '100000000',
    '1E2',
    '-1',
    '1.0',
  ),
  fc.double({ noNaN: true, noDefaultInfinity: true }).map((n) => JSON.stringify(n)),
  fc.integer().map(String),
);

/** A nested array or object `depth` levels deep, written as JSON text. */
export const deepNestingText: fc.Arbitrary<string> = fc
  .tuple(fc.integer({ min: 20, max: 60_000 }), fc.boolean())
  .map(([depth, arrays]) => (arrays ? `${'['.repeat(depth)}${']'.repeat(depth)}` : `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`));

/** Any JSON value as text, from wrong types to deep nesting. */
export const hostileValueText: fc.Arbitrary<string> = fc.oneof(
  { weight: 4, arbitrary: hostileString.map((s) => JSON.stringify(s)) },
  { weight: 2, arbitrary: hostileNumberText },
  { weight: 1, arbitrary: fc.constantFrom('true', 'false', 'null', '[]', '{}', '""', '"NaN"', '"1e308"', '"-0"') },
  { weight: 2, arbitrary: fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(v)) },
  { weight: 1, arbitrary: fc.array(hostileString, { maxLength: 5 }).map((v) => JSON.stringify(v)) },
  { weight: 1, arbitrary: deepNestingText },
);

/** A JSON object written from `[key, valueText]` pairs (keys may repeat; JSON.parse keeps the last). */
export function objectText(entries: [string, string][]): string {
  return `{${entries.map(([key, value]) => `${JSON.stringify(key)}:${value}`).join(',')}}`;
}

/** Extra keys a client may slip in: mass assignment and prototype pollution attempts. */
const EXTRA_KEYS = ['role', 'userId', 'id', 'status', 'amount', 'price', 'createdAt', 'passwordHash', '__proto__', 'constructor', 'prototype', ''];

/**
 * A body shaped like `template` (a valid request) with some fields kept, some dropped, some given
 * hostile values, and maybe extra keys.
 */
export function mutatedObjectText(template: Record<string, unknown>): fc.Arbitrary<string> {
  const fields = Object.entries(template).map(([key, value]) =>
    fc.oneof(
      { weight: 3, arbitrary: fc.constant<[string, string][]>([[key, JSON.stringify(value)]]) },
      { weight: 1, arbitrary: fc.constant<[string, string][]>([]) },
      { weight: 3, arbitrary: hostileValueText.map((text): [string, string][] => [[key, text]]) },
    ),
  );
  const extras = fc.array(fc.tuple(fc.constantFrom(...EXTRA_KEYS), hostileValueText), { maxLength: 2 });
  return fc.tuple(fc.tuple(...fields), extras).map(([chosen, extra]) => objectText([...chosen.flat(), ...extra]));
}

/** Anything a client could put in a JSON request body. */
export function hostileBody(template: unknown): fc.Arbitrary<string> {
  const valid = JSON.stringify(template);
  const shaped =
    template !== null && typeof template === 'object' && !Array.isArray(template)
      ? mutatedObjectText(template as Record<string, unknown>)
      : fc.array(hostileValueText, { maxLength: 4 }).map((items) => `[${items.join(',')}]`);
  return fc.oneof(
    { weight: 6, arbitrary: shaped },
    { weight: 2, arbitrary: fc.jsonValue({ maxDepth: 4 }).map((v) => JSON.stringify(v)) },
    { weight: 1, arbitrary: hostileValueText },
    { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 80 }) },
    { weight: 1, arbitrary: fc.integer({ min: 0, max: Math.max(0, valid.length - 1) }).map((end) => valid.slice(0, end)) },
    { weight: 1, arbitrary: fc.constantFrom('', ' ', 'null', '{', '{"a":1,}', "{'a':1}", '\ufeff{}', '{"a":1}{"b":2}', '[1,2', 'NaN') },
  );
}

/** Content types clients send, right and wrong. */
export const contentType: fc.Arbitrary<string | undefined> = fc.oneof(
  { weight: 6, arbitrary: fc.constant('application/json') },
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      undefined,
      'application/json; charset=utf-8',
      'APPLICATION/JSON',
      'application/merge-patch+json',
      'application/json; charset=latin1',
      'application/json; charset=utf-16',
      'application/json; charset=nope',
      'text/plain',
      'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=x',
      'application/xml',
      '*/*',
      'application/json;;;',
      'garbage',
      '',
    ),
  },
);

/** Characters Node lets a client put in a header value. */
const headerChar = fc
  .integer({ min: 0x20, max: 0xff })
  .filter((c) => c !== 0x7f)
  .map((c) => String.fromCharCode(c));
export const headerValue: fc.Arbitrary<string> = fc.oneof(fc.string({ unit: headerChar, maxLength: 60 }), fc.constantFrom('', ' ', 'null', '%00', '\t', 'a'.repeat(8000)));

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/** `encodeURIComponent` that also takes lone surrogates (encoded as U+FFFD, as a browser would). */
export function encodeSegment(text: string): string {
  return encodeURIComponent(text.replace(LONE_SURROGATE, '\ufffd'));
}

/**
 * A path segment where an id goes: real and random UUIDs in odd spellings, traversal, broken or
 * double encoding, and any string percent-encoded.
 */
export function idSegment(realIds: readonly string[]): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 2, arbitrary: fc.constantFrom(...realIds) },
    { weight: 1, arbitrary: fc.constantFrom(...realIds).map((id) => id.toUpperCase()) },
    { weight: 1, arbitrary: fc.uuid() },
    { weight: 1, arbitrary: fc.uuid().map((id) => `{${id}}`) },
    { weight: 1, arbitrary: fc.uuid().map((id) => id.replace(/-/g, '')) },
    {
      weight: 3,
      arbitrary: fc.constantFrom(
        '..',
        '.',
        '%2e%2e',
        '..%2f..%2fauth%2flogin',
        '%2e%2e%2f%2e%2e%2fapi%2fuser%2fcreate',
        '..%5c..%5c',
        '%252e%252e',
        '%ZZ',
        '%',
        '%E0%A4%A',
        '%C0%AE',
        '%00',
        '%0a',
        '%20',
        ';',
        'x;jsessionid=1',
        'me',
        'search',
        'create',
        'batch',
        'webhook',
        'payment',
        'status',
        'null',
        'undefined',
        '0',
        '-1',
        '00000000-0000-0000-0000-000000000000',
        'ffffffff-ffff-ffff-ffff-ffffffffffff',
      ),
    },
    { weight: 3, arbitrary: hostileString.filter((s) => s.length < 3000).map(encodeSegment) },
    { weight: 1, arbitrary: fc.integer({ min: 100, max: 20_000 }).map((n) => 'a'.repeat(n)) },
  );
}

/** A query parameter value, encoded: dates, numbers, lists and any string. */
export const queryValue: fc.Arbitrary<string> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc
      .constantFrom(
        '2024-01-31',
        '2024-02-29',
        '2023-02-29',
        '2024-13-01',
        '0000-01-01',
        '0001-01-01',
        '9999-12-31',
        '10000-01-01',
        '+002024-01-01',
        '2024-1-1',
        '2024-01-31T00:00:00Z',
        '20240131',
        '1',
        '0',
        '-0',
        '-1',
        '1e3',
        '1.5',
        '0x10',
        ' 5',
        '5 ',
        'NaN',
        'Infinity',
        '99999999999999999999',
        '2147483648',
        'CONFIRMED',
        'SHIPPED',
        'shipped',
        'REFUNDED',
      )
      .map(encodeSegment),
  },
  { weight: 1, arbitrary: fc.date({ noInvalidDate: true }).map((d) => d.toISOString().slice(0, 10)) },
  { weight: 3, arbitrary: hostileString.filter((s) => s.length < 3000).map(encodeSegment) },
  { weight: 1, arbitrary: fc.constantFrom('%ZZ', '%', '%00', '%E0%A4%A', '+', '%2B', '&', '=', '%26') },
);

/** A query string over `names` (and strays): repeated, bracketed and empty parameters included. */
export function queryString(names: readonly string[]): fc.Arbitrary<string> {
  const name = fc.oneof(
    { weight: 6, arbitrary: fc.constantFrom(...names) },
    { weight: 1, arbitrary: fc.constantFrom(...names).map((n) => `${n}[]`) },
    { weight: 1, arbitrary: fc.constantFrom(...names).map((n) => `${n}[a]`) },
    { weight: 1, arbitrary: fc.constantFrom('__proto__', 'constructor[prototype][x]', '', 'x') },
  );
  const pair = fc.oneof({ weight: 8, arbitrary: fc.tuple(name, queryValue).map(([n, v]) => `${n}=${v}`) }, { weight: 1, arbitrary: name });
  return fc.array(pair, { maxLength: 4 }).map((pairs) => (pairs.length === 0 ? '' : `?${pairs.join('&')}`));
}

/** Random edits of a text: cuts, insertions of syntax characters, duplications. */
export function mutatedText(source: string, alphabet: string): fc.Arbitrary<string> {
  const edit = fc.tuple(fc.nat(), fc.nat({ max: 8 }), fc.string({ unit: fc.constantFrom(...alphabet), maxLength: 6 }));
  return fc.array(edit, { minLength: 1, maxLength: 4 }).map((edits) =>
    edits.reduce((text, [at, cut, insert]) => {
      const position = text.length === 0 ? 0 : at % text.length;
      return text.slice(0, position) + insert + text.slice(position + cut);
    }, source),
  );
}
