import request from 'supertest';
import { expectEnvelope, stackSuite, StackSuite } from '../../../test/harness';
import { startReceiver, type Receiver } from '../../../test/webhook-receiver';
import { WebhookEndpoint } from './entities';
import { newEndpoint } from './service';
import { signatureHeader, verifyWebhookSignature } from './signature';
import { isPrivateAddress } from './targets';

let receiver: Receiver;
const suite = stackSuite(new StackSuite(), { services: ['order'] }, async () => {
  receiver = await startReceiver();
});
afterAll(async () => receiver?.close());

const api = () => request(suite.stack.urls.order);

describe('addresses a webhook must not reach', () => {
  it.each([
    '127.0.0.1',
    '10.1.2.3',
    '172.16.0.1',
    '192.168.1.1',
    '169.254.169.254',
    '100.64.0.1',
    '0.0.0.0',
    '::1',
    '::',
    'fe80::1',
    'fd00::1',
    '::ffff:127.0.0.1',
    '::ffff:7f00:1',
  ])('refuses %s', (address) => expect(isPrivateAddress(address)).toBe(true));

  it.each(['93.184.216.34', '8.8.8.8', '2606:4700:4700::1111', '::ffff:8.8.8.8'])('allows %s', (address) => expect(isPrivateAddress(address)).toBe(false));
});

describe('a private target, when the configuration does not allow them', () => {
  it.each(['http://127.0.0.1:9/hook', 'http://[::1]/hook', 'http://169.254.169.254/latest/meta-data', 'http://10.0.0.5/', 'http://localhost:8080/hook'])(
    'is refused at creation with 400: %s',
    async (url) => {
      const res = await api()
        .post('/api/webhooks/endpoints')
        .set('Authorization', suite.admin.bearer)
        .send({ url, events: ['*'] });
      expectEnvelope(res, 400, /^Webhook URL refused: (address .+ is private|host localhost resolves to a private address \(.+\))$/);
    },
  );

  it('is refused at an update with 400, and the endpoint keeps its URL', async () => {
    const id = await storedEndpoint('https://hooks.example.com/bookstore');
    const res = await api().put(`/api/webhooks/endpoints/${id}`).set('Authorization', suite.admin.bearer).send({ url: 'http://192.168.0.10/hook' });
    expectEnvelope(res, 400, 'Webhook URL refused: address 192.168.0.10 is private');
    const read = await api().get(`/api/webhooks/endpoints/${id}`).set('Authorization', suite.admin.bearer);
    expect(read.body.url).toBe('https://hooks.example.com/bookstore');
  });

  it('is refused at delivery after DNS resolution, so a name that turned private is never reached', async () => {
    // As if localhost had resolved to a public address when the endpoint was saved (DNS rebinding).
    const id = await storedEndpoint(receiver.url('/rebound').replace('127.0.0.1', 'localhost'));
    const res = await api().post(`/api/webhooks/endpoints/${id}/test`).set('Authorization', suite.admin.bearer);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'FAILED', lastStatusCode: null, lastError: expect.stringMatching(/^host localhost resolves to a private address/) });
    expect(receiver.received('/rebound')).toEqual([]);
  });

  it('is refused at delivery for a private address literal too', async () => {
    const id = await storedEndpoint(receiver.url('/literal'));
    const res = await api().post(`/api/webhooks/endpoints/${id}/test`).set('Authorization', suite.admin.bearer);
    expect(res.body).toMatchObject({ status: 'FAILED', lastError: 'address 127.0.0.1 is private' });
    expect(receiver.received('/literal')).toEqual([]);
  });
});

describe('verifyWebhookSignature', () => {
  const body = '{"id":"e1","type":"order.created"}';
  const now = Date.UTC(2026, 10, 26, 12);
  const t = now / 1000;

  it('accepts a fresh signature and refuses one older than the tolerance', () => {
    expect(verifyWebhookSignature(body, signatureHeader(body, ['whsec_a'], t - 299), 'whsec_a', 300, now)).toBe(true);
    expect(verifyWebhookSignature(body, signatureHeader(body, ['whsec_a'], t - 301), 'whsec_a', 300, now)).toBe(false);
  });

  it('refuses a missing or malformed header', () => {
    expect(verifyWebhookSignature(body, undefined, 'whsec_a', 300, now)).toBe(false);
    expect(verifyWebhookSignature(body, `t=${t},v1=zz`, 'whsec_a', 300, now)).toBe(false);
    expect(verifyWebhookSignature(body, 'v1=00', 'whsec_a', 300, now)).toBe(false);
  });
});

/** An endpoint row written as the service would have written it once its URL had passed the check. */
async function storedEndpoint(url: string): Promise<string> {
  const row = newEndpoint({ url, events: ['book.stock_low'], description: null });
  await suite.stack.services.order?.db.transaction((manager) => manager.insert(WebhookEndpoint, row));
  return row.id;
}
