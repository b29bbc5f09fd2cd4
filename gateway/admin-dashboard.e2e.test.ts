/**
 * The admin UI end to end, its dashboard and the admin's session: the built app (dist/admin) served
 * by a real gateway in front of real services, driven in headless Chromium (test/admin-ui-suite.ts).
 * The figures come from the real purchase flow (register, checkout, the Stripe simulator confirms,
 * the order and analytics follow). Screenshots of every page land in test-results/screenshots/.
 */
import type { Page } from 'playwright-core';
import request from 'supertest';
import type { Browser } from '../test/admin-ui';
import { adminUiSuite, attribute, screenshot, STORED_REFRESH_TOKEN, textOf, today, type AdminUi, type Buyer, type Dashboard } from '../test/admin-ui-suite';
import type { RunningGateway } from '../test/gateway';
import { paidPurchase, type Purchase } from '../test/graphql';
import { registeredUser, waitFor, type Stack } from '../test/harness';

jest.setTimeout(60_000);

let stack: Stack, gateway: RunningGateway, browser: Browser, admin: AdminUi['admin'], page: Page;
let buyer: Buyer, purchase: Purchase, orderId: string;
const { dropStreams, pageProblems, realPurchase, restAs, signIn } = adminUiSuite((ui) => ({ stack, gateway, browser, admin, page } = ui));

