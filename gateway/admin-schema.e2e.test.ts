/**
 * The admin UI end to end, the Schema page (CONTRACT §13): the versions the registry recorded and
 * each coordinate's usage with its clients, deprecated ones still in use on top. Clients query
 * through the real gateway, which reports their usage to the analytics service; a version that
 * deprecates a field they use is published. Headless Chromium over real services
 * (test/admin-ui-suite.ts); the screenshot is docs/schema-page.png's source.
 */
import type { Page } from 'playwright-core';
import request from 'supertest';
import { INTERNAL_KEY_HEADER } from '../platform/auth';
import { composeSubgraphs, projectRoot, readSubgraphs } from '../schema/compose';
import { adminUiSuite, screenshot, textOf } from '../test/admin-ui-suite';
import type { RunningGateway } from '../test/gateway';
import { graphql } from '../test/graphql';
import { INTERNAL_KEY, waitFor, type Stack } from '../test/harness';

jest.setTimeout(90_000);

let stack: Stack, gateway: RunningGateway, admin: { bearer: string }, page: Page;
const { pageProblems, signIn } = adminUiSuite((ui) => ({ stack, gateway, admin, page } = ui), { env: { USAGE_REPORT_INTERVAL_MS: '100', SEED_DEMO_CATALOGUE: 'true' } });

const client = (name: string, version: string) => ({ 'apollographql-client-name': name, 'apollographql-client-version': version });

describe('the admin Schema page', () => {
  it('lists the versions, and each field with its usage and clients, deprecated ones still in use first', async () => {
    const asked = [
      ...Array.from({ length: 3 }, () => graphql(gateway.url, 'query ShopCatalogue { books(limit: 5) { id title isbn price } }', { headers: client('shop-web', '2.1.0') })),
      graphql(gateway.url, 'query ShopSearch($q: String!) { searchBooks(q: $q, limit: 3) { total hits { book { id title } } } }', {
        variables: { q: 'pride' },
        headers: client('shop-ios', '5.0.1'),
      }),
      graphql(gateway.url, 'query LegacyIsbn { books(limit: 2) { isbn } }', { headers: client('warehouse-sync', '0.9') }),
    ];
    for (const res of await Promise.all(asked)) expect(res.body.errors).toBeUndefined();

    // A version that deprecates `Book.isbn`, published while clients still read it.
    const subgraphs = readSubgraphs(projectRoot()).map((s) =>
      s.name === 'book' ? { ...s, sdl: s.sdl.replace('  isbn: String!\n', '  isbn: String! @deprecated(reason: "Use identifiers { isbn13 }")\n') } : s,
    );
    const composition = composeSubgraphs(subgraphs);
    if (!composition.ok) throw new Error(composition.errors.join('\n'));
    await waitFor(async () => (await request(gateway.url).get('/analytics/schema/versions').set('Authorization', admin.bearer)).body.length === 1, { what: 'the served version' });
    const published = await request(stack.urls.analytics)
      .post('/analytics/internal/schema/versions')
      .set(INTERNAL_KEY_HEADER, INTERNAL_KEY)
      .send({
        source: 'publish',
        supergraphSdl: composition.supergraphSdl,
        subgraphs: composition.subgraphs.map(({ name, url, sdl }) => ({ name, url, sdl })),
        commit: '3f9c2d71a8e4b6c05d1e2f3a4b5c6d7e8f901234',
        publishedBy: 'ada@bookstore.local',
      });
    expect(published.status).toBe(201);
    await waitFor(
      async () => {
        const usage = await request(gateway.url).get('/analytics/schema/usage?limit=1').set('Authorization', admin.bearer);
        return usage.body.fields[0]?.coordinate === 'Book.isbn' && usage.body.fields[0].requests === 4;
      },
      { what: 'the usage of Book.isbn in the store' },
    );

    await signIn(page, stack.admin.email, stack.admin.password);
    await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Schema' }).click();
    const versions = page.getByTestId('schema-versions');
    await textOf(versions, 'ada@bookstore.local');
    expect(await versions.locator('tbody tr').count()).toBe(2);
    await textOf(versions.locator('tbody tr').first(), /listed below/);
    await textOf(versions.locator('tbody tr').nth(1), /gateway@/);

    const deprecated = page.getByTestId('schema-deprecated-in-use');
    const isbn = deprecated.locator('tr[data-coordinate="Book.isbn"]');
    await textOf(isbn, 'Use identifiers { isbn13 }');
    expect(await deprecated.locator('tbody tr').count()).toBe(1);
    expect(await isbn.locator('td:nth-child(3)').textContent()).toBe('4');
    expect(await isbn.locator('.client-list li').allTextContents()).toEqual(['shop-web 2.1.0 ×3', 'warehouse-sync 0.9 ×1']);

    const fields = page.getByTestId('schema-fields');
    await textOf(fields.locator('tr[data-coordinate="Query.searchBooks"]'), 'shop-ios 5.0.1 ×1');
    await textOf(fields.locator('tr[data-coordinate="Query.books"]'), 'shop-web 2.1.0 ×3');
    await textOf(page.getByTestId('schema-usage-summary'), /coordinates were used since/);
    await screenshot(page, 'schema-page');

    await page.getByRole('button', { name: /Show the \d+ unused coordinates/ }).click();
    await textOf(page.getByTestId('schema-unused').locator('tr[data-coordinate="Mutation.deleteUser"]'), 'none');
    expect(pageProblems).toEqual([]);
  });
});
