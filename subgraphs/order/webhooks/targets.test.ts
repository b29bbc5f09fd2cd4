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

  it.each([
    ['NAT64 (64:ff9b::/96) of 127.0.0.1', '64:ff9b::7f00:1'],
    ['NAT64 of 10.0.0.1, written dotted', '64:ff9b::10.0.0.1'],
    ['NAT64 of 169.254.169.254', '64:ff9b::a9fe:a9fe'],
    ['the local-use NAT64 prefix 64:ff9b:1::/48', '64:ff9b:1:0:808:808::'],
    ['6to4 (2002::/16) of 127.0.0.1', '2002:7f00:1::1'],
    ['6to4 of 192.168.1.1', '2002:c0a8:101::'],
    ['Teredo (2001::/32) with client 127.0.0.1', '2001:0:4136:e378:8000:63bf:80ff:fffe'],
    ['Teredo with server 10.0.0.1', '2001:0:a00:1:8000:63bf:f7f7:f7f7'],
    ['IPv4-compatible (::/96) 127.0.0.1', '::127.0.0.1'],
    ['IPv4-compatible 192.168.0.1', '::c0a8:1'],
    ['IPv4-translated (::ffff:0:0:0/96) 127.0.0.1', '::ffff:0:7f00:1'],
    ['site-local (fec0::/10)', 'fec0::1'],
  ])('refuses %s: %s', (_form, address) => expect(isPrivateAddress(address)).toBe(true));

  it.each(['93.184.216.34', '8.8.8.8', '2606:4700:4700::1111', '::ffff:8.8.8.8', '64:ff9b::808:808', '2002:808:808::1', '2001:0:4136:e378:8000:63bf:f7f7:f7f7'])(
    'allows %s',
    (address) => expect(isPrivateAddress(address)).toBe(false),
  );
});

describe('a private target, when the configuration does not allow them', () => {
  it.each([
    'http://127.0.0.1:9/hook',
    'http://[::1]/hook',
    'http://169.254.169.254/latest/meta-data',
    'http://10.0.0.5/',
    'http://localhost:8080/hook',
    'http://[64:ff9b::169.254.169.254]/latest/meta-data',
    'http://[2002:a00:1::]/hook',
    'http://[::10.0.0.5]/',
    'http://[fec0::1]/',
  ])('is refused at creation with 400: %s', async (url) => {
    const res = await api()
      .post('/api/webhooks/endpoints')
      .set('Authorization', suite.admin.bearer)
      .send({ url, events: ['*'] });
    expectEnvelope(res, 400, /^Webhook URL refused: (address .+ is private|host localhost resolves to a private address \(.+\))$/);
  });

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

describe('the length of an endpoint URL', () => {
  const PUBLIC = 'https://93.184.216.34/';
  /** A URL of `length` characters as sent, its path `letter` repeated. */
  const urlOf = (length: number, letter: string) => `${PUBLIC}${letter.repeat(length - PUBLIC.length)}`;
  const TOO_LONG_STORED = 'url: must be shorter than or equal to 2048 characters once percent-encoded';
  const create = (url: string) =>
    api()
      .post('/api/webhooks/endpoints')
      .set('Authorization', suite.admin.bearer)
      .send({ url, events: ['*'] });

  it('refuses with 400 a URL of 2,048 characters whose non-ASCII path outgrows the column once percent-encoded', async () => {
    const res = await create(urlOf(2048, 'é'));
    expectEnvelope(res, 400, 'Validation failed for one or more fields');
    expect(res.body.validationErrors).toEqual([TOO_LONG_STORED]);
  });

  it('takes a URL that fills 2,048 characters as stored, and refuses the same growth at an update, keeping the URL', async () => {
    const filled = await create(urlOf(2048, 'a'));
    expect(filled.status).toBe(201);
    expect(filled.body.url).toHaveLength(2048);
    const res = await api()
      .put(`/api/webhooks/endpoints/${filled.body.id as string}`)
      .set('Authorization', suite.admin.bearer)
      .send({ url: urlOf(1000, '書') });
    expectEnvelope(res, 400, 'Validation failed for one or more fields');
    expect(res.body.validationErrors).toEqual([TOO_LONG_STORED]);
    const read = await api()
      .get(`/api/webhooks/endpoints/${filled.body.id as string}`)
      .set('Authorization', suite.admin.bearer);
    expect(read.body.url).toBe(filled.body.url);
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
