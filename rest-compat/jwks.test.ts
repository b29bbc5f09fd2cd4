/**
 * How a service finds the auth service's keys: the JWKS is fetched once and cached; a token under a
 * kid the cache lacks (a key rotated in) fetches it again, at most once per 30 s, so forged kids
 * cannot make a service hammer the auth service; no JWKS at all is the auth service's outage (503).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { generateKeyPairSync, randomUUID, type KeyObject } from 'node:crypto';
import { publishedJwk } from '../subgraphs/auth/keys';
import { nowSeconds, signJwt } from '../test/jwt';
import { jwksVerifierFor, type JsonWebKeySet, type TokenVerifier } from '../platform/auth';

const ISSUER = 'bookstore-auth';
const AUDIENCE = 'bookstore';

let server: http.Server;
let published: JsonWebKeySet = { keys: [] };
let fetches = 0;
let baseUrl: string;

beforeAll(async () => {
  server = http.createServer((_req, res) => {
    fetches += 1;
    res.setHeader('Content-Type', 'application/json');
    res.end(JSON.stringify(published));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
});

function keyPair(): { privateKey: KeyObject; kid: string; jwk: ReturnType<typeof publishedJwk> } {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const jwk = publishedJwk(publicKey);
  return { privateKey, kid: jwk.kid, jwk };
}

function token(key: { privateKey: KeyObject; kid: string }, kid = key.kid): string {
  const now = nowSeconds();
  return signJwt(
    { sub: randomUUID(), role: 'USER', email: 'ada@example.com', sid: randomUUID(), iss: ISSUER, aud: AUDIENCE, iat: now, exp: now + 900, jti: randomUUID() },
    key.privateKey,
    { kid },
  );
}

function verifierAt(url: string): TokenVerifier {
  return jwksVerifierFor(
    { urls: { auth: url }, internalApiKey: 'not-used-without-a-bus', jwt: { issuer: ISSUER, audience: AUDIENCE, clockToleranceSec: 5, accessTokenTtlMs: 900_000 } },
    undefined,
  );
}

describe('the JWKS cache of a verifying service', () => {
  it('fetches once, refetches for a rotated-in kid, and not again for an unknown kid within 30 s', async () => {
    const first = keyPair();
    const second = keyPair();
    published = { keys: [first.jwk] };
    fetches = 0;
    const verifier = verifierAt(baseUrl);

    await expect(verifier.verify(token(first))).resolves.toMatchObject({ role: 'USER' });
    await expect(verifier.verify(token(first))).resolves.toMatchObject({ role: 'USER' });
    expect(fetches).toBe(1);

    published = { keys: [second.jwk, first.jwk] };
    await expect(verifier.verify(token(second))).resolves.toMatchObject({ role: 'USER' });
    expect(fetches).toBe(2);

    const stranger = keyPair();
    for (let i = 0; i < 5; i += 1) await expect(verifier.verify(token(stranger))).rejects.toMatchObject({ status: 401 });
    expect(fetches).toBe(2);
    await expect(verifier.verify(token(first))).resolves.toMatchObject({ role: 'USER' });
  });

  it('answers 503 when the JWKS cannot be had at all', async () => {
    const verifier = verifierAt('http://127.0.0.1:1');
    await expect(verifier.verify(token(keyPair()))).rejects.toMatchObject({ status: 503 });
  });

  it('asks again on a fresh connection when the auth service drops the connection before answering', async () => {
    const good = keyPair();
    // Drops the connection of its first request unanswered, as a server closing an idle kept-alive
    // connection just as a request arrives on it; answers every later one.
    let drops = 0;
    const dropsFirst = http.createServer((req, res) => {
      if (drops === 0) {
        drops += 1;
        req.socket.destroy();
        return;
      }
      res.setHeader('Content-Type', 'application/json');
      res.end(JSON.stringify({ keys: [good.jwk] }));
    });
    await new Promise<void>((resolve) => dropsFirst.listen(0, '127.0.0.1', resolve));
    try {
      const verifier = verifierAt(`http://127.0.0.1:${(dropsFirst.address() as AddressInfo).port}`);
      await expect(verifier.verify(token(good))).resolves.toMatchObject({ role: 'USER' });
      expect(drops).toBe(1);
    } finally {
      dropsFirst.closeAllConnections();
      await new Promise((resolve) => dropsFirst.close(resolve));
    }
  });

  it('skips published keys that are not RSA signing keys', async () => {
    const good = keyPair();
    published = { keys: [{ ...good.jwk, use: 'enc' } as never, { kty: 'EC', kid: 'ec', crv: 'P-256', x: 'x', y: 'y' } as never, good.jwk] };
    const verifier = verifierAt(baseUrl);
    await expect(verifier.verify(token(good))).resolves.toMatchObject({ role: 'USER' });
  });
});
