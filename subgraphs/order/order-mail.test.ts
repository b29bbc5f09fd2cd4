/**
 * The order e-mails against a real SMTP server in the test process: the confirmation with the
 * order's lines and total, the cancellation with its refund, the shipment with its tracking number,
 * a partial refund by lines or by amount (none for a cancel's refund); one e-mail per event however
 * often it is delivered, and none lost while the SMTP server is down.
 */
import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { MoreThanOrEqual } from 'typeorm';
import { ProcessedEvent, consumerGroupOf } from '../../platform/events/consumer';
import { TOPICS } from '../../platform/events/topics';
import { OutgoingMail } from '../../platform/mail/entities';
import type { LocalMailbox } from '../../platform/mail/local-mailbox';
import { paymentRefundSucceededEvent, paymentRefundedEvent, paymentSuccessEvent } from '../../test/event-fixtures';
import { adminSession, expectEnvelope, registeredUser, startStack, waitFor, type Stack } from '../../test/harness';
import { mailTo, mailsTo, startMailbox } from '../../test/mailbox';

let stack: Stack;
let mailbox: LocalMailbox;
let admin: Awaited<ReturnType<typeof adminSession>>;
let buyer: Awaited<ReturnType<typeof registeredUser>>;
beforeAll(async () => {
  const smtp = await startMailbox();
  mailbox = smtp.mailbox;
  stack = await startStack({ services: ['book', 'order'], env: smtp.env });
  admin = await adminSession(stack);
  buyer = await registeredUser(stack);
});
afterAll(async () => {
  await stack?.stop();
  await mailbox?.stop();
});

async function publish(topic: string, event: { paymentId: string; eventId: string }): Promise<void> {
  await stack.bus.publish([{ topic, key: event.paymentId, value: JSON.stringify(event) }]);
}

/** Publishes a payment-success for a fresh address and waits for its order; resolves with both. */
async function paidOrder() {
  const email = `buyer-${randomUUID().slice(0, 8)}@example.com`;
  const event = paymentSuccessEvent(buyer.userId, { email, firstName: 'Ada & <Co>' });
  await publish(TOPICS.paymentSuccess, event);
  const order = await waitFor(
    async () => {
      const res = await request(stack.urls.order).get(`/api/orders/payment/${event.paymentId}`).set('Authorization', buyer.bearer);
      return res.status === 200 ? (res.body as { orderId: string }) : undefined;
    },
    { what: 'the order of the payment' },
  );
  return { event, email, orderId: order.orderId, number: order.orderId.slice(0, 8).toUpperCase() };
}

const applied = (eventId: string) => stack.services.order!.db.manager.exists(ProcessedEvent, { where: { consumer: consumerGroupOf('order'), eventId } });
const recorded = (email: string) => stack.services.order!.db.manager.count(OutgoingMail, { where: { recipient: email } });
const setStatus = (orderId: string, query: string) => request(stack.urls.order).put(`/api/orders/${orderId}/status?${query}`).set('Authorization', admin.bearer);

