/**
 * The admin UI end to end, the books page's search: it goes through the full-text search (GraphQL
 * `searchBooks`), best match first, with the matching words marked. Headless Chromium over a real
 * gateway and services (test/admin-ui-suite.ts).
 */
import type { Page } from 'playwright-core';
import { adminUiSuite, screenshot, textOf } from '../test/admin-ui-suite';
import { createBook } from '../test/commerce';
import type { Stack } from '../test/harness';

jest.setTimeout(60_000);

let stack: Stack, admin: { bearer: string }, page: Page;
const { pageProblems, signIn } = adminUiSuite((ui) => ({ stack, admin, page } = ui));

describe('the admin books page', () => {
  it('searches with the full-text search: prefixes, a typo, best match first, the matches marked', async () => {
    const word = `Zyx${Date.now() % 1_000_000}`;
    const second = await createBook(stack, admin.bearer, `Lanterns of the ${word}walker`, 9);
    // The word twice: the better match on either engine's ranking.
    const first = await createBook(stack, admin.bearer, `${word}walker, ${word}walker`, 9);
    await signIn(page, stack.admin.email, stack.admin.password);
    await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Books' }).click();
    await page.getByLabel(/^Search by title/).fill(`lanterns ${word.toLowerCase()}walkr`);
    await page.getByRole('button', { name: 'Search' }).click();
    const table = page.getByTestId('books');
    const count = page.locator('p[aria-live="polite"]');
    await textOf(count, '1–1 of 1');
    await textOf(table, second.title);
    expect(await table.locator('tbody tr').count()).toBe(1);
    expect(await table.locator('tbody tr mark').allTextContents()).toEqual(['Lanterns', `${word}walker`]);

    await page.getByLabel(/^Search by title/).fill(word.slice(0, 6));
    await page.getByRole('button', { name: 'Search' }).click();
    await textOf(count, '1–2 of 2');
    expect(await table.locator('tbody tr a').allTextContents()).toEqual([first.title, second.title]);
    await screenshot(page, 'books-search');
    expect(pageProblems).toEqual([]);
  });
});
