/**
 * The admin UI end to end, the Webhooks page: an endpoint added (its secret shown once), a test
 * sent, the delivery log of real events with a retried one, and a resend. Headless Chromium over a
 * real gateway and services (test/admin-ui-suite.ts), and a real receiver in this process.
 */
import { randomUUID } from 'node:crypto';
import request from 'supertest';
import type { Page } from 'playwright-core';
import { TOPICS } from '../platform/events/topics';
import { adminUiSuite, screenshot, textOf } from '../test/admin-ui-suite';
import { paymentSuccessEvent } from '../test/event-fixtures';
import { registeredUser, waitFor, type Stack } from '../test/harness';
import { startReceiver, type Receiver } from '../test/webhook-receiver';

jest.setTimeout(90_000);

let stack: Stack, admin: { bearer: string }, page: Page, receiver: Receiver;
const { pageProblems, signIn } = adminUiSuite((ui) => ({ stack, admin, page } = ui), { env: { WEBHOOKS_ALLOW_PRIVATE_TARGETS: 'true', WEBHOOKS_RETRY_BASE_MS: '50' } });
beforeAll(async () => {
  receiver = await startReceiver();
});
afterAll(async () => receiver?.close());

function paymentFailedEvent(userId: string) {
  const { eventId: _e, type: _t, items: _i, email: _m, firstName: _f, phoneNumber: _p, ...common } = paymentSuccessEvent(userId);
  return { ...common, eventId: randomUUID(), type: 'PaymentFailedEvent', reason: 'card_declined' };
}

describe('the admin Webhooks page', () => {
  it('adds an endpoint, shows its secret once, sends a test, and shows the delivery log with a resend', async () => {
    receiver.script('/erp', [200]);
    await signIn(page, stack.admin.email, stack.admin.password);
    await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Webhooks' }).click();
    await page.getByLabel('URL (required)').fill(receiver.url('/erp'));
    await page.getByLabel('Description').fill('ERP order import');
    await page.getByRole('checkbox', { name: '*', exact: true }).check();
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    const secret = await textOf(page.getByTestId('webhook-secret'), /^whsec_[0-9a-f]{64}$/);

    const row = page.getByTestId('webhook-endpoints').locator('tbody tr', { hasText: receiver.url('/erp') });
    await row.getByRole('button', { name: 'Send test' }).click();
    await textOf(page.getByTestId('webhook-notice'), `Test sent to ${receiver.url('/erp')}: SUCCEEDED (HTTP 200).`);
    expect(receiver.received('/erp')[0].json.type).toBe('webhook.test');
    expect(await page.getByTestId('webhook-secret').count()).toBe(1);
    expect(secret).not.toBe('');

    // A purchase's events, the first attempt at each refused once: each is retried and then delivered.
    receiver.script('/erp', [503, 503, 200]);
    const buyer = await registeredUser(stack);
    const event = paymentSuccessEvent(buyer.userId);
    await stack.bus.publish([{ topic: TOPICS.paymentSuccess, key: event.paymentId, value: JSON.stringify(event) }]);
    const endpointId = String(await row.getAttribute('data-endpoint-id'));
    await waitFor(
      async () => {
        const res = await request(stack.urls.order).get(`/api/webhooks/endpoints/${endpointId}/deliveries`).set('Authorization', admin.bearer);
        return res.body.length === 3 && res.body.every((d: { status: string }) => d.status === 'SUCCEEDED');
      },
      { what: 'the three deliveries to succeed' },
    );

    // A failed payment while the receiver is down: 6 attempts, then FAILED.
    receiver.script('/erp', [503]);
    await stack.bus.publish([{ topic: TOPICS.paymentFailed, key: event.paymentId, value: JSON.stringify(paymentFailedEvent(buyer.userId)) }]);
    await waitFor(
      async () => {
        const res = await request(stack.urls.order).get(`/api/webhooks/endpoints/${endpointId}/deliveries?status=FAILED`).set('Authorization', admin.bearer);
        return res.body.length === 1;
      },
      { what: 'the payment.failed delivery to fail for good' },
    );
    receiver.script('/erp', [200]);

    await row.getByRole('link', { name: receiver.url('/erp') }).click();
    const log = page.getByTestId('webhook-deliveries');
    await textOf(log, /payment\.failed/);
    expect(await log.locator('tbody tr').count()).toBe(4);
    const types = await log.locator('tbody tr td:nth-child(1) code').allTextContents();
    expect([...types].sort()).toEqual(['order.created', 'payment.failed', 'payment.succeeded', 'webhook.test']);
    const statuses = await log.locator('[data-testid="delivery-status"] .badge').allTextContents();
    expect(statuses[types.indexOf('payment.failed')]).toBe('FAILED');
    expect(statuses.filter((status) => status === 'SUCCEEDED')).toHaveLength(3);
    await textOf(log.locator('tbody tr', { hasText: 'payment.failed' }).locator('td:nth-child(4)'), '6');

    const ping = log.locator('tbody tr', { hasText: 'webhook.test' });
    await ping.getByRole('button', { name: 'Resend' }).click();
    await textOf(page.getByTestId('webhook-notice'), /^Resent webhook\.test \(.+\): SUCCEEDED\.$/);
    await textOf(ping.locator('td:nth-child(4)'), '2');
    await screenshot(page, 'webhooks-deliveries');
    expect(pageProblems).toEqual([]);
  });
});
