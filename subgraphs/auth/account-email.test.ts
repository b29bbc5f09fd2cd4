/**
 * The account e-mail flows (CONTRACT §11) against a real SMTP server in the test process: what
 * arrives, what its token does, what waits in the mail outbox meanwhile, and what a forgot-password
 * request does in the database whether an account has the address or not.
 */
import { randomUUID } from 'node:crypto';
import request from 'supertest';
import type { LocalMailbox } from '../../platform/mail/local-mailbox';
import { currentContext } from '../../platform/request-context';
import { adminSession, expectEnvelope, login, newUser, registeredUser, startStack, waitFor, type Stack } from '../../test/harness';
import { errorCodes, graphql } from '../../test/graphql';
import { claimsOf } from '../../test/jwt';
import { mailTo, mailsTo, startMailbox, tokenOf } from '../../test/mailbox';
import { AccountToken } from './entities';

const RESET = /Reset your Bookstore password/;
const VERIFY = /Confirm your e-mail address/;
const MAX_FORGOT = 3;

let stack: Stack;
let mailbox: LocalMailbox;
beforeAll(async () => {
  const smtp = await startMailbox();
  mailbox = smtp.mailbox;
  stack = await startStack({ env: { ...smtp.env, SHOP_URL: 'https://shop.example.com', LOGIN_THROTTLE_MAX_FAILURES: String(MAX_FORGOT) } });
});
afterAll(async () => {
  await stack?.stop();
  await mailbox?.stop();
});

const auth = () => request(stack.urls.auth);
const forgot = (email: string) => auth().post('/auth/password/forgot').send({ email });

/** Every column of the outbox rows to `email`, as the database holds them. */
const outboxRows = (email: string) => stack.auth.db.dataSource.query<Record<string, unknown>[]>('SELECT * FROM mail_outbox WHERE recipient = ?', [email]);

/** Every run of token characters long enough to be a secret, in any column of `rows`. */
function secretsIn(rows: Record<string, unknown>[]): string[] {
  const texts = rows.flatMap((row) => Object.values(row)).filter((value): value is string => typeof value === 'string');
  return [...new Set(texts.flatMap((text) => text.match(/[A-Za-z0-9_-]{16,}/g) ?? []))];
}

/** The SQL statements the auth database ran for one request, told apart by its X-Request-Id. */
async function statementsOf(send: (requestId: string) => Promise<request.Response>): Promise<{ status: number; statements: string[] }> {
  const requestId = `statements-${randomUUID()}`;
  const { logger } = stack.auth.db.dataSource;
  const logQuery = logger.logQuery.bind(logger);
  const statements: string[] = [];
  logger.logQuery = (query, parameters, queryRunner) => {
    if (currentContext()?.requestId === requestId) statements.push(query);
    return logQuery(query, parameters, queryRunner);
  };
  try {
    const res = await send(requestId);
    return { status: res.status, statements };
  } finally {
    logger.logQuery = logQuery;
  }
}

/** The token of the reset e-mail this request brings (its token is made when it is sent). */
async function resetToken(email: string): Promise<string> {
  const before = mailsTo(mailbox, email, RESET).length;
  const res = await forgot(email);
  expect(res.status).toBe(202);
  expect(res.text).toBe('');
  const mail = await waitFor(() => mailsTo(mailbox, email, RESET)[before], { what: `a new reset e-mail to ${email}` });
  return tokenOf(mail);
}

