import request from 'supertest';
import { expectEnvelope, newUser, registeredUser, startStack, UUID, type Stack } from '../test/harness';

let stack: Stack;
let user: Awaited<ReturnType<typeof registeredUser>>;
beforeAll(async () => {
  stack = await startStack();
  user = await registeredUser(stack);
});
afterAll(async () => {
  await stack?.stop();
});

const SERVICES = ['auth', 'user'] as const;
type ServiceUnderTest = (typeof SERVICES)[number];

const auth = () => request(stack.urls.auth);
const users = () => request(stack.urls.user);

/** One JSON route per service: login on auth, the caller's own profile update on user. */
function jsonRoute(service: ServiceUnderTest): request.Test {
  return service === 'auth' ? auth().post('/auth/login') : users().put(`/api/user/update/${user.userId}`).set('Authorization', user.bearer);
}

const profileUpdate = () => ({ firstName: 'Ada', lastName: 'Reader', phoneNumber: '+14155550100', dateOfBirth: '1990-05-17', address: '1 Library Lane' });

describe('request bodies', () => {
  it.each(SERVICES)('answers 400 "Malformed JSON request body" on the %s service', async (service) => {
    const res = await jsonRoute(service).set('Content-Type', 'application/json').send('{"email": "a@example.com", ');
    expectEnvelope(res, 400, 'Malformed JSON request body');
  });

  it.each(SERVICES)('answers 413 for a body over 1 MiB on the %s service', async (service) => {
    const body = JSON.stringify({ ...profileUpdate(), email: 'a@example.com', password: 'x', deviceId: 'd', padding: 'x'.repeat(1024 * 1024) });
    const res = await jsonRoute(service).set('Content-Type', 'application/json').send(body);
    expectEnvelope(res, 413);
  });

  it('accepts a body just under 1 MiB (the limit, not the route, decides 413)', async () => {
    const body = JSON.stringify({ email: 'nobody@example.com', password: 'Wrong12345', deviceId: 'd', padding: 'x'.repeat(1000 * 1000) });
    expectEnvelope(await auth().post('/auth/login').set('Content-Type', 'application/json').send(body), 401, 'Invalid email or password.');
  });

  it.each(SERVICES)('answers 415 for a text/plain body on a JSON route of the %s service', async (service) => {
    const res = await jsonRoute(service).set('Content-Type', 'text/plain').send(JSON.stringify(profileUpdate()));
    expectEnvelope(res, 415);
  });

  it('answers 415 for a form-encoded body and for an unsupported charset', async () => {
    expectEnvelope(await auth().post('/auth/login').type('form').send({ email: 'a@example.com', password: 'x', deviceId: 'd' }), 415);
    const latin = await auth().post('/auth/login').set('Content-Type', 'application/json; charset=klingon').send('{"email":"a@example.com"}');
    expectEnvelope(latin, 415);
  });

  it.each(SERVICES)('answers 400 for a JSON array where an object is expected on the %s service', async (service) => {
    const res = await jsonRoute(service).send([profileUpdate()]);
    expectEnvelope(res, 400);
  });

  it.each(SERVICES)('answers 400 for a JSON string or number where an object is expected on the %s service', async (service) => {
    expectEnvelope(await jsonRoute(service).set('Content-Type', 'application/json').send('"just a string"'), 400);
    expectEnvelope(await jsonRoute(service).set('Content-Type', 'application/json').send('42'), 400);
    expectEnvelope(await jsonRoute(service).set('Content-Type', 'application/json').send('null'), 400);
  });

  it('answers 400, never 500, for odd but well-formed JSON bodies', async () => {
    const bodies = [
      {},
      { email: null, password: null, deviceId: null },
      { email: ['a@example.com'], password: { $gt: '' }, deviceId: 1 },
      JSON.parse('{"__proto__": {"admin": true}, "email": "a@example.com"}'),
      { ...newUser(), dateOfBirth: 19900517 },
    ];
    for (const body of bodies) {
      const res = await auth().post('/auth/register').send(body);
      expectEnvelope(res, 400);
    }
  });

  it('leaves the profile unchanged after the rejected bodies', async () => {
    const res = await users().get(`/api/user/${user.userId}`).set('Authorization', user.bearer);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ firstName: user.firstName, lastName: user.lastName, address: user.address });
  });
});

