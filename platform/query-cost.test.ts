/**
 * The demand-control rule (platform/query-cost.ts) on a schema of its own: the IBM cost
 * specification's weights, list sizes from `@listSize`, `@cost` overrides and the mutation base.
 */
import { buildASTSchema, Kind, parse, type OperationDefinitionNode } from 'graphql';
import { actualCost, costDirectivesOf, estimateCost } from './query-cost';

const SDL = parse(`
  extend schema @link(url: "https://specs.apollo.dev/federation/v2.9", import: ["@key", "@cost", "@listSize"])

  scalar Money @cost(weight: 2)
  enum Status { OPEN CLOSED }

  type Author { name: String! books: [Book!]! }
  type Book @key(fields: "id") {
    id: ID!
    title: String!
    price: Money!
    status: Status!
    tags: [String!]!
    authors: [Author!]! @listSize(assumedSize: 3)
    reviews(first: Int, last: Int): [Review!]! @listSize(slicingArguments: ["first", "last"], requireOneSlicingArgument: false)
    cover: Cover! @cost(weight: 7)
  }
  type Review { stars: Int! }
  type Cover @cost(weight: 4) { url: String! }
  type BookPage { edges: [BookEdge!]! total: Int! }
  type BookEdge { node: Book! }
  union Item = Book | Author
  type Query {
    book(id: ID!): Book
    books(limit: Int = 20, sort: String @cost(weight: 5)): [Book!]! @listSize(slicingArguments: ["limit"], requireOneSlicingArgument: false)
    authors: [Author!]!
    page(first: Int!): BookPage! @listSize(slicingArguments: ["first"], sizedFields: ["edges"])
    items: [Item!]! @listSize(assumedSize: 2)
    _entities(representations: [String!]!): [Item]!
  }
  type Mutation { addBook(title: String!): Book! }
`);

const schema = buildASTSchema(SDL, { assumeValidSDL: true });
const options = { directives: costDirectivesOf(SDL), defaultListSize: 20 };

function cost(query: string, variables: Record<string, unknown> = {}, defaultListSize = 20): number {
  const document = parse(query);
  const operation = document.definitions.find((definition): definition is OperationDefinitionNode => definition.kind === Kind.OPERATION_DEFINITION);
  if (!operation) throw new Error('no operation');
  return estimateCost(schema, document, operation, { ...options, defaultListSize }, variables);
}

describe('the estimated cost of an operation', () => {
  it('counts 1 for an object and 0 for a scalar, an enum or __typename', () => {
    expect(cost('{ book(id: "1") { id title status tags __typename } }')).toBe(1);
  });

  it('multiplies a list by its slicing argument, its default, or the largest of those given', () => {
    expect(cost('{ books(limit: 5) { id } }')).toBe(5);
    expect(cost('{ books { id } }')).toBe(20);
    expect(cost('{ book(id: "1") { reviews(first: 3, last: 8) { stars } } }')).toBe(1 + 8);
  });

  it('takes a slicing argument given as a variable at the value sent, else at its default', () => {
    const query = 'query ($n: Int = 7) { books(limit: $n) { id } }';
    expect(cost(query, { n: 2 })).toBe(2);
    expect(cost(query)).toBe(7);
  });

  it('multiplies by assumedSize, else by the configured default for a list @listSize says nothing of', () => {
    expect(cost('{ book(id: "1") { authors { name } } }')).toBe(1 + 3);
    expect(cost('{ authors { name } }')).toBe(20);
    expect(cost('{ authors { name } }', {}, 4)).toBe(4);
  });

  it('lets @cost on a field, a type or a scalar override the weight, and adds a weighted argument when given', () => {
    expect(cost('{ book(id: "1") { price cover { url } } }')).toBe(1 + 2 + 7);
    expect(cost('{ books(limit: 2, sort: "title") { id } }')).toBe(2 + 5);
  });

  it('gives the length to the sizedFields under a connection', () => {
    expect(cost('{ page(first: 4) { total edges { node { id } } } }')).toBe(1 + 4 * (1 + 1));
  });

  it("counts the costliest of the fragments on an abstract list's possible types, named or inline", () => {
    expect(cost('{ items { ... on Book { id authors { name } } ...author } } fragment author on Author { name books { id } }')).toBe(2 * (1 + Math.max(3, 20)));
    expect(cost('{ items { ... on Book { authors { name } } ... on Book { cover { url } } } }')).toBe(2 * (1 + 3 + 7));
  });

  it('starts a mutation at 10', () => {
    expect(cost('mutation { addBook(title: "x") { id } }')).toBe(10 + 1);
  });

  it('counts _entities once per written representation, and once when they come as a variable', () => {
    expect(cost('{ _entities(representations: ["a", "b", "c"]) { ... on Book { id } } }')).toBe(3);
    expect(cost('query ($r: [String!]!) { _entities(representations: $r) { ... on Book { id } } }', { r: ['a', 'b'] })).toBe(1);
  });

  it('counts lists nested three deep by their objects, not their scalars (the former 20-per-list heuristic said 10,041)', () => {
    const nested = '{ authors { name books { id title status tags authors { name } } } }';
    // authors 20 × (1 + books 20 × (1 + authors 3 × 1))
    expect(cost(nested)).toBe(1620);
  });
});

describe('the actual cost of an answer', () => {
  function actual(query: string, data: unknown): number {
    const document = parse(query);
    const operation = document.definitions.find((definition): definition is OperationDefinitionNode => definition.kind === Kind.OPERATION_DEFINITION);
    if (!operation) throw new Error('no operation');
    return actualCost(schema, document, operation, options.directives, data);
  }

  it('counts each object and list item the answer holds, by the same weights, and nothing for a null', () => {
    const data = {
      books: [
        { id: '1', price: '1.00', authors: [{ name: 'a' }] },
        { id: '2', price: '2.00', authors: [] },
      ],
      book: null,
    };
    // books: 2 × 1 + their prices 2 × 2 + one author + the weighted sort argument 5
    expect(actual('{ books(sort: "x") { id price authors { name } } book(id: "3") { id } }', data)).toBe(2 + 4 + 1 + 5);
  });

  it('applies a fragment only to the objects of its type, by their __typename', () => {
    const data = {
      items: [
        { __typename: 'Book', cover: { url: 'u' } },
        { __typename: 'Author', books: [{ id: '1' }, { id: '2' }] },
      ],
    };
    expect(actual('{ items { __typename ... on Book { cover { url } } ... on Author { books { id } } } }', data)).toBe(1 + 7 + 1 + 2);
  });
});
