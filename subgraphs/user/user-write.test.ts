/** Changing profiles: PUT /api/user/update/{id}, DELETE /api/user/{id} and the internal POST /api/user/create. */
import { randomBytes, randomUUID } from 'node:crypto';
import { AUTHENTICATION_REQUIRED, expectEnvelope, INTERNAL_KEY, registeredUser } from '../../test/harness';
import { afterMillisecond, expectProfile, userService } from '../../test/user-service';
import type { UserResponseDto } from '../../platform/contracts/profiles';
import { UserProfile } from './entities';

const suite = userService();
const { users, profileRequest, createProfile, readBack } = suite;

function updateBody(overrides: Record<string, unknown> = {}) {
  return { firstName: 'Grace', lastName: 'Hopper', phoneNumber: '+442079460000', dateOfBirth: '1985-12-09', address: '2 Compiler Court, Arlington', ...overrides };
}

describe('PUT /api/user/update/{id}', () => {
  it('lets a user update their own profile, keeping email and createdAt', async () => {
    const user = await registeredUser(suite.stack);
    const before = (await readBack(user.userId)).body as UserResponseDto;
    await afterMillisecond(before.updatedAt);

    const res = await users().put(`/api/user/update/${user.userId}`).set('Authorization', user.bearer).send(updateBody());
    expect(res.status).toBe(200);
    expectProfile(res.body, { ...updateBody(), userId: user.userId, email: user.email, createdAt: before.createdAt });
    expect(res.body.updatedAt > before.updatedAt).toBe(true);

    const stored = await readBack(user.userId);
    expect(stored.status).toBe(200);
    expect(stored.body).toEqual(res.body);
  });

  it('lets an ADMIN update any profile', async () => {
    const user = await registeredUser(suite.stack);
    const res = await users()
      .put(`/api/user/update/${user.userId}`)
      .set('Authorization', suite.admin.bearer)
      .send(updateBody({ address: 'Changed by admin' }));
    expect(res.status).toBe(200);
    expectProfile(res.body, { userId: user.userId, email: user.email, address: 'Changed by admin' });
    expect((await readBack(user.userId)).body.address).toBe('Changed by admin');
  });

  it('answers 403 when a USER updates someone else, changing nothing', async () => {
    const victim = await registeredUser(suite.stack);
    const attacker = await registeredUser(suite.stack);
    const before = (await readBack(victim.userId)).body;
    const res = await users().put(`/api/user/update/${victim.userId}`).set('Authorization', attacker.bearer).send(updateBody());
    expectEnvelope(res, 403);
    expect((await readBack(victim.userId)).body).toEqual(before);
  });

  it('answers 400 with validationErrors for every invalid field, changing nothing', async () => {
    const user = await registeredUser(suite.stack);
    const before = (await readBack(user.userId)).body;
    const res = await users()
      .put(`/api/user/update/${user.userId}`)
      .set('Authorization', user.bearer)
      .send({ firstName: ' ', lastName: 'x'.repeat(51), phoneNumber: '12ab', dateOfBirth: '2999-01-01', address: '', email: 'not-an-email' });
    expectEnvelope(res, 400, 'Validation failed for one or more fields');
    const fields = (res.body.validationErrors as string[]).map((line) => line.split(':')[0]);
    expect(new Set(fields)).toEqual(new Set(['firstName', 'lastName', 'phoneNumber', 'dateOfBirth', 'address', 'email']));
    expect((await readBack(user.userId)).body).toEqual(before);
  });

  it('accepts the current email in any case', async () => {
    const user = await registeredUser(suite.stack);
    const res = await users()
      .put(`/api/user/update/${user.userId}`)
      .set('Authorization', user.bearer)
      .send(updateBody({ email: user.email.toUpperCase() }));
    expect(res.status).toBe(200);
    expectProfile(res.body, { userId: user.userId, email: user.email, firstName: 'Grace' });
    expect((await readBack(user.userId)).body.email).toBe(user.email);
  });

  it('treats a null email as not sent', async () => {
    const user = await registeredUser(suite.stack);
    const res = await users()
      .put(`/api/user/update/${user.userId}`)
      .set('Authorization', user.bearer)
      .send(updateBody({ email: null }));
    expect(res.status).toBe(200);
    expect(res.body.email).toBe(user.email);
  });

  it('answers 400 for a different email, changing nothing', async () => {
    const user = await registeredUser(suite.stack);
    const before = (await readBack(user.userId)).body;
    const res = await users()
      .put(`/api/user/update/${user.userId}`)
      .set('Authorization', user.bearer)
      .send(updateBody({ email: 'someone.else@example.com' }));
    expectEnvelope(res, 400, 'The email is the login identity and cannot be changed here');
    expect((await readBack(user.userId)).body).toEqual(before);
  });

  it('answers 404 for an unknown id', async () => {
    const id = randomUUID();
    const res = await users().put(`/api/user/update/${id}`).set('Authorization', suite.admin.bearer).send(updateBody());
    expectEnvelope(res, 404, `User not found with id: ${id}`);
    expectEnvelope(await readBack(id), 404);
  });

  it('answers 400 for a non-UUID id and 401 to an anonymous caller', async () => {
    expectEnvelope(await users().put('/api/user/update/12345').set('Authorization', suite.admin.bearer).send(updateBody()), 400);
    const user = await registeredUser(suite.stack);
    expectEnvelope(await users().put(`/api/user/update/${user.userId}`).send(updateBody()), 401, AUTHENTICATION_REQUIRED);
    expect((await readBack(user.userId)).body.firstName).toBe(user.firstName);
  });
});

