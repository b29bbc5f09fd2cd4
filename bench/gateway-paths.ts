/**
 * The paths the gateway benchmark loads and the answer each must give: a book over REST, the
 * dashboard, a page of books, the best sellers, and orders with their books' sales (an entity join
 * across three subgraphs: order → book → analytics) over GraphQL, each checked against the data
 * (REST and GraphQL agree, every gateway the same, no `errors`) before it is measured.
 */
import { isDeepStrictEqual } from 'node:util';
import type { Services } from './peers';

export const QUERIES = {
  dashboard: '{ dashboard { totalOrders paidOrders failedPayments totalRevenue averageOrderValue booksSold paymentSuccessRate } }',
  books: '{ books(limit: 10) { id title price } }',
  topBooks: '{ bookReport { topBooks { bookId quantitySold book { id title price } } } }',
  orderBooks: '{ orders(limit: 10) { orderId totalAmount items { bookId quantity book { title price sales { quantitySold } } } } }',
};

/** The targets of the gateways run with in-flight deduplication off, each compared with the other. */
export const ALONE = { ours: 'ours, no dedup', Hive: 'Hive, no dedup' } as const;

function fail(what: string, detail: unknown): never {
  throw new Error(`${what}: ${typeof detail === 'string' ? detail : JSON.stringify(detail).slice(0, 500)}`);
}

async function graphqlAnswer(url: string, authorization: string, query: string): Promise<{ text: string; data: Record<string, unknown> }> {
  const res = await fetch(url, { method: 'POST', headers: { authorization, 'content-type': 'application/json' }, body: JSON.stringify({ query }) });
  const text = await res.text();
  const body = JSON.parse(text) as { data?: Record<string, unknown>; errors?: unknown };
  if (res.status !== 200 || body.errors || !body.data) fail(`${url} answered ${res.status}`, text);
  return { text, data: body.data };
}

export interface Target {
  target: string;
  url: string;
  method?: 'POST';
  headers: Record<string, string>;
  body?: string;
  expectBody: string;
}

export interface Endpoints {
  services: Services;
  ours: string;
  hive?: string;
  /** The same two gateways with in-flight deduplication off: each request its own subgraph calls. */
  oursAlone?: string;
  hiveAlone?: string;
  nginx?: string;
  /** The ladder's gateways (bench/ladder.ts) by their table names. */
  ladder?: Record<string, string | undefined>;
}

/** Every path's targets, each with the checked body every answer must equal. */
export async function paths(endpoints: Endpoints) {
  const { services, ours, hive, oursAlone, hiveAlone, nginx, ladder = {} } = endpoints;
  const { authorization } = services;
  const json = { authorization, 'content-type': 'application/json' };

  const catalogue = (await (await fetch(`${services.urls.book}/api/books?limit=10`)).json()) as { id: string; title: string; price: number | string }[];
  const route = `/api/books/${catalogue[0].id}`;
  const direct = await fetch(`${services.urls.book}${route}`);
  const bookBody = await direct.text();
  if (direct.status !== 200 || (JSON.parse(bookBody) as { id: string }).id !== catalogue[0].id) fail(`GET ${route}`, bookBody);
  for (const base of [ours, nginx].filter(Boolean)) {
    const via = await (await fetch(`${base}${route}`)).text();
    if (via !== bookBody) fail(`GET ${route} through ${base} differs`, via);
  }

  const restDashboardRes = await fetch(`${services.urls.analytics}/analytics/dashboard`, { headers: { authorization } });
  const restDashboard = await restDashboardRes.text();
  const restFigures = JSON.parse(restDashboard) as { totalOrders: number; paidOrders: number };
  if (restDashboardRes.status !== 200 || !(restFigures.totalOrders > 0)) fail('GET /analytics/dashboard', restDashboard);

  const graphql: Record<keyof typeof QUERIES, Target[]> = { dashboard: [], books: [], topBooks: [], orderBooks: [] };
  for (const [name, query] of Object.entries(QUERIES) as [keyof typeof QUERIES, string][]) {
    const answers: { target: string; url: string; text: string; data: Record<string, unknown> }[] = [];
    for (const [target, base] of [['ours', ours], ['Hive', hive], [ALONE.ours, oursAlone], [ALONE.Hive, hiveAlone], ...Object.entries(ladder)] as const) {
      if (!base) continue;
      answers.push({ target, url: `${base}/graphql`, ...(await graphqlAnswer(`${base}/graphql`, authorization, query)) });
    }
    const data = answers[0].data;
    for (const other of answers.slice(1)) if (!isDeepStrictEqual(other.data, data)) fail(`${name}: the gateways disagree`, [data, other.data]);
    if (name === 'dashboard') {
      const figures = data.dashboard as { totalOrders: number; paidOrders: number };
      if (figures.totalOrders !== restFigures.totalOrders || figures.paidOrders !== restFigures.paidOrders) fail('dashboard differs from REST', [figures, restFigures]);
    } else if (name === 'books') {
      const books = data.books as { id: string; title: string }[];
      if (books.length !== 10 || books.some((b, i) => b.id !== catalogue[i].id || b.title !== catalogue[i].title)) fail('books differ from REST', books);
    } else if (name === 'orderBooks') {
      const orders = data.orders as { items: { bookId: string; book: { title: string; sales: { quantitySold: number } } | null }[] }[];
      const titles = new Map(catalogue.map((b) => [b.id, b.title]));
      const lines = orders.flatMap((order) => order.items);
      if (
        orders.length !== 10 ||
        lines.some((line) => !line.book || !(line.book.sales.quantitySold > 0) || (titles.has(line.bookId) && titles.get(line.bookId) !== line.book.title))
      )
        fail('orders lack their books or their sales', orders);
    } else {
      const top = (data.bookReport as { topBooks: { bookId: string; book: { id: string; title: string } | null }[] }).topBooks;
      const titles = new Map(catalogue.map((b) => [b.id, b.title]));
      if (top.length !== 10 || top.some((t) => !t.book || t.book.id !== t.bookId || (titles.has(t.bookId) && titles.get(t.bookId) !== t.book.title)))
        fail('top books lack their catalogue books', top);
    }
    graphql[name] = answers.map((a) => ({ target: a.target, url: a.url, method: 'POST', headers: json, body: JSON.stringify({ query: QUERIES[name] }), expectBody: a.text }));
  }

  return {
    rest: [
      { target: 'direct', url: `${services.urls.book}${route}`, headers: {}, expectBody: bookBody },
      ...(nginx ? [{ target: 'nginx', url: `${nginx}${route}`, headers: {}, expectBody: bookBody }] : []),
      { target: 'ours', url: `${ours}${route}`, headers: {}, expectBody: bookBody },
    ] as Target[],
    restDashboard: [{ target: 'direct', url: `${services.urls.analytics}/analytics/dashboard`, headers: { authorization }, expectBody: restDashboard }] as Target[],
    ...graphql,
  };
}
