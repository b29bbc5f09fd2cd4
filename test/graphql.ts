/** Helpers for GraphQL tests: one POST per operation, error lookups, and a paid purchase to query. */
import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { checkout, createBook, paymentWhen, type CatalogueBook } from './commerce';
import type { Stack } from './stack';

export interface GraphqlError {
  message: string;
  path?: (string | number)[];
  extensions?: Record<string, unknown> & { code?: string };
}

/** POSTs an operation to `${baseUrl}/graphql`, with a bearer when given. */
export function graphql(baseUrl: string, query: string, options: { variables?: Record<string, unknown>; bearer?: string; headers?: Record<string, string> } = {}) {
  const req = request(baseUrl).post('/graphql').set('Content-Type', 'application/json');
  if (options.bearer) req.set('Authorization', options.bearer);
  for (const [name, value] of Object.entries(options.headers ?? {})) req.set(name, value);
  return req.send({ query, variables: options.variables ?? {} });
}

/** The `extensions.code` of every error of a GraphQL response body, in order. */
export function errorCodes(body: { errors?: GraphqlError[] }): (string | undefined)[] {
  return (body.errors ?? []).map((error) => error.extensions?.code);
}

/** Whether any error carries a stack trace or a subgraph's raw HTTP body. */
export function leaksInternals(body: { errors?: GraphqlError[] }): boolean {
  return (body.errors ?? []).some((error) => JSON.stringify(error).includes('stacktrace') || error.extensions?.response !== undefined || error.extensions?.exception !== undefined);
}

export interface Purchase {
  paymentId: string;
  books: CatalogueBook[];
}

/** A checkout of two fresh books paid through the Stripe simulator; resolves once the payment is SUCCESS. */
export async function paidPurchase(stack: Stack, buyerBearer: string, adminBearer: string): Promise<Purchase> {
  const books = [await createBook(stack, adminBearer, `Federated ${randomUUID().slice(0, 8)}`, 29.99), await createBook(stack, adminBearer, 'Bookmark', 0.1)];
  const res = await checkout(stack, buyerBearer, [
    { bookId: books[0].id, quantity: 2 },
    { bookId: books[1].id, quantity: 1 },
  ]);
  if (res.status !== 200) throw new Error(`checkout failed: ${res.status} ${JSON.stringify(res.body)}`);
  await stack.stripe!.confirm(res.body.paymentIntentId);
  await paymentWhen(stack, buyerBearer, res.body.paymentId, (payment) => payment.status === 'SUCCESS', 'the payment to succeed');
  return { paymentId: res.body.paymentId, books };
}

/** Waits until the order service has made the purchase's order and the payment knows its orderId. */
export async function orderOf(stack: Stack, buyerBearer: string, paymentId: string): Promise<string> {
  const payment = await paymentWhen(stack, buyerBearer, paymentId, (p) => typeof p.orderId === 'string', 'the payment to know its order');
  return payment.orderId as string;
}
