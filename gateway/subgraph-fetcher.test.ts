import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createSubgraphFetcher, type SubgraphFetcher } from './subgraph-fetcher';
import { waitFor } from '../test/wait';

interface Held {
  headers: http.IncomingHttpHeaders;
  body: string;
  res: http.ServerResponse;
}

/**
 * A subgraph that holds every request until released, then answers with who asked and what; once
 * released it answers at once until told to hold again. `calls` counts the requests that arrived.
 */
function holdingSubgraph() {
  const held: Held[] = [];
  let holding = true;
  const state = { calls: 0 };
  const answer = ({ headers, body, res }: Held) => {
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ data: { asked: { authorization: headers.authorization ?? null, requestId: headers['x-request-id'] ?? null, body } } }));
  };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      state.calls += 1;
      const request = { headers: req.headers, body: Buffer.concat(chunks).toString(), res };
      if (holding) held.push(request);
      else answer(request);
    });
  });
  return {
    held,
    state,
    start: () => new Promise<string>((resolve) => server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}/graphql`))),
    hold() {
      holding = true;
      state.calls = 0;
    },
    /** Answers every request held so far, and any later one at once. */
    release() {
      holding = false;
      for (const request of held.splice(0)) answer(request);
    },
    /** Cuts every request held so far without an answer. */
    cut() {
      for (const { res } of held.splice(0)) res.socket?.destroy();
    },
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

const QUERY = JSON.stringify({ query: '{books(limit:10){id title}}', variables: {} });
const ENTITIES = JSON.stringify({
  query: 'query($representations:[_Any!]!){_entities(representations:$representations){...on Book{title}}}',
  variables: { representations: [{ __typename: 'Book', id: 'b1' }] },
});
const MUTATION = JSON.stringify({ query: 'mutation{deleteBook(id:"b1")}', variables: {} });

describe('the subgraph fetcher with identical queries in flight', () => {
  const subgraph = holdingSubgraph();
  let url: string;
  let fetcher: SubgraphFetcher;

  beforeAll(async () => {
    url = await subgraph.start();
  });
  beforeEach(() => {
    subgraph.hold();
    fetcher = createSubgraphFetcher();
  });
  afterEach(() => {
    subgraph.release();
    fetcher.close();
  });
  afterAll(() => subgraph.stop());

  const post = (body: string, headers: Record<string, string> = {}) => fetcher.fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });

  it('sends one call for identical queries that differ only in request id, and gives every caller the answer', async () => {
    const answers = Promise.all(['r1', 'r2', 'r3', 'r4', 'r5'].map((id) => post(QUERY, { authorization: 'Bearer a', 'x-request-id': id })));
    await waitFor(() => subgraph.held.length === 1, { what: 'the call to reach the subgraph' });
    subgraph.release();
    const bodies = await Promise.all((await answers).map((answer) => answer.json()));
    expect(bodies).toHaveLength(5);
    for (const body of bodies) expect(body).toEqual({ data: { asked: { authorization: 'Bearer a', requestId: 'r1', body: QUERY } } });
    expect(subgraph.state.calls).toBe(1);
  });

  it('shares an entity query too, but never between callers with other credentials or another body', async () => {
    const answers = Promise.all([
      post(ENTITIES, { authorization: 'Bearer a' }),
      post(ENTITIES, { authorization: 'Bearer a' }),
      post(ENTITIES, { authorization: 'Bearer b' }),
      post(ENTITIES),
      post(QUERY, { authorization: 'Bearer a' }),
    ]);
    await waitFor(() => subgraph.held.length === 4, { what: 'four calls to reach the subgraph' });
    subgraph.release();
    const asked = await Promise.all(
      (await answers).map(async (answer) => ((await answer.json()) as { data: { asked: { authorization: string | null; body: string } } }).data.asked),
    );
    expect(asked.map((a) => [a.authorization, a.body])).toEqual([
      ['Bearer a', ENTITIES],
      ['Bearer a', ENTITIES],
      ['Bearer b', ENTITIES],
      [null, ENTITIES],
      ['Bearer a', QUERY],
    ]);
    expect(subgraph.state.calls).toBe(4);
  });

  it('sends every mutation on its own', async () => {
    const answers = Promise.all([post(MUTATION, { authorization: 'Bearer a' }), post(MUTATION, { authorization: 'Bearer a' }), post(MUTATION, { authorization: 'Bearer a' })]);
    await waitFor(() => subgraph.held.length === 3, { what: 'three calls to reach the subgraph' });
    subgraph.release();
    expect((await answers).map((answer) => answer.status)).toEqual([200, 200, 200]);
    expect(subgraph.state.calls).toBe(3);
  });

  it('keeps nothing once the answer has arrived: the same query later is a new call', async () => {
    const first = post(QUERY, { authorization: 'Bearer a' });
    await waitFor(() => subgraph.held.length === 1, { what: 'the first call' });
    subgraph.release();
    await (await first).text();
    expect(await (await post(QUERY, { authorization: 'Bearer a' })).json()).toEqual({ data: { asked: { authorization: 'Bearer a', requestId: null, body: QUERY } } });
    expect(subgraph.state.calls).toBe(2);
  });

  it('fails every caller of a call that breaks off, and the next identical query goes out again', async () => {
    const failed = Promise.allSettled([post(QUERY, { authorization: 'Bearer a' }), post(QUERY, { authorization: 'Bearer a' })]);
    await waitFor(() => subgraph.held.length === 1, { what: 'the call' });
    subgraph.cut();
    expect((await failed).map((outcome) => outcome.status)).toEqual(['rejected', 'rejected']);
    subgraph.release();
    expect((await post(QUERY, { authorization: 'Bearer a' })).status).toBe(200);
    expect(subgraph.state.calls).toBe(2);
  });

  it('sends every query on its own when deduplication is off', async () => {
    fetcher.close();
    fetcher = createSubgraphFetcher({ deduplicate: false });
    const answers = Promise.all([post(QUERY, { authorization: 'Bearer a' }), post(QUERY, { authorization: 'Bearer a' })]);
    await waitFor(() => subgraph.held.length === 2, { what: 'two calls to reach the subgraph' });
    subgraph.release();
    expect((await answers).map((answer) => answer.status)).toEqual([200, 200]);
    expect(subgraph.state.calls).toBe(2);
  });
});
