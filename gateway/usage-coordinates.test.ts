/**
 * The coordinates an operation touches, as the gateway reports them and schema:check reads the admin
 * UI's documents (CONTRACT §13), against the real API schema.
 */
import fs from 'node:fs';
import { parse } from 'graphql';
import { apiSchemaOf } from '../schema/compose';
import { SUPERGRAPH_PATH } from './graphql';
import { coordinatesOf } from './usage-coordinates';

const schema = apiSchemaOf(fs.readFileSync(SUPERGRAPH_PATH, 'utf8'));
const of = (text: string, name?: string) => coordinatesOf(schema, parse(text), name);

describe('the coordinates of an operation', () => {
  it('are its types, fields and arguments, through fragments and aliases, without introspection', () => {
    expect(
      of(`query Shop($limit: Int) {
        first: books(limit: $limit) { ...Line __typename }
        __schema { types { name } }
      }
      fragment Line on Book { id title authors { firstName } }`),
    ).toEqual(['Author', 'Author.firstName', 'Book', 'Book.authors', 'Book.id', 'Book.title', 'ID', 'Int', 'Query', 'Query.books', 'Query.books.limit', 'String']);
  });

  it('count an input value or an enum value given in the document exactly, and every one a variable may hold', () => {
    const literal = of('mutation { refundPayment(paymentId: "p", input: { amount: "1.00", reason: DAMAGED }) { refundId } }');
    expect(literal).toEqual(
      expect.arrayContaining(['Mutation.refundPayment', 'Mutation.refundPayment.input', 'RefundInput', 'RefundInput.amount', 'RefundInput.reason', 'RefundReason.DAMAGED']),
    );
    expect(literal).not.toContain('RefundInput.items');
    expect(literal).not.toContain('RefundReason.OTHER');

    const variable = of('mutation Refund($input: RefundInput!) { refundPayment(paymentId: "p", input: $input) { refundId } }');
    expect(variable).toEqual(expect.arrayContaining(['RefundInput.amount', 'RefundInput.items', 'RefundItemInput.bookId', 'RefundReason.DAMAGED', 'RefundReason.OTHER']));
  });

  it('are those of the operation named, in a document of several, with only the fragments it spreads', () => {
    const document = 'query A { dashboard { totalOrders } } query B { books(limit: 1) { ...T } } fragment T on Book { title }';
    expect(of(document, 'A')).toEqual(['Dashboard', 'Dashboard.totalOrders', 'Int', 'Query', 'Query.dashboard']);
    expect(of(document, 'B')).toEqual(['Book', 'Book.title', 'Int', 'Query', 'Query.books', 'Query.books.limit', 'String']);
    expect(of(document)).toEqual([]);
  });
});
