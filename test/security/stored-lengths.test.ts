/**
 * Length limits hold for the value as stored (CONTRACT §1.2): lower-casing can lengthen a text
 * (`İ`, U+0130, becomes `i̇`, two characters), so an input within a limit as sent may outgrow its
 * column once normalised. That is the client's mistake, a 400 with the validation envelope, on
 * SQLite (which does not enforce widths) as on MariaDB (which does), wherever a lower-cased value
 * is stored or looked up: the account's email at registration and login, the address a password
 * reset is asked for, the catalogue's name keys.
 */
import request from 'supertest';
import { expectEnvelope, INTERNAL_KEY, newUser, StackSuite, stackSuite } from '../harness';

const suite = stackSuite(new StackSuite(), { services: ['book'] });

/** `n` dotted capital Is: `n` characters as sent, `2n` once lower-cased. */
const dottedI = (n: number) => '\u0130'.repeat(n);
/** A well-formed address (a 64-byte local part, a 40-letter domain) of 77 characters as sent, 109 lower-cased. */
const GROWING_EMAIL = `${dottedI(32)}@${'a'.repeat(40)}.com`;
const ONCE_LOWER_CASED = (max: number) => `must be shorter than or equal to ${max} characters once lower-cased`;

describe('the account email', () => {
  it('refuses at login an email of 51 İ (102 characters lower-cased) with 400', async () => {
    const res = await request(suite.stack.urls.auth)
      .post('/auth/login')
      .send({ email: dottedI(51), password: 'Secret123', deviceId: 'd1' });
    expectEnvelope(res, 400);
    expect(res.body.validationErrors).toEqual([`email: ${ONCE_LOWER_CASED(100)}`]);
  });

  it('refuses at forgot-password an address of 128 İ (256 characters lower-cased) with 400, and takes one of 254 once lower-cased', async () => {
    const forgot = (email: string) => request(suite.stack.urls.auth).post('/auth/password/forgot').send({ email });
    const res = await forgot(dottedI(128));
    expectEnvelope(res, 400);
    expect(res.body.validationErrors).toEqual([`email: ${ONCE_LOWER_CASED(254)}`]);
    expect((await forgot(dottedI(127))).status).toBe(202);
  });

  it('refuses at registration an email that outgrows 100 characters lower-cased with 400, and creates nothing', async () => {
    const res = await request(suite.stack.urls.auth)
      .post('/auth/register')
      .send(newUser({ email: GROWING_EMAIL }));
    expectEnvelope(res, 400);
    expect(res.body.validationErrors).toEqual([`email: ${ONCE_LOWER_CASED(100)}`]);
    const admin = await request(suite.stack.urls.user)
      .get('/api/user/search')
      .query({ keyword: `@${'a'.repeat(40)}.com` })
      .set('Authorization', suite.admin.bearer);
    expect(admin.status).toBe(200);
    expect(admin.body).toEqual([]);
  });

  it('refuses the same at the internal profile create with 400', async () => {
    const res = await request(suite.stack.urls.user)
      .post('/api/user/create')
      .set('X-Internal-Api-Key', INTERNAL_KEY)
      .send({ ...newUser({ email: GROWING_EMAIL }), userId: '0b3f1c3e-2a47-4c1e-9d1a-6f2b1d9c0a11' });
    expectEnvelope(res, 400);
    expect(res.body.validationErrors).toEqual([`email: ${ONCE_LOWER_CASED(100)}`]);
  });
});

describe('the catalogue name keys', () => {
  const book = () => request(suite.stack.urls.book);

  it.each([
    ['/api/categories', 'name', { name: dottedI(60) }, 100],
    ['/api/publishers', 'name', { name: dottedI(80) }, 150],
  ])('refuses at %s/create a %s that outgrows its key lower-cased with 400', async (path, field, body, max) => {
    const res = await book().post(`${path}/create`).set('Authorization', suite.admin.bearer).send(body);
    expectEnvelope(res, 400);
    expect(res.body.validationErrors).toEqual([`${field}: ${ONCE_LOWER_CASED(max)}`]);
  });

  it('refuses an author whose "first last" key outgrows its 201 characters lower-cased with 400, and takes one that fills it', async () => {
    const over = await book()
      .post('/api/authors/create')
      .set('Authorization', suite.admin.bearer)
      .send({ firstName: dottedI(100), lastName: 'Le Guin' });
    expectEnvelope(over, 400);
    expect(over.body.validationErrors).toEqual(['lastName: with the first name, must be shorter than or equal to 201 characters once lower-cased']);
    const full = await book()
      .post('/api/authors/create')
      .set('Authorization', suite.admin.bearer)
      .send({ firstName: dottedI(99), lastName: 'Xy' });
    expect(full.status).toBe(201);
  });

  it('refuses the same at update, keeping the name', async () => {
    const created = await book().post('/api/categories/create').set('Authorization', suite.admin.bearer).send({ name: 'Dotted' });
    expect(created.status).toBe(201);
    const res = await book()
      .put(`/api/categories/update/${created.body.id}`)
      .set('Authorization', suite.admin.bearer)
      .send({ name: dottedI(51) });
    expectEnvelope(res, 400);
    expect((await book().get(`/api/categories/${created.body.id}`)).body.name).toBe('Dotted');
  });

  it('takes a name that fills its key exactly once lower-cased', async () => {
    const res = await book()
      .post('/api/categories/create')
      .set('Authorization', suite.admin.bearer)
      .send({ name: dottedI(50) });
    expect(res.status).toBe(201);
    expect(res.body.name).toBe(dottedI(50));
  });
});
