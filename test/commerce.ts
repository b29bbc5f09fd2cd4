/**
 * Helpers for tests of the purchase flow: catalogue books created through the book service's API,
 * checkouts, signed provider webhooks, and waiting for a payment or an order to reach a state.
 */
import { randomUUID } from 'node:crypto';
import request from 'supertest';
import type { ConsumedMessage, Subscription } from '../platform/events/bus';
import { signatureHeader } from '../simulators/stripe/simulator';
import { waitFor } from './wait';
import { WEBHOOK_SECRET, type Stack } from './stack';

let isbnCounter = Math.floor(Math.random() * 1_000_000);

/** A valid ISBN-13 (978 prefix, correct check digit), different at each call. */
export function nextIsbn13(): string {
  isbnCounter += 1;
  const body = `978${String(isbnCounter).padStart(9, '0')}`;
  const sum = [...body].reduce((acc, digit, i) => acc + Number(digit) * (i % 2 === 0 ? 1 : 3), 0);
  return `${body}${(10 - (sum % 10)) % 10}`;
}

export interface CatalogueBook {
  id: string;
  title: string;
  price: number;
}

/** One author, category and publisher per book service, created on first use, that test books point at. */
const references = new Map<string, Promise<{ authorId: string; categoryId: string; publisherId: string }>>();

/** An author, a category and a publisher for test books, created once per book service (any replica of it will do). */
export function catalogueReferences(stack: { urls: Pick<Stack['urls'], 'book'> }, adminBearer: string): Promise<{ authorId: string; categoryId: string; publisherId: string }> {
  let refs = references.get(stack.urls.book);
  if (!refs) {
    const create = async (path: string, body: Record<string, unknown>) => {
      const res = await request(stack.urls.book).post(path).set('Authorization', adminBearer).send(body);
      if (res.status !== 201) throw new Error(`${path} failed: ${res.status} ${JSON.stringify(res.body)}`);
      return res.body.id as string;
    };
    const tag = randomUUID().slice(0, 8);
    refs = (async () => ({
      authorId: await create('/api/authors/create', { firstName: 'Test', lastName: `Author ${tag}` }),
      categoryId: await create('/api/categories/create', { name: `Test category ${tag}` }),
      publisherId: await create('/api/publishers/create', { name: `Test publisher ${tag}` }),
    }))();
    references.set(stack.urls.book, refs);
  }
  return refs;
}

/** A book of the test catalogue; its stock is not tracked unless `stock` is given. */
export async function createBook(stack: Stack, adminBearer: string, title: string, price: number, stock?: number): Promise<CatalogueBook> {
  const { authorId, categoryId, publisherId } = await catalogueReferences(stack, adminBearer);
  const res = await request(stack.urls.book)
    .post('/api/books/create')
    .set('Authorization', adminBearer)
    .send({
      isbn: nextIsbn13(),
      title,
      authorIds: [authorId],
      categoryId,
      publisherId,
      description: 'A book for tests',
      price,
      language: 'en',
      publishedDate: '2001-01-01',
      ...(stock === undefined ? {} : { stock }),
    });
  if (res.status !== 201) throw new Error(`book not created: ${res.status} ${JSON.stringify(res.body)}`);
  return { id: res.body.id, title, price };
}

export function checkout(stack: Stack, bearer: string, items: { bookId: string; quantity: number }[], checkoutId: string = randomUUID()) {
  return request(stack.urls.payment).post('/api/payments/checkout').set('Authorization', bearer).send({ checkoutId, items });
}

/** Polls the payment as its owner until `predicate` holds; resolves with the body. */
export function paymentWhen(stack: Stack, bearer: string, paymentId: string, predicate: (payment: Record<string, unknown>) => boolean, what: string) {
  return waitFor(
    async () => {
      const res = await request(stack.urls.payment).get(`/api/payments/${paymentId}`).set('Authorization', bearer);
      return res.status === 200 && predicate(res.body) ? (res.body as Record<string, unknown>) : undefined;
    },
    { what },
  );
}

/** Posts `body` to the payment service's webhook as the provider would, signed now. */
export function sendSignedWebhook(stack: Stack, body: string) {
  return request(stack.urls.payment)
    .post('/api/payments/webhook')
    .set('Content-Type', 'application/json')
    .set('Stripe-Signature', signatureHeader(body, WEBHOOK_SECRET))
    .send(body);
}

/** Collects every message of `topics` the stack publishes from now on into `into`, under a group of its own. */
export function observe(stack: Stack, topics: string[], into: ConsumedMessage[]): Promise<Subscription> {
  return stack.bus.subscribe({ groupId: `observer-${randomUUID()}`, topics, handle: async (message) => void into.push(message) });
}
