/**
 * The per-account login throttle under parallel logins (CONTRACT §2): it counts failures, not logins
 * in flight. Of a burst of guesses exactly 10 are judged and the rest answer 429; the owner's own
 * logins, however many at once, all get in, each waiting its turn behind the ones ahead; a right
 * password is refused only once wrong ones judged ahead of it have used the budget up. On MySQL the
 * same holds with the logins spread over two replicas of the service. The throttle's windows and its
 * 429 through the gateway are in test/security/sessions.test.ts.
 */
import request from 'supertest';
import { createLogger } from '../../platform/logger';
import { expectEnvelope, registeredUser, runConfig, startStack, type Stack } from '../../test/harness';
import { itIf } from '../../test/skip';
import { createAuthService } from './index';

const MAX_FAILURES = 10; // the contract's, and the default of LOGIN_THROTTLE_MAX_FAILURES
const WINDOW_SECONDS = 15 * 60;

let stack: Stack;
beforeAll(async () => {
  stack = await startStack();
});
afterAll(async () => {
  await stack?.stop();
});

const loginAt = (url: string, email: string, password: string, deviceId = 'd') => request(url).post('/auth/login').send({ email, password, deviceId });
const loginAs = (email: string, password: string, deviceId = 'd') => loginAt(stack.urls.auth, email, password, deviceId);
const statuses = (answers: request.Response[]) => answers.map((res) => res.status);
const count = (answers: request.Response[], status: number) => answers.filter((res) => res.status === status).length;

function expectThrottled(res: request.Response): void {
  expectEnvelope(res, 429, 'Too many failed logins for this account; try again later');
  expect(Number(res.headers['retry-after'])).toBeGreaterThanOrEqual(1);
  expect(Number(res.headers['retry-after'])).toBeLessThanOrEqual(WINDOW_SECONDS);
}

describe('the per-account login throttle', () => {
  it(`judges exactly ${MAX_FAILURES} of 24 parallel wrong passwords for one account; the rest, and then the right password, answer 429 with Retry-After`, async () => {
    const user = await registeredUser(stack);
    const burst = await Promise.all(Array.from({ length: 24 }, (_, i) => loginAs(user.email, `Wrong-Password-${i}`)));

    const judged = burst.filter((res) => res.status === 401);
    const refused = burst.filter((res) => res.status === 429);
    expect([judged.length, refused.length]).toEqual([MAX_FAILURES, 24 - MAX_FAILURES]);
    judged.forEach((res) => expectEnvelope(res, 401, 'Invalid email or password.'));
    refused.forEach(expectThrottled);

    // Within the window the owner is slowed down too (a slow-down: the window ends).
    expectThrottled(await loginAs(user.email, user.password));
  });

  it.each([12, 30])('lets %i parallel logins of one user with the right password all in, each on its own device', async (logins) => {
    const user = await registeredUser(stack);
    const answers = await Promise.all(Array.from({ length: logins }, (_, i) => loginAs(user.email, user.password, `device-${i}`)));
    expect(statuses(answers)).toEqual(Array(logins).fill(200));

    const sessions = await request(stack.urls.auth).get('/auth/sessions').set('Authorization', `Bearer ${answers[0].body.accessToken}`);
    expect(sessions.body).toHaveLength(logins + 1);
    expectEnvelope(await loginAs(user.email, 'Wrong-Password-1'), 401, 'Invalid email or password.');
  });

  it(`after ${MAX_FAILURES - 1} failures, lets 10 parallel right passwords all in: one is judged, and its success starts the count again`, async () => {
    const user = await registeredUser(stack);
    for (let i = 0; i < MAX_FAILURES - 1; i += 1) expect((await loginAs(user.email, `Wrong-Password-${i}`)).status).toBe(401);

    const answers = await Promise.all(Array.from({ length: 10 }, (_, i) => loginAs(user.email, user.password, `device-${i}`)));
    expect(statuses(answers)).toEqual(Array(10).fill(200));
    expectEnvelope(await loginAs(user.email, 'Wrong-Password-9'), 401, 'Invalid email or password.');
  });

  it(`in a burst of wrong and right passwords, refuses a right one only once ${MAX_FAILURES} wrong ones were judged`, async () => {
    for (let round = 0; round < 3; round += 1) {
      const user = await registeredUser(stack);
      const wrong = Array.from({ length: MAX_FAILURES }, (_, i) => loginAs(user.email, `Wrong-Password-${i}`));
      const right = Array.from({ length: MAX_FAILURES }, (_, i) => loginAs(user.email, user.password, `device-${i}`));
      const [wrongAnswers, rightAnswers] = await Promise.all([Promise.all(wrong), Promise.all(right)]);

      expect(statuses(wrongAnswers).filter((status) => status !== 401 && status !== 429)).toEqual([]);
      expect(statuses(rightAnswers).filter((status) => status !== 200 && status !== 429)).toEqual([]);
      const refused = count(wrongAnswers, 429) + count(rightAnswers, 429);
      // A 429 means the budget was used up by failures: every wrong password ahead of it was judged.
      if (refused > 0) expect({ round, judgedWrong: count(wrongAnswers, 401), refused }).toEqual({ round, judgedWrong: MAX_FAILURES, refused });
    }
  });

  itIf(runConfig.dbUrl !== undefined, 'set DB_URL to run')('holds across two replicas of the service on one database (MySQL)', async () => {
    const replica = await createAuthService({ config: stack.config, logger: createLogger('warn'), bus: stack.bus });
    try {
      const urls = [stack.urls.auth, `http://127.0.0.1:${await replica.start(0, '127.0.0.1')}`];
      const owner = await registeredUser(stack);
      const logins = await Promise.all(Array.from({ length: 20 }, (_, i) => loginAt(urls[i % 2], owner.email, owner.password, `device-${i}`)));
      expect(statuses(logins)).toEqual(Array(20).fill(200));

      const target = await registeredUser(stack);
      const guesses = await Promise.all(Array.from({ length: 24 }, (_, i) => loginAt(urls[i % 2], target.email, `Wrong-Password-${i}`)));
      expect([count(guesses, 401), count(guesses, 429)]).toEqual([MAX_FAILURES, 24 - MAX_FAILURES]);
      guesses.filter((res) => res.status === 429).forEach(expectThrottled);
    } finally {
      await replica.stop();
    }
  });
});