describe('the admin dashboard in Chromium', () => {
  it('signs the admin in and shows empty states on a fresh install', async () => {
    await signIn(page, stack.admin.email, stack.admin.password);
    await textOf(page.getByTestId('signed-in-as'), stack.admin.email);
    await textOf(page.getByTestId('card-totalOrders'), '0');
    await textOf(page.locator('main'), 'No orders yet: the figures fill in as customers check out.');
    await textOf(page.getByTestId('reports'), 'No sales between');
    await textOf(page.locator('main'), 'No book has sold yet.');
    await textOf(page.getByTestId('payment-success'), 'No payment has been settled yet.');
    expect(JSON.parse(await attribute(page.getByTestId('chart-revenue-daily'), 'data-series'))).toEqual([]);
    await screenshot(page, 'dashboard-empty');

    await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Orders' }).click();
    await textOf(page.getByTestId('empty'), 'No orders yet');
  });

  it('shows the figures of /analytics/dashboard as cards after a real purchase', async () => {
    ({ buyer, purchase, orderId } = await realPurchase());
    // A new load of the page: the session comes back from this tab's refresh token.
    await page.goto(`${gateway.url}/admin/`);
    await textOf(page.getByTestId('signed-in-as'), stack.admin.email);

    const expected = (await restAs(admin.bearer, '/analytics/dashboard').expect(200)).body as Dashboard;
    const shown: Record<string, number> = {};
    for (const key of Object.keys(expected)) shown[key] = Number(await attribute(page.getByTestId(`card-${key}`), 'data-value'));
    expect(shown).toEqual(expected);
    expect(expected).toMatchObject({ totalOrders: 1, paidOrders: 1, totalRevenue: 60.08, booksSold: 3 });
    await textOf(page.getByTestId('card-totalRevenue'), '60.08');
    await textOf(page.getByTestId('card-paymentSuccessRate'), '100.00 %');
    await textOf(page.getByTestId('payment-success'), '1 paid, 0 failed');

    const top = page.getByTestId('top-books');
    await textOf(top, purchase.books[0].title);
    await textOf(top, '59.98');
    await textOf(page.getByTestId('chart-revenue-daily'), today());
    await screenshot(page, 'dashboard');
  });

  it('redraws the charts for another date range, empty when nothing sold, and shows the error of a reversed range', async () => {
    const daily = page.getByTestId('chart-revenue-daily');
    const before = await attribute(daily, 'data-series');
    const revenue = (await restAs(admin.bearer, '/analytics/revenue').expect(200)).body as { daily: { date: string; revenue: number; paidOrders: number }[] };
    expect(JSON.parse(before)).toEqual(revenue.daily.map((day) => ({ date: day.date, revenue: day.revenue.toFixed(2), paidOrders: day.paidOrders })));
    expect(JSON.parse(before)).toEqual([{ date: today(), revenue: '60.08', paidOrders: 1 }]);

    await page.getByLabel('From', { exact: true }).fill('2020-01-01');
    await page.getByLabel('To', { exact: true }).fill('2020-03-31');
    await page.getByRole('button', { name: 'Show' }).click();
    expect(JSON.parse(await attribute(daily, 'data-series', before))).toEqual([]);
    expect(JSON.parse(await attribute(page.getByTestId('chart-orders-daily'), 'data-series'))).toEqual([]);
    await textOf(page.getByTestId('reports'), 'No sales between 2020-01-01 and 2020-03-31.');
    expect(page.url()).toBe(`${gateway.url}/admin/?from=2020-01-01&to=2020-03-31`);

    await page.getByLabel('From', { exact: true }).fill('2020-03-31');
    await page.getByLabel('To', { exact: true }).fill('2020-01-01');
    await page.getByRole('button', { name: 'Show' }).click();
    await textOf(page.getByTestId('reports').getByRole('alert'), 'from (2020-03-31) must not be after to (2020-01-01)');

    await page.getByRole('button', { name: 'Last 30 days' }).click();
    expect(JSON.parse(await attribute(page.getByTestId('chart-revenue-daily'), 'data-series'))).toEqual([{ date: today(), revenue: '60.08', paidOrders: 1 }]);
    const orders = JSON.parse(await attribute(page.getByTestId('chart-orders-daily'), 'data-series'));
    expect(orders).toEqual([{ date: today(), ordersCreated: 1, paidOrders: 1 }]);
  });

  it('links a best seller to its book', async () => {
    await page.getByTestId('top-books').getByRole('link', { name: purchase.books[0].title }).click();
    await textOf(page.getByRole('heading', { level: 1 }), purchase.books[0].title);
    expect(page.url()).toBe(`${gateway.url}/admin/books/${purchase.books[0].id}`);
    await textOf(page.getByTestId('book-sales'), 'Copies sold2');
  });

  it('refreshes the session once on an UNAUTHENTICATED answer and repeats the request', async () => {
    let forged = 0;
    // The one forged answer: what the gateway says when an access token has expired.
    await page.route(`${gateway.url}/graphql`, async (route) => {
      if (forged > 0) return route.continue();
      forged += 1;
      await route.fulfill({
        status: 200,
        contentType: 'application/json',
        body: JSON.stringify({ errors: [{ message: 'Authentication is required to access this resource', extensions: { code: 'UNAUTHENTICATED' } }] }),
      });
    });
    try {
      const refreshed = page.waitForResponse((res) => res.url() === `${gateway.url}/auth/refresh` && res.status() === 200);
      await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Users' }).click();
      await refreshed;
      await textOf(page.getByTestId('users'), buyer.email);
      expect(forged).toBe(1);
    } finally {
      await page.unroute(`${gateway.url}/graphql`);
    }
  });

  it('keeps the session across a reload and signs out through /auth/logout', async () => {
    await page.goto(`${gateway.url}/admin/orders?status=DELIVERED`);
    // Reloading while the restoring refresh is in flight would present the rotated token again.
    await textOf(page.getByTestId('empty'), 'No DELIVERED orders.');
    await page.reload();
    await textOf(page.getByTestId('signed-in-as'), stack.admin.email);
    await textOf(page.getByTestId('empty'), 'No DELIVERED orders.');

    const refreshToken = await page.evaluate<string | null>(STORED_REFRESH_TOKEN);
    expect(refreshToken).toEqual(expect.any(String));
    const logout = page.waitForRequest((req) => req.url() === `${gateway.url}/auth/logout` && req.method() === 'POST');
    await page.getByRole('button', { name: 'Sign out' }).click();
    expect((await logout).postDataJSON()).toEqual({ refreshToken });
    await textOf(page.getByRole('status'), 'You have signed out.');
    await page.getByLabel('Email').waitFor();
    expect(await page.evaluate<string | null>(STORED_REFRESH_TOKEN)).toBeNull();
    await waitFor(async () => (await request(gateway.url).post('/auth/refresh').send({ refreshToken })).status === 401, { what: 'the refresh token to be revoked' });
  });

  it('refuses a USER account and signs it out again', async () => {
    const shopper = await browser.context.newPage();
    try {
      const logout = shopper.waitForRequest((req) => req.url() === `${gateway.url}/auth/logout`);
      await signIn(shopper, buyer.email, buyer.password);
      await textOf(shopper.getByTestId('refusal'), 'This dashboard is for administrators');
      await textOf(shopper.getByTestId('refusal'), buyer.email);
      const { refreshToken } = (await logout).postDataJSON() as { refreshToken: string };
      await waitFor(async () => (await request(gateway.url).post('/auth/refresh').send({ refreshToken })).status === 401, { what: 'the USER session to be ended' });
      expect(await shopper.getByTestId('signed-in-as').count()).toBe(0);
      expect(await shopper.evaluate<string | null>(STORED_REFRESH_TOKEN)).toBeNull();
      await screenshot(shopper, 'refusal');
    } finally {
      await shopper.close();
    }
  });

  it('fits the dashboard to a phone screen and refreshes the access token a minute before it expires', async () => {
    const phone = await browser.context.newPage();
    try {
      await phone.clock.install();
      await phone.setViewportSize({ width: 390, height: 844 });
      const login = phone.waitForResponse((res) => res.url() === `${gateway.url}/auth/login`);
      await signIn(phone, stack.admin.email, stack.admin.password);
      const { expiresIn } = (await (await login).json()) as { expiresIn: number };
      // The page's clock keeps running while the dashboard renders; what has passed since the sign-in
      // is taken off below. The refresh is due between 65 s and 55 s before expiry around this moment.
      const signedInAt = await phone.evaluate<number>('Date.now()');
      await textOf(phone.getByTestId('card-totalRevenue'), '60.08');
      await attribute(phone.getByTestId('chart-revenue-daily'), 'data-series');
      await phone.locator('.chart-canvas canvas').first().waitFor();
      expect(await phone.evaluate<number>('document.documentElement.scrollWidth')).toBeLessThanOrEqual(390);
      await screenshot(phone, 'dashboard-mobile');

      let refreshes = 0;
      phone.on('request', (req) => {
        if (req.url() === `${gateway.url}/auth/refresh`) refreshes += 1;
      });
      const sinceSignIn = (await phone.evaluate<number>('Date.now()')) - signedInAt;
      await phone.clock.runFor(expiresIn - 65_000 - sinceSignIn);
      await phone.evaluate('document.title');
      expect(refreshes).toBe(0);
      const refreshed = phone.waitForResponse((res) => res.url() === `${gateway.url}/auth/refresh`);
      await phone.clock.runFor(10_000);
      expect((await refreshed).status()).toBe(200);
      await phone.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Orders' }).click();
      await phone.locator(`[data-order-id="${orderId}"]`).waitFor();
    } finally {
      await phone.close();
    }
  });

  it('changes its cards and charts as someone else pays, without a reload, and shows a lost connection until it is back', async () => {
    // This tab signed out above.
    await signIn(page, stack.admin.email, stack.admin.password);
    await textOf(page.getByTestId('live-status'), 'Live');
    const paidCard = page.getByTestId('card-paidOrders');
    const paid = Number(await attribute(paidCard, 'data-value'));
    const series = await attribute(page.getByTestId('chart-revenue-daily'), 'data-series');
    // Gone if the page were loaded again.
    await page.evaluate('window.sameDocument = true');
    const paidNow = async (expected: number) =>
      waitFor(async () => Number(await paidCard.getAttribute('data-value', { timeout: 1000 })) === expected, { what: `${expected} paid orders on the card`, timeoutMs: 15_000 });

    const shopper = await registeredUser(stack, { firstName: 'Ada', lastName: 'Live' });
    await paidPurchase(stack, shopper.bearer, admin.bearer);
    await paidNow(paid + 1);
    expect(JSON.parse(await attribute(page.getByTestId('chart-revenue-daily'), 'data-series', series))).toEqual([
      { date: today(), revenue: expect.any(String), paidOrders: ((JSON.parse(series) as { paidOrders: number }[])[0]?.paidOrders ?? 0) + 1 },
    ]);
    expect(await page.evaluate('window.sameDocument')).toBe(true);
    await screenshot(page, 'dashboard-live');

    // The stream breaks and cannot come back for a while: the page says so, then recovers by itself.
    const refused: string[] = [];
    await page.route(`${gateway.url}/graphql`, async (route) => {
      if (!(route.request().headers().accept ?? '').includes('text/event-stream')) return route.continue();
      refused.push(route.request().url());
      return route.abort('connectionrefused');
    });
    dropStreams();
    await textOf(page.getByTestId('live-status'), 'Connection lost: reconnecting');
    await waitFor(() => refused.length > 0, { what: 'a reconnection attempt' });
    await screenshot(page, 'dashboard-reconnecting');
    await page.unroute(`${gateway.url}/graphql`);
    await textOf(page.getByTestId('live-status'), 'Live');
    await paidPurchase(stack, shopper.bearer, admin.bearer);
    await paidNow(paid + 2);
    expect(await page.evaluate('window.sameDocument')).toBe(true);
    // The refused attempts are logged by Chromium as failed loads; they were meant.
    for (let i = pageProblems.length - 1; i >= 0; i -= 1) if (pageProblems[i].includes('net::ERR_CONNECTION_REFUSED')) pageProblems.splice(i, 1);
  });

  it('runs without a script error, a blocked resource or a console error', () => {
    expect(pageProblems).toEqual([]);
  });
});
