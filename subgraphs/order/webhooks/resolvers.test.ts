import { registeredUser, StackSuite, stackSuite } from '../../../test/harness';
import { errorCodes, graphql } from '../../../test/graphql';
import { startReceiver, type Receiver } from '../../../test/webhook-receiver';
import { verifyWebhookSignature } from './signature';

let receiver: Receiver;
const suite = stackSuite(new StackSuite(), { services: ['order'], env: { WEBHOOKS_ALLOW_PRIVATE_TARGETS: 'true' } }, async () => {
  receiver = await startReceiver();
});
afterAll(async () => receiver?.close());

const gql = (query: string, bearer?: string, variables?: Record<string, unknown>) => graphql(suite.stack.urls.order, query, { bearer, variables });

const ENDPOINT = 'id url events description enabled disabledReason failingSince';

describe('webhooks in the order subgraph', () => {
  it('creates an endpoint, sends a test ping, lists its delivery log and resends from it', async () => {
    const created = await gql(`mutation ($input: CreateWebhookEndpointInput!) { createWebhookEndpoint(input: $input) { secret endpoint { ${ENDPOINT} } } }`, suite.admin.bearer, {
      input: { url: receiver.url('/graphql-hook'), events: ['order.*'], description: 'From GraphQL' },
    });
    expect(created.body.errors).toBeUndefined();
    const { secret, endpoint } = created.body.data.createWebhookEndpoint;
    expect(endpoint).toMatchObject({ url: receiver.url('/graphql-hook'), events: ['order.*'], enabled: true, disabledReason: null });

    const test = await gql(`mutation ($id: ID!) { sendWebhookTest(endpointId: $id) { id type status attempts payload } }`, suite.admin.bearer, { id: endpoint.id });
    expect(test.body.data.sendWebhookTest).toMatchObject({ type: 'webhook.test', status: 'SUCCEEDED', attempts: 1 });
    const [received] = receiver.received('/graphql-hook');
    expect(JSON.parse(test.body.data.sendWebhookTest.payload)).toEqual(received.json);
    expect(verifyWebhookSignature(received.body, String(received.headers['bookstore-signature']), secret, 300)).toBe(true);

    const log = await gql(`query ($id: ID!) { webhookDeliveries(endpointId: $id) { id status attemptLog { number statusCode responseExcerpt } } }`, suite.admin.bearer, {
      id: endpoint.id,
    });
    expect(log.body.data.webhookDeliveries).toEqual([
      { id: test.body.data.sendWebhookTest.id, status: 'SUCCEEDED', attemptLog: [{ number: 1, statusCode: 200, responseExcerpt: 'answered 200' }] },
    ]);

    const resent = await gql(`mutation ($id: ID!) { resendWebhookDelivery(deliveryId: $id) { attempts status } }`, suite.admin.bearer, { id: test.body.data.sendWebhookTest.id });
    expect(resent.body.data.resendWebhookDelivery).toEqual({ attempts: 2, status: 'SUCCEEDED' });

    const disabled = await gql(`mutation ($id: ID!) { updateWebhookEndpoint(id: $id, input: { enabled: false }) { enabled description } }`, suite.admin.bearer, {
      id: endpoint.id,
    });
    expect(disabled.body.data.updateWebhookEndpoint).toEqual({ enabled: false, description: 'From GraphQL' });

    const rotated = await gql(`mutation ($id: ID!) { rotateWebhookSecret(id: $id, overlapSeconds: 0) { secret endpoint { id } } }`, suite.admin.bearer, { id: endpoint.id });
    expect(rotated.body.data.rotateWebhookSecret.secret).not.toBe(secret);

    const deleted = await gql(`mutation ($id: ID!) { deleteWebhookEndpoint(id: $id) }`, suite.admin.bearer, { id: endpoint.id });
    expect(deleted.body.data.deleteWebhookEndpoint).toBe(true);
    const gone = await gql(`query ($id: ID!) { webhookEndpoint(id: $id) { id } }`, suite.admin.bearer, { id: endpoint.id });
    expect(errorCodes(gone.body)).toEqual(['NOT_FOUND']);
  });

  it('lists what an endpoint may subscribe to: the event types, their wildcards and *', async () => {
    const res = await gql('{ webhookSubscriptions }', suite.admin.bearer);
    expect(res.body.data.webhookSubscriptions).toEqual([
      'order.created',
      'order.cancelled',
      'order.status_changed',
      'payment.succeeded',
      'payment.failed',
      'payment.refunded',
      'book.stock_low',
      'order.*',
      'payment.*',
      'book.*',
      '*',
    ]);
  });

  it('refuses an invalid subscription with the REST validation message', async () => {
    const res = await gql(`mutation { createWebhookEndpoint(input: { url: "${receiver.url('/x')}", events: ["order.shipped"] }) { secret } }`, suite.admin.bearer);
    expect(errorCodes(res.body)).toEqual(['BAD_USER_INPUT']);
  });

  it('answers FORBIDDEN to a customer, with no data', async () => {
    const customer = await registeredUser(suite.stack);
    const res = await gql('{ webhookEndpoints { id } }', customer.bearer);
    expect(errorCodes(res.body)).toEqual(['FORBIDDEN']);
    expect(errorCodes((await gql('{ webhookSubscriptions }', customer.bearer)).body)).toEqual(['FORBIDDEN']);
    expect(res.body.data).toBeNull();
  });
});