describe('routing', () => {
  it.each(SERVICES)('answers 404 with the envelope for an unknown route on the %s service', async (service) => {
    const res = await request(stack.urls[service]).get('/no/such/route');
    expectEnvelope(res, 404);
    expect(res.body.path).toBe('/no/such/route');
  });

  it('answers 404 for an unknown route under /api/user for an authenticated caller', async () => {
    expectEnvelope(await users().get(`/api/user/${user.userId}/orders`).set('Authorization', user.bearer), 404);
  });

  it('answers 405 with Allow for GET /auth/login', async () => {
    const res = await auth().get('/auth/login');
    expectEnvelope(res, 405, 'Method GET is not supported for /auth/login');
    expect(res.headers.allow).toBe('POST');
  });

  it('answers 405 with Allow for DELETE /api/user/search', async () => {
    const res = await users().delete('/api/user/search').set('Authorization', user.bearer);
    expectEnvelope(res, 405, 'Method DELETE is not supported for /api/user/search');
    expect(res.headers.allow).toBe('GET, HEAD');
  });

  it('answers 405 with Allow for PUT /api/user/{id} and GET /api/user/create', async () => {
    const put = await users().put(`/api/user/${user.userId}`).set('Authorization', user.bearer).send(profileUpdate());
    expectEnvelope(put, 405);
    expect(put.headers.allow?.split(', ').sort()).toEqual(['DELETE', 'GET', 'HEAD']);
    const create = await users().get('/api/user/create');
    expectEnvelope(create, 405);
    expect(create.headers.allow).toBe('POST');
  });

  it('answers the same with a trailing slash', async () => {
    const login = await auth().post('/auth/login/').send({ email: user.email, password: user.password, deviceId: 'slash' });
    expect(login.status).toBe(200);
    expect(login.body).toEqual({ accessToken: expect.any(String), refreshToken: expect.any(String), expiresIn: 900000 });

    const plain = await users().get(`/api/user/${user.userId}`).set('Authorization', user.bearer);
    const slashed = await users().get(`/api/user/${user.userId}/`).set('Authorization', user.bearer);
    expect(slashed.status).toBe(200);
    expect(slashed.body).toEqual(plain.body);

    expectEnvelope(await auth().get('/auth/login/'), 405);
    expect((await auth().get('/auth/.well-known/jwks.json/')).status).toBe(200);
    expect((await users().get('/actuator/health/')).body.status).toBe('UP');
  });
});

describe('actuator', () => {
  it.each(SERVICES)('answers /actuator/health with UP on the %s service, without a token', async (service) => {
    const res = await request(stack.urls[service]).get('/actuator/health');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'UP', components: expect.objectContaining({ db: { status: 'UP' } }) });
  });

  it.each(SERVICES)('answers /actuator/info on the %s service', async (service) => {
    const res = await request(stack.urls[service]).get('/actuator/info');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ app: { name: service, description: expect.any(String) } });
  });

  it.each(SERVICES)('answers /actuator/prometheus in the text format on the %s service', async (service) => {
    await request(stack.urls[service]).get('/actuator/info');
    const res = await request(stack.urls[service]).get('/actuator/prometheus');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain/);
    expect(res.text).toContain('# TYPE http_server_requests_seconds histogram');
    expect(res.text).toMatch(new RegExp(`http_server_requests_seconds_count\\{[^}]*service="${service}"[^}]*route="/actuator/info"[^}]*\\} [1-9]`));
  });
});

describe('X-Request-Id', () => {
  it.each(SERVICES)('echoes a well-formed incoming id on the %s service', async (service) => {
    const res = await request(stack.urls[service]).get('/actuator/info').set('X-Request-Id', 'client-req.42:abc');
    expect(res.headers['x-request-id']).toBe('client-req.42:abc');
  });

  it.each(SERVICES)('generates a UUID when the id is missing on the %s service', async (service) => {
    const first = await request(stack.urls[service]).get('/actuator/info');
    const second = await request(stack.urls[service]).get('/actuator/info');
    expect(first.headers['x-request-id']).toMatch(UUID);
    expect(second.headers['x-request-id']).toMatch(UUID);
    expect(second.headers['x-request-id']).not.toBe(first.headers['x-request-id']);
  });

  it.each([
    ['spaces', 'has spaces in it'],
    ['markup', '<script>alert(1)</script>'],
    ['more than 128 characters', 'x'.repeat(129)],
  ])('replaces a malformed id (%s) with a generated UUID', async (_name, incoming) => {
    const res = await auth().get('/actuator/info').set('X-Request-Id', incoming);
    expect(res.headers['x-request-id']).toMatch(UUID);
  });

  it('is set on error answers too', async () => {
    const res = await users().get('/no/such/route').set('X-Request-Id', 'trace-404');
    expectEnvelope(res, 404);
    expect(res.headers['x-request-id']).toBe('trace-404');
  });
});
