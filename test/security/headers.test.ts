/**
 * What every answer carries and what a failure may say (issue 18, finding 7, its header and 502
 * parts): `X-Content-Type-Options: nosniff` on every answer of the gateway and of each service's
 * own port, successes, errors and requests Node's parser refuses alike; and a payment provider
 * failure answered with the contract's fixed text, its own text only in the log.
 */
import { randomUUID } from 'node:crypto';
import { SERVICE_NAMES } from '../../platform/config';
import { createBook } from '../commerce';
import { adminSession, expectEnvelope, registeredUser } from '../harness';
import { captureLog, send, startSystem, type Answer, type System } from '../hostile';

const log = captureLog('info');
let system: System;

beforeAll(async () => {
  system = await startSystem({ logger: log.logger });
}, 60_000);
afterAll(async () => {
  await system?.stop();
});

const json = { 'Content-Type': 'application/json' };

/** Requests that reach every kind of answer: a route, the actuator, GraphQL, a 404, a 405, a bad body, a parser refusal. */
function requests(): { what: string; method: string; path: string; headers?: Record<string, string>; body?: string }[] {
  return [
    { what: 'health', method: 'GET', path: '/actuator/health' },
    { what: 'metrics', method: 'GET', path: '/actuator/prometheus' },
    { what: 'GraphQL', method: 'POST', path: '/graphql', headers: json, body: JSON.stringify({ query: '{ __typename }' }) },
    { what: 'unknown route', method: 'GET', path: '/nowhere' },
    { what: 'wrong method', method: 'DELETE', path: '/actuator/health' },
    { what: 'malformed JSON', method: 'POST', path: '/auth/login', headers: json, body: '{"email":' },
    { what: 'a header block over the limit', method: 'GET', path: '/actuator/health', headers: { 'X-Padding': 'x'.repeat(20_000) } },
  ];
}

function expectNoSniff(answer: Answer, where: string): void {
  expect([where, answer.headers['x-content-type-options']]).toEqual([where, 'nosniff']);
}

describe('X-Content-Type-Options: nosniff', () => {
  it('on every kind of answer of the gateway, proxied ones and the admin UI included', async () => {
    const extra = [
      { what: 'a proxied route', method: 'GET', path: '/api/books/?limit=1' },
      { what: 'the admin UI', method: 'GET', path: '/admin/' },
      { what: 'the REST contract', method: 'GET', path: '/openapi.json' },
    ];
    for (const request of [...requests(), ...extra]) {
      expectNoSniff(await send(system.url, request), `gateway: ${request.what}`);
    }
  });

  it.each(SERVICE_NAMES)("on every kind of answer of the %s service's own port", async (name) => {
    for (const request of requests()) {
      const answer = await send(system.stack.urls[name], request);
      expectNoSniff(answer, `${name}: ${request.what} (${answer.status})`);
    }
  });
});

describe('a payment provider failure', () => {
  it('is a 502 "The payment provider failed"; the provider\'s own text is logged, never answered', async () => {
    const admin = await adminSession(system.stack);
    const buyer = await registeredUser(system.stack);
    const book = await createBook(system.stack, admin.bearer, 'Provider Trouble', 9.99);
    system.stack.stripe?.injectFaults({ failNext: 10, status: 500 });
    let answer: Answer;
    try {
      answer = await send(system.url, {
        method: 'POST',
        path: '/api/payments/checkout',
        headers: { ...json, Authorization: buyer.bearer },
        body: JSON.stringify({ checkoutId: randomUUID(), items: [{ bookId: book.id, quantity: 1 }] }),
      });
    } finally {
      system.stack.stripe?.injectFaults({ failNext: 0 });
    }
    expectEnvelope(answer);
    expect([answer.status, (answer.json as { message: string }).message]).toEqual([502, 'The payment provider failed']);
    expect(answer.text).not.toMatch(/Simulated failure|HTTP 500|injected/);
    expect(log.lines.some((line) => line.includes('The payment provider failed') && line.includes('Simulated failure (HTTP 500)'))).toBe(true);
  });
});