describe('order e-mails', () => {
  it('confirms the order with its lines and total, the HTML escaped', async () => {
    const { email, number } = await paidOrder();
    const mail = await mailTo(mailbox, email, /is confirmed/);
    expect(mail.subject).toBe(`Your Bookstore order ${number} is confirmed`);
    expect(mail.text).toContain('Hello Ada & <Co>,');
    expect(mail.text).toContain('3 x Middlemarch at 19.99 USD: 59.97 USD');
    expect(mail.text).toContain('1 x Bookmark at 0.10 USD: 0.10 USD');
    expect(mail.text).toContain('Total paid: 60.07 USD');
    expect(mail.html).toContain('Hello Ada &amp; &lt;Co&gt;,');
    expect(mail.html.replace(/>\s+</g, '><')).toContain('<td>Middlemarch</td><td align="right">3</td><td align="right">19.99 USD</td><td align="right">59.97 USD</td>');
  });

  it('sends one confirmation when payment-success is delivered again, under its id or another', async () => {
    const { event, email } = await paidOrder();
    const again = { ...event, eventId: randomUUID() };
    await publish(TOPICS.paymentSuccess, event);
    await publish(TOPICS.paymentSuccess, again);
    await waitFor(() => applied(again.eventId), { what: 'the second delivery applied' });
    await mailTo(mailbox, email, /is confirmed/);
    expect(await recorded(email)).toBe(1);
    expect(mailsTo(mailbox, email)).toHaveLength(1);
  });

  it('tells of the cancellation and the refund once the payment is refunded, once per refund event', async () => {
    const { event, email, orderId, number } = await paidOrder();
    expect((await request(stack.urls.order).post(`/api/orders/${orderId}/cancel`).set('Authorization', buyer.bearer)).status).toBe(204);
    const refunded = paymentRefundedEvent(event);
    await publish(TOPICS.paymentRefunded, refunded);
    await publish(TOPICS.paymentRefunded, refunded);
    const mail = await mailTo(mailbox, email, /refunded/);
    expect(mail.subject).toBe(`Your Bookstore order ${number} is cancelled and refunded`);
    expect(mail.text).toContain(`your order ${number} is cancelled. We refunded 60.07 USD to the card you paid with`);
    expect(mail.text).toContain('3 x Middlemarch at 19.99 USD: 59.97 USD');
    await waitFor(() => applied(refunded.eventId), { what: 'the refund applied' });
    expect(await recorded(email)).toBe(2);
    expect(mailsTo(mailbox, email, /refunded/)).toHaveLength(1);
  });

  it('tells of the shipment with the tracking number the admin gave', async () => {
    const { email, orderId, number } = await paidOrder();
    expect((await setStatus(orderId, 'status=PROCESSING')).status).toBe(200);
    expectEnvelope(await setStatus(orderId, 'status=DELIVERED&trackingNumber=1Z999'), 400);
    expect((await setStatus(orderId, 'status=SHIPPED&trackingNumber=1Z999AA10123456784')).status).toBe(200);
    const mail = await mailTo(mailbox, email, /on its way/);
    expect(mail.subject).toBe(`Your Bookstore order ${number} is on its way`);
    expect(mail.text).toContain('Tracking number: 1Z999AA10123456784');
    expect(mail.html).toContain('Tracking number: <strong>1Z999AA10123456784</strong>');
  });

  it('refuses a tracking number that is not letters, digits, spaces or dashes', async () => {
    const { orderId } = await paidOrder();
    expect((await setStatus(orderId, 'status=PROCESSING')).status).toBe(200);
    const res = await setStatus(orderId, `status=SHIPPED&trackingNumber=${encodeURIComponent('<script>')}`);
    expectEnvelope(res, 400);
    expect(res.body.validationErrors).toEqual(['trackingNumber: must be 1 to 64 letters, digits, spaces or dashes']);
  });

  it('keeps the e-mails while the SMTP server is down and delivers each once when it is back', async () => {
    await mailbox.stop();
    const orders = [await paidOrder(), await paidOrder()];
    const tried = (email: string) => stack.services.order!.db.manager.exists(OutgoingMail, { where: { recipient: email, status: 'PENDING', attempts: MoreThanOrEqual(1) } });
    for (const order of orders) await waitFor(() => tried(order.email), { what: `the confirmation to ${order.email} tried while the server is down` });
    await mailbox.start();
    for (const order of orders) await mailTo(mailbox, order.email, /is confirmed/);
    for (const order of orders) expect(mailsTo(mailbox, order.email)).toHaveLength(1);
  });

  it('tells of a refund of lines once, with the lines, the reason, the note and what is refunded so far', async () => {
    const { event, email, orderId, number } = await paidOrder();
    const items = [{ ...event.items[0], quantity: 2 }];
    const payment = { paymentId: event.paymentId, userId: event.userId, orderId, paymentAmount: event.amount };
    const refund = paymentRefundSucceededEvent({ ...payment, items, reason: 'DAMAGED', note: 'Water <damage>', restock: true });
    await publish(TOPICS.paymentRefundSucceeded, refund);
    await publish(TOPICS.paymentRefundSucceeded, refund);
    const mail = await mailTo(mailbox, email, /^Refund of/);
    expect(mail.subject).toBe(`Refund of 39.98 USD for order ${number}`);
    expect(mail.text).toContain(`we refunded 39.98 USD of your order ${number} to the card you paid with`);
    expect(mail.text).toContain('2 x Middlemarch at 19.99 USD: 39.98 USD');
    expect(mail.text).not.toContain('Bookmark');
    expect(mail.text).toContain('Reason: the books arrived damaged');
    expect(mail.text).toContain('Note: Water <damage>');
    expect(mail.text).toContain('Refunded so far: 39.98 USD of 60.07 USD');
    expect(mail.html).toContain('Note: Water &lt;damage&gt;');
    expect(mail.html.replace(/>\s+</g, '><')).toContain('<td>Middlemarch</td><td align="right">2</td><td align="right">19.99 USD</td><td align="right">39.98 USD</td>');

    const second = paymentRefundSucceededEvent({ ...payment, amount: 5, refundedAmount: 44.98, reason: 'OTHER' });
    await publish(TOPICS.paymentRefundSucceeded, second);
    await waitFor(() => applied(second.eventId), { what: 'the second refund applied' });
    await waitFor(() => mailsTo(mailbox, email, /^Refund of/).length === 2, { what: 'the second refund e-mail' });
    expect(mailsTo(mailbox, email, /^Refund of 39\.98/)).toHaveLength(1);
    expect(await recorded(email)).toBe(3);
  });

  it('tells of a refund of an amount without lines, and the note only when there is one', async () => {
    const { event, email, orderId, number } = await paidOrder();
    const refund = paymentRefundSucceededEvent({ paymentId: event.paymentId, userId: event.userId, orderId, paymentAmount: event.amount, amount: 7.5 });
    await publish(TOPICS.paymentRefundSucceeded, refund);
    const mail = await mailTo(mailbox, email, /^Refund of/);
    expect(mail.subject).toBe(`Refund of 7.50 USD for order ${number}`);
    expect(mail.text).toContain('Refunded amount: 7.50 USD');
    expect(mail.text).toContain('Reason: at your request');
    expect(mail.text).toContain('Refunded so far: 7.50 USD of 60.07 USD');
    expect(mail.text).not.toContain('Middlemarch');
    expect(mail.text).not.toContain('Note:');
    expect(mail.html).not.toContain('<table');
  });

  it("sends no refund e-mail for a cancel's refund nor for the refund that completes the payment's", async () => {
    const [cancelled, completed] = [await paidOrder(), await paidOrder()];
    expect((await request(stack.urls.order).post(`/api/orders/${cancelled.orderId}/cancel`).set('Authorization', buyer.bearer)).status).toBe(204);
    const refunds = [cancelled, completed].map(({ event, orderId }) =>
      paymentRefundSucceededEvent({ paymentId: event.paymentId, userId: event.userId, orderId, paymentAmount: event.amount, amount: event.amount, full: true }),
    );
    // A partial refund arriving for a cancelled order is the cancel's business too.
    const partial = paymentRefundSucceededEvent({ paymentId: cancelled.event.paymentId, userId: cancelled.event.userId, paymentAmount: 60.07, amount: 1 });
    for (const refund of [...refunds, partial]) await publish(TOPICS.paymentRefundSucceeded, refund);
    for (const refund of [...refunds, partial]) await waitFor(() => applied(refund.eventId), { what: 'the refund applied' });
    expect(await recorded(cancelled.email)).toBe(1);
    expect(await recorded(completed.email)).toBe(1);
  });
});
