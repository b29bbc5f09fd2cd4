/** `REQUIRE_VERIFIED_EMAIL=true`: checkout only for an account whose address is verified (CONTRACT §11). */
import request from 'supertest';
import type { LocalMailbox } from '../../platform/mail/local-mailbox';
import { checkout, createBook, type CatalogueBook } from '../../test/commerce';
import { adminSession, expectEnvelope, login, registeredUser, startStack, type Stack } from '../../test/harness';
import { mailTo, startMailbox, tokenOf } from '../../test/mailbox';

let stack: Stack;
let mailbox: LocalMailbox;
let book: CatalogueBook;
beforeAll(async () => {
  const smtp = await startMailbox();
  mailbox = smtp.mailbox;
  stack = await startStack({ services: ['book', 'payment'], env: { ...smtp.env, REQUIRE_VERIFIED_EMAIL: 'true' } });
  book = await createBook(stack, (await adminSession(stack)).bearer, 'Persuasion', 9.99);
});
afterAll(async () => {
  await stack?.stop();
  await mailbox?.stop();
});

describe('checkout with REQUIRE_VERIFIED_EMAIL=true', () => {
  it('answers 403 to an unverified account, and takes the order once the address is verified and the user logged in again', async () => {
    const user = await registeredUser(stack);
    const refused = await checkout(stack, user.bearer, [{ bookId: book.id, quantity: 1 }]);
    expectEnvelope(refused, 403, 'Verify your e-mail address before checking out: open the link we sent you, then log in again');

    const token = tokenOf(await mailTo(mailbox, user.email, /Confirm your e-mail address/));
    expect((await request(stack.urls.auth).post('/auth/email/verify').send({ token })).status).toBe(204);
    const tokens = await login(stack.urls.auth, user.email, user.password, 'verified-device');

    const accepted = await checkout(stack, `Bearer ${tokens.accessToken}`, [{ bookId: book.id, quantity: 1 }]);
    expect(accepted.status).toBe(200);
    expect(accepted.body).toMatchObject({ amount: 9.99, status: 'PAYMENT_PENDING' });
  });
});
