/**
 * The admin UI end to end: the built app (dist/admin) served by a real gateway in front of real
 * services, driven in headless Chromium. The scenario is made through the real purchase flow
 * (register, checkout, the Stripe simulator confirms, the order and analytics follow). Screenshots
 * of every page land in test-results/screenshots/.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Locator, Page } from 'playwright-core';
import request from 'supertest';
import { createLogger } from '../platform/logger';
import { ensureAdminBuilt, launchChromium, SCREENSHOTS_DIR, type Browser } from '../test/admin-ui';
import { startGateway, type RunningGateway } from '../test/gateway';
import { errorCodes, graphql, orderOf, paidPurchase, type Purchase } from '../test/graphql';
import { adminSession, registeredUser, startStack, waitFor, type Stack } from '../test/harness';
import { graphqlHalf } from './graphql';

jest.setTimeout(60_000);

type Buyer = Awaited<ReturnType<typeof registeredUser>>;
type Dashboard = Record<'totalOrders' | 'paidOrders' | 'failedPayments' | 'totalRevenue' | 'averageOrderValue' | 'booksSold' | 'paymentSuccessRate', number>;

let stack: Stack;
let gateway: RunningGateway;
let browser: Browser;
let admin: Awaited<ReturnType<typeof adminSession>>;
let buyer: Buyer;
let purchase: Purchase;
let orderId: string;
let page: Page;
const pageProblems: string[] = [];

/** Evaluated in the page (this file is type-checked without the DOM library). */
const STORED_REFRESH_TOKEN = "sessionStorage.getItem('bookstore-admin.refresh-token')";

const today = () => new Date().toISOString().slice(0, 10);

async function screenshot(target: Page, name: string): Promise<void> {
  fs.mkdirSync(SCREENSHOTS_DIR, { recursive: true });
  await target.screenshot({ path: path.join(SCREENSHOTS_DIR, `${name}.png`), fullPage: true });
}

/** Polls a locator's text until it matches: the page renders after its GraphQL answer arrives. */
async function textOf(locator: Locator, expected: string | RegExp): Promise<string> {
  return waitFor(
    async () => {
      const text = (await locator.textContent({ timeout: 1000 })) ?? '';
      return (typeof expected === 'string' ? text.includes(expected) : expected.test(text)) ? text : undefined;
    },
    { what: `text ${String(expected)}`, timeoutMs: 15_000 },
  );
}

async function attribute(locator: Locator, name: string, changedFrom?: string): Promise<string> {
  return waitFor(
    async () => {
      const value = await locator.getAttribute(name, { timeout: 1000 });
      return value !== null && value !== changedFrom ? value : undefined;
    },
    { what: `attribute ${name}`, timeoutMs: 15_000 },
  );
}

async function signIn(target: Page, email: string, password: string): Promise<void> {
  await target.goto(`${gateway.url}/admin/`);
  await target.getByLabel('Email').fill(email);
  await target.getByLabel('Password').fill(password);
  await target.getByRole('button', { name: 'Sign in' }).click();
}

/**
 * Chromium logs every 4xx answer to a fetch as a console error; a test that provokes one on purpose
 * (a 409 the page shows) takes that one entry off the list the last test checks.
 */
async function expectFailedLoad(status: number): Promise<void> {
  const entry = await waitFor(() => pageProblems.find((problem) => problem.includes(`Failed to load resource: the server responded with a status of ${status}`)), {
    what: `the console entry of the ${status} answer`,
  });
  pageProblems.splice(pageProblems.indexOf(entry), 1);
}

function restAs(bearer: string, target: string) {
  return request(gateway.url).get(target).set('Authorization', bearer);
}

beforeAll(async () => {
  ensureAdminBuilt();
  stack = await startStack({ services: ['book', 'order', 'payment', 'analytics'] });
  gateway = await startGateway(stack.config, { mountGraphql: graphqlHalf({ config: stack.config, logger: createLogger(stack.config.logLevel) }) });
  admin = await adminSession(stack);
  browser = await launchChromium();
  // Script errors and console errors (a CSP violation, a failed asset) of every page, checked at the end.
  browser.context.on('page', (opened) => {
    opened.on('pageerror', (error) => pageProblems.push(`${opened.url()}: ${error.message}`));
    opened.on('console', (message) => {
      if (message.type() === 'error') pageProblems.push(`${opened.url()}: ${message.text()}`);
    });
  });
  page = await browser.context.newPage();
}, 180_000);

