/**
 * The admin UI end to end, the order page's refunds: a refund of copies put back in stock, the
 * e-mails it caused on the Mail page, one of more than is left refused with the payment service's
 * message, and a cancelled order's refund without a form. Headless Chromium over a real gateway and
 * services (test/admin-ui-suite.ts), e-mail through a real SMTP server in this process.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { LocalMailbox } from '../platform/mail/local-mailbox';
import request from 'supertest';
import { adminUiSuite, screenshot, textOf } from '../test/admin-ui-suite';
import { checkout, createBook, paymentWhen } from '../test/commerce';
import { orderOf } from '../test/graphql';
import { registeredUser, waitFor, type Stack } from '../test/harness';

jest.setTimeout(90_000);

let stack: Stack, page: Page, gatewayUrl: string, adminBearer: string;
// The mailbox starts first (hooks run in the order they are declared), so the services send to it.
const mailDir = fs.mkdtempSync(path.join(os.tmpdir(), 'admin-refunds-mail-'));
const mailbox = new LocalMailbox(mailDir);
const mailEnv: Record<string, string> = {};
beforeAll(async () => {
  await mailbox.start(0);
  Object.assign(mailEnv, { SMTP_URL: mailbox.url, MAIL_RETRY_BASE_MS: '50', MAIL_RETRY_MAX_MS: '200' });
});
afterAll(async () => {
  await mailbox.stop();
  fs.rmSync(mailDir, { recursive: true, force: true });
});
const { pageProblems, signIn } = adminUiSuite(
  (ui) => {
    ({ stack, page } = ui);
    gatewayUrl = ui.gateway.url;
    adminBearer = ui.admin.bearer;
    // The Mail page reads the local mailbox of the embedded default; this stack's is the one above.
    stack.config.mail.localMailbox = { port: 0, dir: mailDir };
  },
  { env: mailEnv },
);

const stockOf = async (bookId: string) => (await request(stack.urls.book).get(`/api/books/${bookId}`)).body.stock as number;

/** 2 × Persuasion (12.00, 10 in stock) + 1 × Dune (9.99), paid; resolves with its order. */
async function paidOrder() {
  const buyer = await registeredUser(stack);
  const persuasion = await createBook(stack, adminBearer, 'Persuasion', 12, 10);
  const dune = await createBook(stack, adminBearer, 'Dune', 9.99);
  const { body } = await checkout(stack, buyer.bearer, [
    { bookId: persuasion.id, quantity: 2 },
    { bookId: dune.id, quantity: 1 },
  ]);
  await stack.stripe!.confirm(body.paymentIntentId);
  await paymentWhen(stack, buyer.bearer, body.paymentId, (p) => p.status === 'SUCCESS', 'the payment SUCCESS');
  return { buyer, persuasion, paymentId: body.paymentId as string, orderId: await orderOf(stack, buyer.bearer, body.paymentId) };
}

describe('refunds on the admin order page', () => {
  it('refunds copies put back in stock, shows the refund and what is left, and shows the refusal of more than is left', async () => {
    await signIn(page, stack.admin.email, stack.admin.password);
    const { persuasion, orderId } = await paidOrder();
    await waitFor(async () => (await stockOf(persuasion.id)) === 8, { what: 'the order to take its copies' });

    await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Orders' }).click();
    await page.locator(`tr[data-order-id="${orderId}"]`).getByRole('link').first().click();
    await textOf(page.getByTestId('refunded-total'), 'Refunded 0.00 of 33.99');

    await page.getByRole('button', { name: 'Refund', exact: true }).click();
    await textOf(page.getByTestId('refund-error'), 'Choose at least one copy to refund.');
    await page.getByLabel(/Persuasion/).fill('1');
    await page.getByLabel('Reason').selectOption('DAMAGED');
    await page.getByLabel('Note').fill('Cover torn in transit');
    await page.getByLabel('Put back in stock').check();
    await page.getByRole('button', { name: 'Refund', exact: true }).click();

    await textOf(page.getByTestId('refund-announcement'), 'Refund of 12.00: SUCCEEDED.');
    await textOf(page.getByTestId('refunded-total'), 'Refunded 12.00 of 33.99');
    const row = page.getByTestId('refunds').locator('tbody tr');
    await textOf(row, /Damaged.*Cover torn in transit.*1 × Persuasion.*put back in stock.*SUCCEEDED/);
    await textOf(page.getByTestId('refund-form'), 'up to 1');
    await waitFor(async () => (await stockOf(persuasion.id)) === 9, { what: 'the refunded copy back in stock' });
    await screenshot(page, 'admin-order-refund');

    // The customer's e-mails, as the admin reads them: the order's confirmation, then the refund's.
    const subject = await waitFor(() => mailbox.received.find((mail) => /^Refund of 12\.00 USD for order/.test(mail.subject))?.subject, { what: 'the refund e-mail' });
    await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Mail' }).click();
    const refundMail = page.getByTestId('mail-subject').filter({ hasText: subject });
    await textOf(refundMail, subject);
    await refundMail.click();
    await textOf(page.locator('details[open]'), /Damaged|damaged/);
    await textOf(
      page
        .getByTestId('mail-subject')
        .filter({ hasText: /is confirmed/ })
        .first(),
      /Your Bookstore order/,
    );
    await screenshot(page, 'admin-mail-refund');
    await page.goto(`${gatewayUrl}/admin/orders/${orderId}`);
    await textOf(page.getByTestId('refunded-total'), 'Refunded 12.00 of 33.99');

    await page.getByLabel('Amount', { exact: true }).check();
    await page.getByRole('textbox', { name: 'Amount' }).fill('22');
    await page.getByRole('button', { name: 'Refund', exact: true }).click();
    await textOf(page.getByTestId('refund-error'), 'Refund exceeds the amount left: 21.99');
    expect(await row.count()).toBe(1);
  });

  it('shows a cancelled order with its refund of what was left, and no form', async () => {
    const { buyer, orderId } = await paidOrder();
    expect((await request(stack.urls.order).post(`/api/orders/${orderId}/cancel`).set('Authorization', buyer.bearer)).status).toBe(204);
    await waitFor(async () => (await request(stack.urls.order).get(`/api/orders/${orderId}`).set('Authorization', adminBearer)).body.refundStatus === 'REFUNDED', {
      what: 'the cancel refunded',
    });

    await page.goto(`${gatewayUrl}/admin/orders/${orderId}`);
    await textOf(page.getByTestId('refunded-total'), 'Refunded 33.99 of 33.99');
    await textOf(page.getByTestId('refunds'), 'SUCCEEDED');
    expect(await page.getByTestId('refund-form').count()).toBe(0);
    expect(pageProblems).toEqual([]);
  });
});
