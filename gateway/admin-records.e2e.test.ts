/**
 * The admin UI end to end, the records an admin manages: the catalogue's categories, authors,
 * publishers, books and covers, the users with their profiles and sessions, and the orders' statuses.
 * The built app (dist/admin) is served by a real gateway in front of real services and driven in
 * headless Chromium (test/admin-ui-suite.ts), over a real purchase made first. Screenshots of every
 * page land in test-results/screenshots/.
 */
import type { Page } from 'playwright-core';
import request from 'supertest';
import { adminUiSuite, attribute, screenshot, textOf, type AdminUi, type Buyer } from '../test/admin-ui-suite';
import type { RunningGateway } from '../test/gateway';
import { errorCodes, graphql, type Purchase } from '../test/graphql';
import { checkout, createBook } from '../test/commerce';
import { registeredUser, waitFor, type Stack } from '../test/harness';

jest.setTimeout(60_000);

let stack: Stack, gateway: RunningGateway, admin: AdminUi['admin'], page: Page;
let buyer: Buyer, purchase: Purchase, orderId: string;
const { expectFailedLoad, pageProblems, realPurchase, restAs, signIn } = adminUiSuite((ui) => ({ stack, gateway, admin, page } = ui));

beforeAll(async () => {
  ({ buyer, purchase, orderId } = await realPurchase());
});

describe('the admin dashboard in Chromium', () => {
  // The catalogue first: its first test signs the admin in.
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

  it('shows a tracked book’s stock, the copies checkouts hold and what is left, and why an order was cancelled when its copies were gone', async () => {
    const book = await createBook(stack, admin.bearer, `Signed edition ${Date.now() % 100_000}`, 30, 5);
    const shopper = await registeredUser(stack);
    expect((await checkout(stack, shopper.bearer, [{ bookId: book.id, quantity: 2 }])).status).toBe(200);
    await page.goto(`${gateway.url}/admin/books/${book.id}`);
    await textOf(page.getByTestId('book-stock'), '5');
    await textOf(page.getByTestId('book-held'), '2');
    await textOf(page.getByTestId('book-available'), '3');
    await screenshot(page, 'book-stock-held');

    // A payment that succeeds for copies no longer there: checked out while the book was not tracked
    // (nothing held), then an admin starts tracking it with none in stock.
    const gone = await createBook(stack, admin.bearer, `Sold out ${Date.now() % 100_000}`, 30);
    const open = await checkout(stack, shopper.bearer, [{ bookId: gone.id, quantity: 1 }]);
    expect(open.status).toBe(200);
    const current = (await request(gateway.url).get(`/api/books/${gone.id}`)).body as Record<string, unknown>;
    expect(
      (
        await request(gateway.url)
          .put(`/api/books/update/${gone.id}`)
          .set('Authorization', admin.bearer)
          .send({ ...current, stock: 0 })
      ).status,
    ).toBe(200);
    await stack.stripe!.confirm(open.body.paymentIntentId);
    const order = await waitFor(
      async () => {
        const res = await restAs(admin.bearer, `/api/orders/payment/${open.body.paymentId}`);
        return res.status === 200 ? (res.body as { orderId: string }) : undefined;
      },
      { what: 'the order of the unfillable payment' },
    );
    await page.goto(`${gateway.url}/admin/orders/${order.orderId}`);
    await textOf(page.getByTestId('order-status'), 'CANCELLED');
    await textOf(page.getByTestId('order-cancellation-reason'), `Out of stock: ${gone.title} (0 left)`);
    await screenshot(page, 'order-out-of-stock');
  });

  it('shows where e-mail goes on the Mail page', async () => {
    await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Mail' }).click();
    await textOf(page.getByRole('heading', { level: 1 }), 'Mail');
    await textOf(page.getByTestId('empty'), 'No SMTP server is configured (SMTP_URL): e-mails wait in the services until one is.');
    expect(page.url()).toBe(`${gateway.url}/admin/mail`);
  });

  it('runs without a script error, a blocked resource or a console error', () => {
    expect(pageProblems).toEqual([]);
  });
});