/** Register, check out two books, the simulator pays, the order is made and analytics counts it. */
async function realPurchase(): Promise<void> {
  buyer = await registeredUser(stack, { firstName: 'Grace', lastName: `Hopper${Date.now() % 100_000}` });
  purchase = await paidPurchase(stack, buyer.bearer, admin.bearer);
  orderId = await orderOf(stack, buyer.bearer, purchase.paymentId);
  await waitFor(
    async () => {
      const res = await restAs(admin.bearer, '/analytics/dashboard');
      return res.status === 200 && res.body.paidOrders === 1 && res.body.totalOrders === 1;
    },
    { what: 'analytics to count the purchase' },
  );
}

afterAll(async () => {
  await browser?.close();
  await gateway?.stop();
  await stack?.stop();
});

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
    await realPurchase();
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

  it('finds the buyer, shows their payment and order, and saves a profile edit with errors by field', async () => {
    await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Users' }).click();
    await textOf(page.getByTestId('users'), stack.admin.email);
    await screenshot(page, 'users');

    await page.getByLabel('Search by name or email').fill(buyer.lastName.toLowerCase());
    await page.getByRole('button', { name: 'Search' }).click();
    await textOf(page.getByText(/1 user matching/), buyer.lastName.toLowerCase());
    expect(await page.getByTestId('users').locator('tbody tr').count()).toBe(1);
    await page.getByRole('link', { name: `Grace ${buyer.lastName}` }).click();

    await textOf(page.getByRole('heading', { level: 1 }), `Grace ${buyer.lastName}`);
    const payment = page.locator(`[data-payment-id="${purchase.paymentId}"]`);
    await textOf(payment, '60.08 USD');
    await textOf(payment, 'SUCCESS');
    await textOf(payment, orderId.slice(0, 8));
    const order = page.locator(`[data-order-id="${orderId}"]`);
    await textOf(order, 'CONFIRMED');
    await textOf(order, `2 × ${purchase.books[0].title}`);

    await page.getByLabel('Phone number').fill('12');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await textOf(page.getByTestId('error-phoneNumber'), 'must be 10 to 15 digits');
    expect(await page.getByLabel('Phone number').getAttribute('aria-invalid')).toBe('true');

    await page.getByLabel('Phone number').fill('+14155550199');
    await page.getByLabel('Address').fill('2 Compiler Court, Arlington');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await textOf(page.getByRole('status').filter({ hasText: 'Saved.' }), 'Saved.');
    const profile = await request(stack.urls.user).get(`/api/user/${buyer.userId}`).set('Authorization', admin.bearer);
    expect(profile.status).toBe(200);
    expect(profile.body).toMatchObject({ phoneNumber: '+14155550199', address: '2 Compiler Court, Arlington' });
    await screenshot(page, 'user-detail');
  });

  it('deletes another user but never offers to delete the signed-in admin, whom the server protects too', async () => {
    const doomed = await registeredUser(stack, { firstName: 'Temporary', lastName: 'Reader' });
    await page.goto(`${gateway.url}/admin/users/${doomed.userId}`);
    await textOf(page.getByRole('heading', { level: 1 }), 'Temporary Reader');
    await page.getByRole('button', { name: 'Delete user' }).click();
    await page.getByRole('button', { name: 'Yes, delete' }).click();
    await textOf(page.getByRole('status').filter({ hasText: 'Deleted' }), `Deleted Temporary Reader (${doomed.email}).`);
    expect(page.url()).toBe(`${gateway.url}/admin/users`);
    const gone = await graphql(gateway.url, 'query ($id: ID!) { user(userId: $id) { userId } }', { bearer: admin.bearer, variables: { id: doomed.userId } });
    expect(errorCodes(gone.body)).toEqual(['NOT_FOUND']);

    await page.goto(`${gateway.url}/admin/users/${admin.userId}`);
    await textOf(page.getByRole('heading', { level: 1 }), 'Store Admin');
    expect(await page.getByRole('button', { name: 'Delete user' }).isDisabled()).toBe(true);
    await textOf(page.locator('#delete-self-hint'), 'your own account');
    const refused = await graphql(gateway.url, 'mutation ($id: ID!) { deleteUser(userId: $id) }', { bearer: admin.bearer, variables: { id: admin.userId } });
    expect(errorCodes(refused.body)).toEqual(['FORBIDDEN']);
  });

  it("lists another user's devices and ends all their sessions, whose tokens then stop working; never offered for the admin's own", async () => {
    const reader = await registeredUser(stack, { firstName: 'Signed', lastName: 'Everywhere' });
    const phone = await request(gateway.url)
      .post('/auth/login')
      .set('User-Agent', 'Mozilla/5.0 (Linux; Android 15) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Mobile Safari/537.36')
      .send({ email: reader.email, password: reader.password, deviceId: 'phone-9' });
    expect(phone.status).toBe(200);
    await page.goto(`${gateway.url}/admin/users/${reader.userId}`);
    await textOf(page.getByRole('heading', { level: 1 }), 'Signed Everywhere');
    const sessions = page.getByTestId('user-sessions');
    await textOf(sessions, 'Chrome on Android');
    await textOf(sessions, 'phone-9');
    await textOf(sessions, 'test-device');
    expect(await sessions.locator('tbody tr').count()).toBe(2);
    await screenshot(page, 'user-sessions');

    await page.getByRole('button', { name: 'End all sessions' }).click();
    await textOf(page.getByRole('status').filter({ hasText: 'Ended' }), 'Ended 2 sessions: Signed Everywhere is signed out everywhere.');
    await textOf(page.getByRole('region', { name: 'Sessions' }).getByTestId('empty'), 'Not signed in anywhere.');
    expect((await request(gateway.url).post('/auth/refresh').send({ refreshToken: phone.body.refreshToken })).status).toBe(401);
    await waitFor(async () => (await restAs(reader.bearer, `/api/user/${reader.userId}`)).status === 401, { what: "the user service to refuse the ended sessions' tokens" });

    await page.goto(`${gateway.url}/admin/users/${admin.userId}`);
    await textOf(page.getByRole('heading', { level: 1 }), 'Store Admin');
    await textOf(page.getByTestId('user-sessions'), 'admin-device');
    expect(await page.getByRole('button', { name: 'End all sessions' }).isDisabled()).toBe(true);
  });

  it('moves an order from CONFIRMED to PROCESSING, offering only the allowed statuses', async () => {
    await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Orders' }).click();
    const row = page.locator(`[data-order-id="${orderId}"]`);
    await textOf(row.getByTestId('order-status'), 'CONFIRMED');
    await textOf(row, buyer.email);
    const select = row.getByRole('combobox');
    expect(await select.locator('option').allTextContents()).toEqual(['Move to…', 'PROCESSING', 'CANCELLED']);
    await screenshot(page, 'orders');

    await select.selectOption('PROCESSING');
    await row.getByRole('button', { name: 'Apply' }).click();
    await textOf(row.getByTestId('order-status'), 'PROCESSING');
    await textOf(page.getByTestId('order-announcement'), `Order ${orderId.slice(0, 8)} is now PROCESSING.`);
    expect(await row.getByRole('combobox').locator('option').allTextContents()).toEqual(['Move to…', 'SHIPPED', 'CANCELLED']);

    const stored = await restAs(admin.bearer, `/api/orders/${orderId}`);
    expect(stored.status).toBe(200);
    expect(stored.body.status).toBe('PROCESSING');

    await page.getByLabel('Status', { exact: true }).selectOption('DELIVERED');
    await textOf(page.getByTestId('empty'), 'No DELIVERED orders.');
    expect(page.url()).toBe(`${gateway.url}/admin/orders?status=DELIVERED`);
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

  it('creates, edits and deletes a category, and shows the 409 while a book still uses one', async () => {
    const name = `Essays ${Date.now() % 100_000}`;
    await signIn(page, stack.admin.email, stack.admin.password);
    await textOf(page.getByTestId('signed-in-as'), stack.admin.email);
    await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Categories' }).click();
    await textOf(page.getByRole('heading', { level: 1 }), 'Categories');
    await page.getByRole('button', { name: 'Create' }).click();
    await textOf(page.getByTestId('error-name'), 'Category name is required');
    await expectFailedLoad(400);

    await page.getByLabel('Name (required)').fill(name);
    await page.getByLabel('Description').fill('Short prose on one subject.');
    await page.getByRole('button', { name: 'Create' }).click();
    const row = page.getByTestId('categories').locator('tr', { hasText: name });
    await textOf(row, 'Short prose on one subject.');

    await row.getByRole('button', { name: 'Edit' }).click();
    await page.getByLabel('Name (required)').fill(`${name} and Letters`);
    await page.getByRole('button', { name: 'Save' }).click();
    await textOf(page.getByTestId('categories'), `${name} and Letters`);
    const saved = (await request(gateway.url).get('/api/categories/')).body as { id: string; name: string }[];
    const category = saved.find((c) => c.name === `${name} and Letters`)!;
    expect(category).toBeDefined();

    // A book in the category: deleting it is refused with the server's message, and nothing is deleted.
    const book = await request(gateway.url).get(`/api/books/${purchase.books[0].id}`);
    const moved = { ...book.body, categoryId: category.id };
    expect((await request(gateway.url).put(`/api/books/update/${book.body.id}`).set('Authorization', admin.bearer).send(moved)).status).toBe(200);
    page.once('dialog', (dialog) => void dialog.accept());
    await page.getByTestId('categories').locator('tr', { hasText: category.name }).getByRole('button', { name: 'Delete' }).click();
    await textOf(page.getByTestId('catalogue-error'), `Category is still used by 1 book(s)`);
    await expectFailedLoad(409);
    expect((await request(gateway.url).get(`/api/categories/${category.id}`)).status).toBe(200);
    await screenshot(page, 'categories');

    expect((await request(gateway.url).put(`/api/books/update/${book.body.id}`).set('Authorization', admin.bearer).send(book.body)).status).toBe(200);
    page.once('dialog', (dialog) => void dialog.accept());
    await page.getByTestId('categories').locator('tr', { hasText: category.name }).getByRole('button', { name: 'Delete' }).click();
    await textOf(page.getByRole('status').filter({ hasText: 'Deleted' }), `Deleted ${category.name}.`);
    expect((await request(gateway.url).get(`/api/categories/${category.id}`)).status).toBe(404);
  });

  it('lists authors and publishers, and adds an author', async () => {
    await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Publishers' }).click();
    await page.getByTestId('publishers').waitFor();
    await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Authors' }).click();
    await page.getByTestId('authors').waitFor();
    const lastName = `Woolf${Date.now() % 100_000}`;
    await page.getByLabel('First name (required)').fill('Virginia');
    await page.getByLabel('Last name').fill(lastName);
    await page.getByLabel('Country').fill('United Kingdom');
    await page.getByRole('button', { name: 'Create' }).click();
    await textOf(page.getByTestId('authors'), `Virginia ${lastName}`);
    const authors = (await request(gateway.url).get('/api/authors/')).body as { firstName: string; lastName: string; country: string }[];
    expect(authors).toContainEqual(expect.objectContaining({ firstName: 'Virginia', lastName, country: 'United Kingdom' }));
  });

  it('shows the books with their stock, uploads a cover on a book, and refuses a file that is no image', async () => {
    await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Books' }).click();
    const row = page.getByTestId('books').locator('tr', { hasText: purchase.books[0].title });
    await textOf(row, 'not tracked');
    await row.getByRole('link', { name: purchase.books[0].title }).click();
    await textOf(page.getByTestId('book-stock'), 'not tracked');

    const png = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64');
    await page.getByLabel(/New cover/).setInputFiles({ name: 'notes.png', mimeType: 'image/png', buffer: Buffer.from('not an image at all') });
    await page.getByRole('button', { name: 'Upload' }).click();
    await textOf(page.getByTestId('cover-error'), 'Only JPEG, PNG, and WebP images are allowed');
    await expectFailedLoad(400);

    await page.getByLabel(/New cover/).setInputFiles({ name: 'cover.png', mimeType: 'image/png', buffer: png });
    await page.getByRole('button', { name: 'Upload' }).click();
    const src = await attribute(page.getByTestId('book-cover'), 'src');
    const served = await request(gateway.url).get(src);
    expect(served.status).toBe(200);
    expect(Buffer.from(served.body as Buffer).equals(png)).toBe(true);
    await screenshot(page, 'book-cover');
  });

  it('runs without a script error, a blocked resource or a console error', () => {
    expect(pageProblems).toEqual([]);
  });
});
