/**
 * Entity references validated like REST ids (issue 18, finding 4): `_entities` sent to a service's
 * own port with a key that is an object, a number, not a UUID, or missing is the client's mistake,
 * BAD_USER_INPUT at that representation, and nothing is logged at error level. Every entity of
 * every subgraph is tried; a well-formed reference beside a bad one is still resolved.
 */
import { randomUUID } from 'node:crypto';
import type { ServiceName } from '../../platform/config';
import { createBook } from '../commerce';
import { graphql, type GraphqlError } from '../graphql';
import { adminSession, startStack, type Stack } from '../harness';
import { captureLog } from '../hostile';

const log = captureLog('info');
let stack: Stack;
let admin: Awaited<ReturnType<typeof adminSession>>;

beforeAll(async () => {
  stack = await startStack({ services: ['book', 'order', 'payment', 'analytics'], logger: log.logger });
  admin = await adminSession(stack);
}, 60_000);
afterAll(async () => {
  await stack?.stop();
});

/** Each service and the entities its subgraph declares, with their key field. */
const ENTITIES: [ServiceName, string, string][] = [
  ['user', 'User', 'userId'],
  ['book', 'Book', 'id'],
  ['order', 'Order', 'orderId'],
  ['order', 'User', 'userId'],
  ['payment', 'Payment', 'paymentId'],
  ['payment', 'User', 'userId'],
  ['analytics', 'Book', 'id'],
];

const BAD_KEYS: [string, unknown][] = [
  ['an object', {}],
  ['a number', 42],
  ['a string that is not a UUID', 'not-a-uuid'],
  ['missing', undefined],
];

const ENTITIES_QUERY = 'query ($representations: [_Any!]!) { _entities(representations: $representations) { __typename } }';

describe.each(ENTITIES)("_entities on the %s service's own port, for %s", (service, typename, key) => {
  it.each(BAD_KEYS)(`with ${key} %s: BAD_USER_INPUT, not an internal error`, async (_what, value) => {
    const errorsBefore = log.entriesAtLeast(50).length;
    const representation = value === undefined ? { __typename: typename } : { __typename: typename, [key]: value };
    const res = await graphql(stack.urls[service], ENTITIES_QUERY, { bearer: admin.bearer, variables: { representations: [representation] } });
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({ _entities: [null] });
    expect(res.body.errors).toEqual([
      expect.objectContaining({
        message: 'Validation failed for one or more fields',
        path: ['_entities', 0],
        extensions: expect.objectContaining({ code: 'BAD_USER_INPUT', validationErrors: [`representations[0].${key}: must be a UUID`] }),
      }),
    ]);
    expect(log.entriesAtLeast(50).slice(errorsBefore)).toEqual([]);
  });
});

describe('_entities with representations that name no entity', () => {
  it.each([
    ['an unknown type', { __typename: 'Invoice', id: randomUUID() }],
    ['no type', { id: randomUUID() }],
    ['not an object', 'Book'],
  ])('%s: BAD_USER_INPUT', async (_what, representation) => {
    const res = await graphql(stack.urls.book, ENTITIES_QUERY, { variables: { representations: [representation] } });
    expect((res.body.errors as GraphqlError[]).map((error) => error.extensions?.code)).toEqual(['BAD_USER_INPUT']);
  });
});

describe('a bad reference beside a good one', () => {
  it('only the bad one fails; the good one is resolved', async () => {
    const { id } = await createBook(stack, admin.bearer, 'Referenced', 12.5);
    const res = await graphql(stack.urls.book, 'query ($r: [_Any!]!) { _entities(representations: $r) { ... on Book { id title } } }', {
      variables: {
        r: [
          { __typename: 'Book', id: 42 },
          { __typename: 'Book', id: id.toUpperCase() },
        ],
      },
    });
    expect(res.body.data).toEqual({ _entities: [null, { id, title: 'Referenced' }] });
    expect((res.body.errors as GraphqlError[]).map((error) => [error.path, error.extensions?.code])).toEqual([[['_entities', 0], 'BAD_USER_INPUT']]);
  });
});
