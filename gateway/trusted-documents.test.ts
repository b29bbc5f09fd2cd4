/**
 * Trusted documents as a client sees them (CONTRACT §11): a document by `documentId` or Apollo's
 * persistedQuery hash, an unknown id, and the three GRAPHQL_TRUSTED_DOCUMENTS modes, on the front
 * path (plain `application/json`) and through the app's route. The documents need no subgraph.
 */
import { Writable } from 'node:stream';
import request from 'supertest';
import { loadConfig, type TrustedDocumentMode } from '../platform/config';
import { createLogger } from '../platform/logger';
import { createGraphqlGateway } from './graphql';
import { createGateway, type GatewayRuntime } from './index';
import { documentId, readManifest, type PersistedManifest } from './trusted-documents';

const TYPENAME = 'query Typename { __typename }';
const MANIFEST: PersistedManifest = {
  format: 'apollo-persisted-query-manifest',
  version: 1,
  operations: [{ id: documentId(TYPENAME), name: 'Typename', type: 'query', body: TYPENAME }],
};
const ARBITRARY = '{ __schema { queryType { name } } }';

/** The front path takes plain `application/json`; a quoted charset goes through the app (gateway/graphql-front.ts). */
const MEDIA_TYPES = ['application/json', 'application/json; charset="utf-8"'];

async function started(mode: TrustedDocumentMode, lines: string[] = []): Promise<{ url: string; gateway: GatewayRuntime }> {
  const config = { ...loadConfig({ INTERNAL_API_KEY: 'k' }), trustedDocuments: mode };
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(chunk.toString());
      done();
    },
  });
  const logger = createLogger('info', {}, sink);
  const gateway = await createGateway({
    config,
    logger,
    mountGraphql: async (app) => {
      const graphql = createGraphqlGateway({ config, logger, manifest: MANIFEST });
      await graphql.mount(app);
      return { stop: () => graphql.stop(), front: graphql.front };
    },
  });
  return { gateway, url: `http://127.0.0.1:${await gateway.start(0, '127.0.0.1')}` };
}

const post = (url: string, type: string, body: unknown) => request(url).post('/graphql').set('Content-Type', type).send(JSON.stringify(body));

describe('trusted documents under enforce (the docker-compose default)', () => {
  let url: string;
  let gateway: GatewayRuntime;
  beforeAll(async () => ({ url, gateway } = await started('enforce')));
  afterAll(() => gateway?.stop());

  it.each(MEDIA_TYPES)('runs a document of the manifest by documentId and by its persistedQuery hash (%s)', async (type) => {
    for (const body of [{ documentId: documentId(TYPENAME) }, { extensions: { persistedQuery: { version: 1, sha256Hash: documentId(TYPENAME) } } }]) {
      const res = await post(url, type, body);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ data: { __typename: 'Query' } });
    }
  });

  it.each(MEDIA_TYPES)('runs the exact text of a document of the manifest (%s)', async (type) => {
    const res = await post(url, type, { query: TYPENAME });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ data: { __typename: 'Query' } });
  });

  it.each(MEDIA_TYPES)('refuses any other document text with 400 PERSISTED_QUERY_NOT_ALLOWED (%s)', async (type) => {
    const res = await post(url, type, { query: ARBITRARY });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      errors: [{ message: 'Only trusted documents run here: send the documentId of a document of the manifest', extensions: { code: 'PERSISTED_QUERY_NOT_ALLOWED' } }],
    });
  });

  it('refuses a document text sent by GET the same way', async () => {
    const res = await request(url).get('/graphql').query({ query: ARBITRARY }).set('Apollo-Require-Preflight', 'true');
    expect(res.status).toBe(400);
    expect(res.body.errors[0].extensions).toEqual({ code: 'PERSISTED_QUERY_NOT_ALLOWED' });
  });

  it.each(MEDIA_TYPES)('answers an id the manifest lacks with 400 PERSISTED_QUERY_NOT_FOUND (%s)', async (type) => {
    for (const body of [{ documentId: documentId(ARBITRARY) }, { extensions: { persistedQuery: { version: 1, sha256Hash: documentId(ARBITRARY) } } }]) {
      const res = await post(url, type, body);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ errors: [{ message: 'No trusted document has this id', extensions: { code: 'PERSISTED_QUERY_NOT_FOUND' } }] });
    }
  });

  it('refuses a text that is not the document its id names', async () => {
    const res = await post(url, 'application/json', { documentId: documentId(TYPENAME), query: ARBITRARY });
    expect(res.status).toBe(400);
    expect(res.body.errors[0].extensions).toEqual({ code: 'BAD_REQUEST' });
  });
});

describe('trusted documents under allow and off', () => {
  it('allow: runs any document, logging each distinct text once with its hash, and ids still resolve', async () => {
    const lines: string[] = [];
    const { url, gateway } = await started('allow', lines);
    try {
      for (let i = 0; i < 2; i += 1) {
        const res = await post(url, 'application/json', { query: ARBITRARY });
        expect(res.status).toBe(200);
        expect(res.body).toEqual({ data: { __schema: { queryType: { name: 'Query' } } } });
      }
      expect((await post(url, 'application/json', { documentId: documentId(TYPENAME) })).body).toEqual({ data: { __typename: 'Query' } });
      const logged = lines
        .map((line) => JSON.parse(line) as { msg: string; documentId?: string })
        .filter((line) => line.msg === 'graphql document outside the trusted documents manifest');
      expect(logged.map((line) => line.documentId)).toEqual([documentId(ARBITRARY)]);
    } finally {
      await gateway.stop();
    }
  });

  it('off (the embedded default): runs any document and resolves ids', async () => {
    expect(loadConfig({}, { embedded: true }).trustedDocuments).toBe('off');
    const { url, gateway } = await started('off');
    try {
      expect((await post(url, 'application/json', { query: ARBITRARY })).status).toBe(200);
      expect((await post(url, 'application/json', { documentId: documentId(TYPENAME) })).body).toEqual({ data: { __typename: 'Query' } });
    } finally {
      await gateway.stop();
    }
  });
});

describe("the admin UI's generated manifest", () => {
  it('holds every admin UI operation under the sha256 of its text', () => {
    const manifest = readManifest();
    expect(manifest.format).toBe('apollo-persisted-query-manifest');
    expect(manifest.operations.length).toBeGreaterThan(5);
    for (const operation of manifest.operations) expect(operation.id).toBe(documentId(operation.body));
    expect(manifest.operations.map((operation) => operation.name)).toContain('Dashboard');
  });

  it('is refused by configuration as anything but off, allow or enforce', () => {
    expect(() => loadConfig({ INTERNAL_API_KEY: 'k', GRAPHQL_TRUSTED_DOCUMENTS: 'strict' })).toThrow('GRAPHQL_TRUSTED_DOCUMENTS must be off, allow or enforce, got "strict"');
  });
});
