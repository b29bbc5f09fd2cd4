import request from 'supertest';
import { adminSession, registeredUser, startStack, type Stack } from '../../test/harness';
import { errorCodes, graphql, paidPurchase } from '../../test/graphql';
import type { PaymentService } from './service';

let stack: Stack;
let admin: Awaited<ReturnType<typeof adminSession>>;

beforeAll(async () => {
  stack = await startStack({ services: ['book', 'payment'] });
  admin = await adminSession(stack);
});
afterAll(async () => {
  await stack?.stop();
});

const payments = () => (stack.services.payment as unknown as { payments: PaymentService }).payments;
const gql = (query: string, bearer?: string, variables?: Record<string, unknown>) => graphql(stack.urls.payment, query, { bearer, variables });

const PAYMENT_FIELDS =
  'paymentId checkoutId userId orderId order { orderId } user { userId } amount currency status paymentIntentId items { bookId book { id } bookTitle quantity price } createdAt';

describe('the payment subgraph', () => {
  it('shows a paid payment to its owner with the same values REST shows, money as a decimal string', async () => {
    const buyer = await registeredUser(stack);
    const purchase = await paidPurchase(stack, buyer.bearer, admin.bearer);
    const rest = await request(stack.urls.payment).get(`/api/payments/${purchase.paymentId}`).set('Authorization', buyer.bearer);
    const res = await gql(`query ($id: ID!) { payment(paymentId: $id) { ${PAYMENT_FIELDS} } myPayments { paymentId } }`, buyer.bearer, { id: purchase.paymentId });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      data: {
        payment: {
          paymentId: purchase.paymentId,
          checkoutId: rest.body.checkoutId,
          userId: buyer.userId,
          orderId: null,
          order: null,
          user: { userId: buyer.userId },
          amount: '60.08',
          currency: 'usd',
          status: 'SUCCESS',
          paymentIntentId: rest.body.paymentIntentId,
          items: [
            { bookId: purchase.books[0].id, book: { id: purchase.books[0].id }, bookTitle: purchase.books[0].title, quantity: 2, price: '29.99' },
            { bookId: purchase.books[1].id, book: { id: purchase.books[1].id }, bookTitle: 'Bookmark', quantity: 1, price: '0.10' },
          ],
          createdAt: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}$/),
        },
        myPayments: [{ paymentId: purchase.paymentId }],
      },
    });
    expect(rest.body.amount).toBe(60.08);
  });

  it('tells another USER the payment does not exist, as REST does, and lets an ADMIN see it', async () => {
    const [owner, other] = [await registeredUser(stack), await registeredUser(stack)];
    const { paymentId } = await paidPurchase(stack, owner.bearer, admin.bearer);
    const rest = await request(stack.urls.payment).get(`/api/payments/${paymentId}`).set('Authorization', other.bearer);
    expect(rest.status).toBe(404);

    const query = 'query ($id: ID!) { payment(paymentId: $id) { paymentId } }';
    const denied = await gql(query, other.bearer, { id: paymentId });
    expect(denied.body).toEqual({
      data: { payment: null },
      errors: [expect.objectContaining({ message: rest.body.message, extensions: { code: 'NOT_FOUND', reason: 'PAYMENT_NOT_FOUND' } })],
    });
    expect(errorCodes((await gql(query, undefined, { id: paymentId })).body)).toEqual(['UNAUTHENTICATED']);
    expect((await gql(query, admin.bearer, { id: paymentId })).body).toEqual({ data: { payment: { paymentId } } });
  });

  it("resolves Payment references through one batched read, each with its owner's rule", async () => {
    const [a, b] = [await registeredUser(stack), await registeredUser(stack)];
    const [pa, pb] = [await paidPurchase(stack, a.bearer, admin.bearer), await paidPurchase(stack, b.bearer, admin.bearer)];
    const query = 'query ($r: [_Any!]!) { _entities(representations: $r) { ... on Payment { paymentId amount } } }';
    const both = {
      r: [
        { __typename: 'Payment', paymentId: pb.paymentId },
        { __typename: 'Payment', paymentId: pa.paymentId },
      ],
    };

    const batch = jest.spyOn(payments(), 'paymentsFor');
    try {
      const asAdmin = await gql(query, admin.bearer, both);
      expect(asAdmin.body).toEqual({
        data: {
          _entities: [
            { paymentId: pb.paymentId, amount: '60.08' },
            { paymentId: pa.paymentId, amount: '60.08' },
          ],
        },
      });
      expect(batch).toHaveBeenCalledTimes(1);
      expect(batch.mock.calls[0][1]).toEqual([pb.paymentId, pa.paymentId]);
    } finally {
      batch.mockRestore();
    }

    const asA = await gql(query, a.bearer, both);
    expect(asA.body.data._entities).toEqual([null, { paymentId: pa.paymentId, amount: '60.08' }]);
    expect(asA.body.errors).toEqual([expect.objectContaining({ path: ['_entities', 0], extensions: { code: 'NOT_FOUND', reason: 'PAYMENT_NOT_FOUND' } })]);
  });

  it('adds payments to User for the user themself or an ADMIN, batching every user into one read', async () => {
    const [a, b] = [await registeredUser(stack), await registeredUser(stack)];
    const [pa, pb] = [await paidPurchase(stack, a.bearer, admin.bearer), await paidPurchase(stack, b.bearer, admin.bearer)];
    const query = 'query ($r: [_Any!]!) { _entities(representations: $r) { ... on User { userId payments { paymentId status } } } }';
    const both = {
      r: [
        { __typename: 'User', userId: a.userId },
        { __typename: 'User', userId: b.userId },
      ],
    };

    const batch = jest.spyOn(payments(), 'paymentsOfUsers');
    try {
      const asAdmin = await gql(query, admin.bearer, both);
      expect(asAdmin.body).toEqual({
        data: {
          _entities: [
            { userId: a.userId, payments: [{ paymentId: pa.paymentId, status: 'SUCCESS' }] },
            { userId: b.userId, payments: [{ paymentId: pb.paymentId, status: 'SUCCESS' }] },
          ],
        },
      });
      expect(batch).toHaveBeenCalledTimes(1);
    } finally {
      batch.mockRestore();
    }

    const asB = await gql(query, b.bearer, both);
    expect(asB.body.data._entities).toEqual([null, { userId: b.userId, payments: [{ paymentId: pb.paymentId, status: 'SUCCESS' }] }]);
    expect(errorCodes(asB.body)).toEqual(['FORBIDDEN']);
  });

  it('never exposes the PaymentIntent client secret', async () => {
    const res = await gql('{ myPayments { clientSecret } }', admin.bearer);
    expect(res.status).toBe(400);
    expect(errorCodes(res.body)).toEqual(['GRAPHQL_VALIDATION_FAILED']);
  });
});