describe('DELETE /api/user/{id}', () => {
  it('lets an ADMIN delete a profile, answering plain text; the profile is then gone', async () => {
    const user = await registeredUser(suite.stack);
    const res = await users().delete(`/api/user/${user.userId}`).set('Authorization', suite.admin.bearer);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain/);
    expect(res.text).toBe(`User with id : ${user.userId} Deleted successfully`);
    expectEnvelope(await readBack(user.userId), 404, `User not found with id: ${user.userId}`);
    expect(await suite.stack.user.db.manager.count(UserProfile, { where: { userId: user.userId } })).toBe(0);
  });

  it('answers 403 when an admin deletes their own account, which remains', async () => {
    const res = await users().delete(`/api/user/${suite.admin.userId}`).set('Authorization', suite.admin.bearer);
    expectEnvelope(res, 403, 'Admins cannot delete their own account');
    expect((await readBack(suite.admin.userId)).status).toBe(200);
  });

  it('answers 403 to a USER, deleting nothing', async () => {
    const victim = await registeredUser(suite.stack);
    const attacker = await registeredUser(suite.stack);
    expectEnvelope(await users().delete(`/api/user/${victim.userId}`).set('Authorization', attacker.bearer), 403);
    expectEnvelope(await users().delete(`/api/user/${attacker.userId}`).set('Authorization', attacker.bearer), 403);
    expect((await readBack(victim.userId)).status).toBe(200);
    expect((await readBack(attacker.userId)).status).toBe(200);
  });

  it('answers 404 for an unknown id', async () => {
    const id = randomUUID();
    expectEnvelope(await users().delete(`/api/user/${id}`).set('Authorization', suite.admin.bearer), 404, `User not found with id: ${id}`);
  });

  it('answers 401 to an anonymous caller, deleting nothing', async () => {
    const profile = await createProfile();
    expectEnvelope(await users().delete(`/api/user/${profile.userId}`), 401, AUTHENTICATION_REQUIRED);
    expect((await readBack(profile.userId)).status).toBe(200);
  });
});

