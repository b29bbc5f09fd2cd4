/**
 * Property-based fuzzing of every REST route through the gateway (issue 8, item 3), part one:
 * generated request bodies and ids in paths never get a 5xx, every error is the contract's
 * envelope, and the system is still healthy afterwards with nothing logged at error level.
 *
 * A failure prints fast-check's seed and path: replay it with FUZZ_SEED=<seed> FUZZ_PATH=<path>;
 * FUZZ_SCALE=10 runs ten times as many cases.
 */
import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { expectSaneRest, show } from '../hostile';
import { contentType, fuzzRuns, hostileBody, idSegment } from './arbitraries';
import { aroundFuzzTarget, authorization, bodyRoutes, caller, describeAftermath, idRoutes, type Caller, type FuzzTarget } from './target';

let target: FuzzTarget;
aroundFuzzTarget((started) => (target = started));

describe('generated request bodies through the gateway never get a 5xx, and every error is the envelope', () => {
  it.each(bodyRoutes(() => target).map((route) => [route.route, route] as const))(
    '%s',
    async (_name, route) => {
      await fc.assert(
        fc.asyncProperty(caller, contentType, fc.oneof(...route.templates().map(hostileBody)), async (who, type, body) => {
          const headers: Record<string, string> = { ...authorization(target, who), ...(type === undefined ? {} : { 'Content-Type': type }) };
          expectSaneRest(await target.request(route.method, route.path(), headers, body));
        }),
        fuzzRuns(
          150,
          (route.regressions?.() ?? []).map((body): [Caller, string | undefined, string] => ['admin', 'application/json', body]),
        ),
      );
    },
    60_000,
  );
});

const WELL_FORMED_UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

describe('generated ids in paths through the gateway never get a 5xx, every error is the envelope, a well-formed UUID is never a 400', () => {
  it.each(idRoutes(() => target).map((route) => [route.route, route] as const))(
    '%s',
    async (_name, route) => {
      const { buyer, other, admin, book, paymentId, orderId } = target;
      const ids = idSegment(route.destructive ? [randomUUID(), randomUUID()] : [buyer.userId, other.userId, admin.userId, book.id, paymentId, orderId]);
      await fc.assert(
        fc.asyncProperty(caller, ids, async (who, id) => {
          const body = route.body ? JSON.stringify(route.body()) : undefined;
          const headers = { ...authorization(target, who), ...(body ? { 'Content-Type': 'application/json' } : {}) };
          const answer = await target.request(route.method, route.path(id), headers, body);
          expectSaneRest(answer);
          if (WELL_FORMED_UUID.test(id) && (who === 'buyer' || who === 'admin')) expect(answer.status === 400 ? show(answer) : 'not a 400').toBe('not a 400');
        }),
        // Broken percent-encoding made the router's decodeParam throw a URIError: a 500.
        fuzzRuns<[Caller, string]>(120, [
          ['admin', '%ZZ'],
          ['buyer', '%E0%A4%A'],
        ]),
      );
    },
    60_000,
  );
});

describeAftermath(() => target);