describe('password reset', () => {
  it('e-mails a link; the new password logs in, the old one no longer does, and every session ends', async () => {
    const user = await registeredUser(stack);
    const otherDevice = await login(stack.urls.auth, user.email, user.password, 'phone');

    expect((await forgot(user.email.toUpperCase())).status).toBe(202);
    const mail = await mailTo(mailbox, user.email, RESET);
    expect(mail.from).toBe('no-reply@bookstore.local');
    expect(mail.text).toMatch(/https:\/\/shop\.example\.com\/reset-password\?token=[A-Za-z0-9_-]{43}/);
    expect(mail.text).toContain('30 minutes');
    const token = tokenOf(mail);

    const reset = await auth().post('/auth/password/reset').send({ token, password: 'BrandNew456' });
    expect(reset.status).toBe(204);
    expect(reset.headers['cache-control']).toBe('no-store');

    await login(stack.urls.auth, user.email, 'BrandNew456');
    expect((await auth().post('/auth/login').send({ email: user.email, password: user.password, deviceId: 'd' })).status).toBe(401);
    expect((await auth().get('/auth/sessions').set('Authorization', user.bearer)).status).toBe(401);
    expect((await auth().post('/auth/refresh').send({ refreshToken: otherDevice.refreshToken })).status).toBe(401);
  });

  it('refuses a token used twice', async () => {
    const user = await registeredUser(stack);
    const token = await resetToken(user.email);
    expect((await auth().post('/auth/password/reset').send({ token, password: 'FirstReset1' })).status).toBe(204);
    const again = await auth().post('/auth/password/reset').send({ token, password: 'SecondReset2' });
    expectEnvelope(again, 400, 'Invalid or expired token');
    await login(stack.urls.auth, user.email, 'FirstReset1');
  });

  it('refuses an expired token, an unknown one, and one replaced by a newer request', async () => {
    const user = await registeredUser(stack);
    const first = await resetToken(user.email);
    const second = await resetToken(user.email);
    expectEnvelope(await auth().post('/auth/password/reset').send({ token: first, password: 'Replaced123' }), 400, 'Invalid or expired token');

    await stack.auth.db.manager.update(AccountToken, { userId: user.userId, purpose: 'PASSWORD_RESET' }, { expiresAt: new Date(Date.now() - 1000) });
    expectEnvelope(await auth().post('/auth/password/reset').send({ token: second, password: 'Expired123' }), 400, 'Invalid or expired token');
    expectEnvelope(await auth().post('/auth/password/reset').send({ token: 'not-a-token-we-sent', password: 'Unknown123' }), 400, 'Invalid or expired token');
    await login(stack.urls.auth, user.email, user.password);
  });

  it('holds the new password to the registration policy', async () => {
    const user = await registeredUser(stack);
    const token = await resetToken(user.email);
    const res = await auth().post('/auth/password/reset').send({ token, password: 'lettersonly' });
    expectEnvelope(res, 400);
    expect(res.body.validationErrors).toEqual(['password: must contain at least one digit']);
    expect((await auth().post('/auth/password/reset').send({ token, password: 'Letters123' })).status).toBe(204);
  });

  it('answers 202 for an address no account has, and sends nothing', async () => {
    const unknown = newUser().email;
    const known = await registeredUser(stack);
    expect((await forgot(unknown)).status).toBe(202);
    await resetToken(known.email);
    expect(mailbox.received.filter((mail) => mail.to.includes(unknown))).toEqual([]);
  });

  it('answers 429 with Retry-After once one address asked too often, known or not', async () => {
    for (const email of [(await registeredUser(stack)).email, newUser().email]) {
      for (let i = 0; i < MAX_FORGOT; i += 1) expect((await forgot(email)).status).toBe(202);
      const refused = await forgot(email);
      expectEnvelope(refused, 429, 'Too many password reset requests for this address; try again later');
      expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    }
  });
});

describe('forgot-password, for an address an account has and for one none has', () => {
  it('runs the same statements on the request path, and leaves the e-mail and its token to the sender', async () => {
    const known = await registeredUser(stack);
    const unknown = newUser().email;
    const forgotAs = (email: string) => statementsOf((requestId) => forgot(email).set('X-Request-Id', requestId));
    const forKnown = await forgotAs(known.email);
    const forUnknown = await forgotAs(unknown);

    expect([forKnown.status, forUnknown.status]).toEqual([202, 202]);
    expect(forKnown.statements.length).toBeGreaterThan(0);
    expect(forUnknown.statements).toEqual(forKnown.statements);

    // Both requests were recorded alike; the sender found the account of one and sent it the link.
    await mailTo(mailbox, known.email, RESET);
    const settled = async (email: string) => (await outboxRows(email)).find((row) => row.template === 'password-reset' && row.status !== 'PENDING' && row.status !== 'SENDING');
    expect(await waitFor(() => settled(known.email), { what: 'the e-mail to the known address settled' })).toMatchObject({ status: 'SENT', template_data: null });
    expect(await waitFor(() => settled(unknown), { what: 'the e-mail to the unknown address settled' })).toMatchObject({ status: 'SKIPPED', template_data: null });
    expect(mailsTo(mailbox, unknown)).toEqual([]);
  });
});