describe('POST /api/user/create', () => {
  it('answers 401 without the internal key or with a wrong one, creating nothing', async () => {
    const body = profileRequest();
    expectEnvelope(await users().post('/api/user/create').send(body), 401);
    expectEnvelope(await users().post('/api/user/create').set('X-Internal-Api-Key', 'wrong-key').send(body), 401);
    expectEnvelope(await users().post('/api/user/create').set('X-Internal-Api-Key', '').send(body), 401);
    expectEnvelope(await users().post('/api/user/create').set('Authorization', suite.admin.bearer).send(body), 401);
    expectEnvelope(await readBack(body.userId), 404);
  });

  it('creates the profile with the internal key', async () => {
    const body = profileRequest({ email: 'New.Profile.' + randomBytes(3).toString('hex') + '@Example.com' });
    const res = await users().post('/api/user/create').set('X-Internal-Api-Key', INTERNAL_KEY).send(body);
    expect(res.status).toBe(200);
    expectProfile(res.body, {
      userId: body.userId,
      email: body.email.toLowerCase(),
      firstName: body.firstName,
      lastName: body.lastName,
      phoneNumber: body.phoneNumber,
      dateOfBirth: body.dateOfBirth,
      address: body.address,
    });
    expect((await readBack(body.userId)).body).toEqual(res.body);
  });

  it('returns the same profile when the same userId is created twice, keeping one profile', async () => {
    const body = profileRequest();
    const first = await users().post('/api/user/create').set('X-Internal-Api-Key', INTERNAL_KEY).send(body);
    const second = await users().post('/api/user/create').set('X-Internal-Api-Key', INTERNAL_KEY).send(body);
    expect(first.status).toBe(200);
    expect(second.status).toBe(200);
    expect(second.body).toEqual(first.body);
    expect(await suite.stack.user.db.manager.count(UserProfile, { where: { userId: body.userId } })).toBe(1);
    const found = await users().get('/api/user/search').query({ keyword: body.email }).set('Authorization', suite.admin.bearer);
    expect(found.body).toEqual([first.body]);
  });

  it('keeps the first profile when the same userId is created again with other fields, also in parallel', async () => {
    const body = profileRequest({ firstName: 'Original' });
    const first = await users().post('/api/user/create').set('X-Internal-Api-Key', INTERNAL_KEY).send(body);
    expect(first.status).toBe(200);
    const again = await users()
      .post('/api/user/create')
      .set('X-Internal-Api-Key', INTERNAL_KEY)
      .send({ ...body, firstName: 'Replaced', address: 'Elsewhere' });
    expect(again.status).toBe(200);
    expect(again.body).toEqual(first.body);

    const racing = profileRequest();
    const results = await Promise.all(Array.from({ length: 8 }, () => users().post('/api/user/create').set('X-Internal-Api-Key', INTERNAL_KEY).send(racing)));
    expect(results.map((r) => r.status)).toEqual(Array(8).fill(200));
    results.forEach((r) => expect(r.body).toEqual(results[0].body));
    expect(await suite.stack.user.db.manager.count(UserProfile, { where: { userId: racing.userId } })).toBe(1);
    expect((await readBack(body.userId)).body).toEqual(first.body);
  });

  it('answers 409 when another userId reuses an existing email, whatever its case', async () => {
    const existing = await createProfile();
    const body = profileRequest({ email: existing.email.toUpperCase() });
    const res = await users().post('/api/user/create').set('X-Internal-Api-Key', INTERNAL_KEY).send(body);
    expectEnvelope(res, 409, `A user with email ${existing.email} already exists`);
    expectEnvelope(await readBack(body.userId), 404);
    expect(await suite.stack.user.db.manager.count(UserProfile, { where: { email: existing.email } })).toBe(1);
  });

  it('replaces a profile of the same email under a userId named in replacesUserIds, and only that one', async () => {
    const orphan = await createProfile();
    const create = (body: Record<string, unknown>) => users().post('/api/user/create').set('X-Internal-Api-Key', INTERNAL_KEY).send(body);

    const notTheHolder = profileRequest({ email: orphan.email, replacesUserIds: [randomUUID()] });
    expectEnvelope(await create(notTheHolder), 409, `A user with email ${orphan.email} already exists`);
    expect((await readBack(orphan.userId)).status).toBe(200);

    const body = profileRequest({ email: orphan.email, replacesUserIds: [orphan.userId] });
    const res = await create(body);
    expect(res.status).toBe(200);
    expectProfile(res.body, { userId: body.userId, email: orphan.email });
    expectEnvelope(await readBack(orphan.userId), 404);
    const found = await users().get('/api/user/search').query({ keyword: orphan.email }).set('Authorization', suite.admin.bearer);
    expect(found.body).toEqual([res.body]);

    // The same create again changes nothing; a late create of the orphan meets the new profile.
    expect((await create(body)).body).toEqual(res.body);
    expectEnvelope(await create(profileRequest({ userId: orphan.userId, email: orphan.email })), 409);
    expect((await readBack(body.userId)).body).toEqual(res.body);
  });

  it('answers 400 for an invalid body with the internal key', async () => {
    const res = await users()
      .post('/api/user/create')
      .set('X-Internal-Api-Key', INTERNAL_KEY)
      .send(profileRequest({ userId: 'nope', phoneNumber: 'x' }));
    expectEnvelope(res, 400, 'Validation failed for one or more fields');
    expect(res.body.validationErrors).toEqual(expect.arrayContaining(['userId: must be a UUID', expect.stringMatching(/^phoneNumber: /)]));
  });
});
