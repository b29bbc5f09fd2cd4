/**
 * The per-account login throttle under parallel logins (CONTRACT §2): an attempt is counted before
 * its password is checked, so of a burst of guesses at most 10 are judged and the rest answer 429;
 * the owner's own logins, however many at once, all get in. The throttle's windows and its 429
 * through the gateway are in test/security/sessions.test.ts.
 */
import request from 'supertest';
import { expectEnvelope, registeredUser, startStack, type Stack } from '../../test/harness';

const MAX_FAILURES = 10; // the contract's, and the default of LOGIN_THROTTLE_MAX_FAILURES
const WINDOW_SECONDS = 15 * 60;

let stack: Stack;
beforeAll(async () => {
  stack = await startStack();
});
afterAll(async () => {
  await stack?.stop();
});

const loginAs = (email: string, password: string, deviceId = 'd') => request(stack.urls.auth).post('/auth/login').send({ email, password, deviceId });

function expectThrottled(res: request.Response): void {
  expectEnvelope(res, 429, 'Too many failed logins for this account; try again later');
  expect(Number(res.headers['retry-after'])).toBeGreaterThanOrEqual(1);
  expect(Number(res.headers['retry-after'])).toBeLessThanOrEqual(WINDOW_SECONDS);
}

describe('the per-account login throttle', () => {
  it(`judges at most ${MAX_FAILURES} of 24 parallel wrong passwords for one account; the rest, and then the right password, answer 429 with Retry-After`, async () => {
    const user = await registeredUser(stack);
    const burst = await Promise.all(Array.from({ length: 24 }, (_, i) => loginAs(user.email, `Wrong-Password-${i}`)));

    const judged = burst.filter((res) => res.status === 401);
    const refused = burst.filter((res) => res.status === 429);
    expect(judged.length + refused.length).toBe(24);
    expect(judged.length).toBeLessThanOrEqual(MAX_FAILURES);
    expect(judged.length).toBeGreaterThan(0);
    judged.forEach((res) => expectEnvelope(res, 401, 'Invalid email or password.'));
    refused.forEach(expectThrottled);

    // Within the window the owner is slowed down too (a slow-down: the window ends).
    expectThrottled(await loginAs(user.email, user.password));
  });

  it('lets 10 parallel logins of one user with the right password all in, and a mistake after them is an ordinary 401', async () => {
    const user = await registeredUser(stack);
    const logins = await Promise.all(Array.from({ length: 10 }, (_, i) => loginAs(user.email, user.password, `device-${i}`)));
    expect(logins.map((res) => res.status)).toEqual(Array(10).fill(200));

    expectEnvelope(await loginAs(user.email, 'Wrong-Password-1'), 401, 'Invalid email or password.');
    expect((await loginAs(user.email, user.password)).status).toBe(200);
  });
});