describe('the mail outbox', () => {
  it('holds no token that would reset the password while a reset e-mail waits, and keeps nothing of the e-mail once it is sent', async () => {
    const user = await registeredUser(stack);
    await mailbox.stop();
    try {
      expect((await forgot(user.email)).status).toBe(202);
      // Tried with the SMTP server down, and waiting for the next try.
      await waitFor(async () => (await outboxRows(user.email)).find((row) => row.template === 'password-reset' && Number(row.attempts) >= 1 && row.status === 'PENDING'), {
        what: 'the reset e-mail tried and waiting',
      });
      const candidates = secretsIn(await outboxRows(user.email));
      expect(candidates.length).toBeGreaterThan(0);
      for (const token of candidates) {
        const res = await auth().post('/auth/password/reset').send({ token, password: 'Hijacked123' });
        expect({ token, status: res.status }).toEqual({ token, status: 400 });
      }
    } finally {
      await mailbox.start();
    }

    const mail = await mailTo(mailbox, user.email, RESET);
    const [row] = await waitFor(async () => (await outboxRows(user.email)).filter((each) => each.template === 'password-reset' && each.status === 'SENT'), {
      what: 'the reset e-mail marked sent',
      accept: (rows) => rows.length === 1,
    });
    expect(row).toMatchObject({ template_data: null, body_text: '', body_html: '', subject: 'Reset your Bookstore password' });
    expect(
      (
        await auth()
          .post('/auth/password/reset')
          .send({ token: tokenOf(mail), password: 'Recovered123' })
      ).status,
    ).toBe(204);
  });
});

describe('address verification', () => {
  it('e-mails a link at registration; using it marks the profile and the next access token verified', async () => {
    const user = await registeredUser(stack);
    const profile = () => request(stack.urls.user).get(`/api/user/${user.userId}`).set('Authorization', user.bearer);
    expect((await profile()).body.emailVerified).toBe(false);
    expect(claimsOf(user.tokens.accessToken).email_verified).toBe(false);

    const mail = await mailTo(mailbox, user.email, VERIFY);
    expect(mail.text).toMatch(/https:\/\/shop\.example\.com\/verify-email\?token=/);
    expect(mail.text).toContain('48 hours');
    const token = tokenOf(mail);

    expect((await auth().post('/auth/email/verify').send({ token })).status).toBe(204);
    await waitFor(async () => (await profile()).body.emailVerified === true, { what: 'the profile verified' });
    const tokens = await login(stack.urls.auth, user.email, user.password, 'after-verification');
    expect(claimsOf(tokens.accessToken).email_verified).toBe(true);

    expectEnvelope(await auth().post('/auth/email/verify').send({ token }), 400, 'Invalid or expired token');
  });

  it('counts a password reset through the e-mailed link as a verified address', async () => {
    const user = await registeredUser(stack);
    const token = await resetToken(user.email);
    expect((await auth().post('/auth/password/reset').send({ token, password: 'Verified123' })).status).toBe(204);
    const tokens = await login(stack.urls.auth, user.email, 'Verified123');
    expect(claimsOf(tokens.accessToken).email_verified).toBe(true);
  });

  it('refuses an unknown or blank token', async () => {
    expectEnvelope(await auth().post('/auth/email/verify').send({ token: 'unknown' }), 400, 'Invalid or expired token');
    expectEnvelope(await auth().post('/auth/email/verify').send({ token: '' }), 400);
  });
});

describe('the mailbox an admin reads (localMailbox)', () => {
  const MAILBOX = '{ localMailbox(limit: 5) { enabled location messages { subject } } }';

  it('is for ADMINs only, and says where e-mail goes when an SMTP server takes it', async () => {
    const user = await registeredUser(stack);
    const refused = await graphql(stack.urls.auth, MAILBOX, { bearer: user.bearer });
    expect(errorCodes(refused.body)).toEqual(['FORBIDDEN']);
    const admin = await adminSession(stack);
    const answer = await graphql(stack.urls.auth, MAILBOX, { bearer: admin.bearer });
    expect(answer.body).toEqual({ data: { localMailbox: { enabled: false, location: mailbox.url, messages: [] } } });
    const tooMany = await graphql(stack.urls.auth, '{ localMailbox(limit: 500) { enabled } }', { bearer: admin.bearer });
    expect(errorCodes(tooMany.body)).toEqual(['BAD_USER_INPUT']);
  });
});
