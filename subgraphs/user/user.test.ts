import { randomBytes, randomUUID } from 'node:crypto';
import request from 'supertest';
import { adminSession, expectEnvelope, INTERNAL_KEY, newUser, registeredUser, startStack, waitFor, type Stack } from '../../test/harness';
import type { UserResponseDto } from './dto';
import { UserProfile } from './entities';

let stack: Stack;
let admin: Awaited<ReturnType<typeof adminSession>>;
beforeAll(async () => {
  stack = await startStack();
  admin = await adminSession(stack);
});
afterAll(async () => {
  await stack?.stop();
});

const users = () => request(stack.urls.user);

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}$/;
const PROFILE_FIELDS = ['userId', 'firstName', 'lastName', 'email', 'phoneNumber', 'dateOfBirth', 'address', 'createdAt', 'updatedAt'];
const AUTHENTICATION_REQUIRED = 'Authentication is required to access this resource';

/** The exact UserResponseDto: nine fields, no more, timestamps in UTC without a zone. */
function expectProfile(body: unknown, expected: Partial<UserResponseDto> = {}): void {
  expect(Object.keys(body as object).sort()).toEqual([...PROFILE_FIELDS].sort());
  expect(body).toEqual({
    userId: expect.stringMatching(UUID),
    firstName: expect.any(String),
    lastName: expect.any(String),
    email: expect.any(String),
    phoneNumber: expect.any(String),
    dateOfBirth: expect.stringMatching(/^\d{4}-\d{2}-\d{2}$/),
    address: expect.any(String),
    createdAt: expect.stringMatching(TIMESTAMP),
    updatedAt: expect.stringMatching(TIMESTAMP),
    ...expected,
  });
}

/** A profile body for the internal create call, with a fresh userId and a unique email. */
function profileRequest(overrides: Record<string, unknown> = {}) {
  const { password: _password, ...fields } = newUser();
  return { userId: randomUUID(), ...fields, ...overrides };
}

async function createProfile(overrides: Record<string, unknown> = {}): Promise<UserResponseDto> {
  const res = await users().post('/api/user/create').set('X-Internal-Api-Key', INTERNAL_KEY).send(profileRequest(overrides));
  if (res.status !== 200) throw new Error(`create failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body as UserResponseDto;
}

/** Waits until the clock has moved past `timestamp`, so the next profile is strictly newer. */
async function afterMillisecond(timestamp: string): Promise<void> {
  await waitFor(() => Date.now() > Date.parse(`${timestamp}Z`), { timeoutMs: 1000, what: 'the next millisecond' });
}

async function readBack(id: string): Promise<request.Response> {
  return users().get(`/api/user/${id}`).set('Authorization', admin.bearer);
}

function updateBody(overrides: Record<string, unknown> = {}) {
  return { firstName: 'Grace', lastName: 'Hopper', phoneNumber: '+442079460000', dateOfBirth: '1985-12-09', address: '2 Compiler Court, Arlington', ...overrides };
}

describe('GET /api/user/{id}', () => {
  it('answers any authenticated caller with the exact UserResponseDto', async () => {
    const owner = await registeredUser(stack, { firstName: 'Owner', lastName: 'Person' });
    const stranger = await registeredUser(stack);
    const res = await users().get(`/api/user/${owner.userId}`).set('Authorization', stranger.bearer);
    expect(res.status).toBe(200);
    expectProfile(res.body, {
      userId: owner.userId,
      firstName: 'Owner',
      lastName: 'Person',
      email: owner.email,
      phoneNumber: owner.phoneNumber,
      dateOfBirth: owner.dateOfBirth,
      address: owner.address,
    });
    expect(Math.abs(Date.parse(`${res.body.createdAt}Z`) - Date.now())).toBeLessThan(5 * 60_000);
    expect(res.body.updatedAt).toBe(res.body.createdAt);
  });

  it('accepts an upper-case UUID and answers with the lower-case userId', async () => {
    const profile = await createProfile();
    const res = await users().get(`/api/user/${profile.userId.toUpperCase()}`).set('Authorization', admin.bearer);
    expect(res.status).toBe(200);
    expect(res.body).toEqual(profile);
  });

  it('answers 404 for an unknown id', async () => {
    const id = randomUUID();
    const res = await users().get(`/api/user/${id}`).set('Authorization', admin.bearer);
    expectEnvelope(res, 404, `User not found with id: ${id}`);
    expect(res.body.path).toBe(`/api/user/${id}`);
  });

  it('answers 400 for an id that is not a UUID', async () => {
    const res = await users().get('/api/user/not-a-uuid').set('Authorization', admin.bearer);
    expectEnvelope(res, 400, 'Validation failed for one or more fields');
    expect(res.body.validationErrors).toEqual(['id: must be a UUID']);
  });

  it('answers 401 to an anonymous caller', async () => {
    const profile = await createProfile();
    expectEnvelope(await users().get(`/api/user/${profile.userId}`), 401, AUTHENTICATION_REQUIRED);
  });
});

describe('GET /api/user/', () => {
  it('answers an ADMIN with every profile, oldest first, with and without the trailing slash', async () => {
    const first = await createProfile();
    await afterMillisecond(first.createdAt);
    const second = await createProfile();
    await afterMillisecond(second.createdAt);
    const third = await createProfile();

    const res = await users().get('/api/user/').set('Authorization', admin.bearer);
    expect(res.status).toBe(200);
    const list = res.body as UserResponseDto[];
    list.forEach((profile) => expectProfile(profile));
    expect(list).toHaveLength(await stack.user.db.manager.count(UserProfile));
    expect(list[0].userId).toBe(admin.userId);
    const createdAts = list.map((p) => p.createdAt);
    expect(createdAts).toEqual([...createdAts].sort());
    const ids = list.map((p) => p.userId);
    expect(ids.indexOf(first.userId)).toBeLessThan(ids.indexOf(second.userId));
    expect(ids.indexOf(second.userId)).toBeLessThan(ids.indexOf(third.userId));
    expect(list.find((p) => p.userId === second.userId)).toEqual(second);

    const withoutSlash = await users().get('/api/user').set('Authorization', admin.bearer);
    expect(withoutSlash.status).toBe(200);
    expect(withoutSlash.body).toEqual(list);
  });

  it('answers 403 to a USER', async () => {
    const user = await registeredUser(stack);
    expectEnvelope(await users().get('/api/user/').set('Authorization', user.bearer), 403);
    expectEnvelope(await users().get('/api/user').set('Authorization', user.bearer), 403);
  });

  it('answers 401 to an anonymous caller', async () => {
    expectEnvelope(await users().get('/api/user/'), 401, AUTHENTICATION_REQUIRED);
  });
});

describe('GET /api/user/search', () => {
  const search = (keyword: string) => users().get('/api/user/search').query({ keyword }).set('Authorization', admin.bearer);
  const idsOf = (res: request.Response) => (res.body as UserResponseDto[]).map((p) => p.userId);
  const containsLiterally = (profile: UserResponseDto, text: string) =>
    [profile.firstName, profile.lastName, profile.email].some((field) => field.toLowerCase().includes(text.toLowerCase()));

  it('matches a substring of the first name, last name or email, ignoring case', async () => {
    const tag = randomBytes(4).toString('hex');
    const byFirst = await createProfile({ firstName: `Quill${tag}ina` });
    const byLast = await createProfile({ lastName: `Van${tag.toUpperCase()}dyke` });
    const byEmail = await createProfile({ email: `box.${tag}@Example.com` });
    const other = await createProfile();

    const res = await search(tag.toUpperCase());
    expect(res.status).toBe(200);
    expect(idsOf(res)).toEqual([byFirst.userId, byLast.userId, byEmail.userId]);
    (res.body as UserResponseDto[]).forEach((profile) => expectProfile(profile));
    expect(res.body[1]).toEqual(byLast);
    expect(idsOf(res)).not.toContain(other.userId);
  });

  it('treats % and _ as plain characters', async () => {
    const tag = randomBytes(4).toString('hex');
    const literal = await createProfile({ firstName: `100%_pure${tag}` });
    const lookalike = await createProfile({ firstName: `100xxpure${tag}` });

    const exact = await search(`100%_pure${tag}`);
    expect(exact.status).toBe(200);
    expect(idsOf(exact)).toEqual([literal.userId]);

    const percent = await search('%');
    expect(percent.status).toBe(200);
    expect(idsOf(percent)).toContain(literal.userId);
    expect(idsOf(percent)).not.toContain(lookalike.userId);
    (percent.body as UserResponseDto[]).forEach((profile) => expect(containsLiterally(profile, '%')).toBe(true));

    const underscore = await search('_');
    expect(underscore.status).toBe(200);
    expect(idsOf(underscore)).toContain(literal.userId);
    expect(idsOf(underscore)).not.toContain(lookalike.userId);
    (underscore.body as UserResponseDto[]).forEach((profile) => expect(containsLiterally(profile, '_')).toBe(true));
  });

  it("treats quotes, the escape character ! and backslashes as plain characters", async () => {
    const tag = randomBytes(4).toString('hex');
    const quoted = await createProfile({ lastName: `O'Brien${tag}` });
    const bang = await createProfile({ firstName: `Bang!%${tag}` });
    const bangLookalike = await createProfile({ firstName: `Bangx%${tag}` });
    const slash = await createProfile({ lastName: `Slash\\_${tag}` });
    const slashLookalike = await createProfile({ lastName: `Slashx_${tag}` });

    const quote = await search(`o'brien${tag}`);
    expect(quote.status).toBe(200);
    expect(idsOf(quote)).toEqual([quoted.userId]);
    const onlyQuote = await search("'");
    expect(idsOf(onlyQuote)).toContain(quoted.userId);
    (onlyQuote.body as UserResponseDto[]).forEach((profile) => expect(containsLiterally(profile, "'")).toBe(true));

    expect(idsOf(await search(`g!%${tag}`))).toEqual([bang.userId]);
    const onlyBang = await search('!');
    expect(idsOf(onlyBang)).toContain(bang.userId);
    expect(idsOf(onlyBang)).not.toContain(bangLookalike.userId);
    (onlyBang.body as UserResponseDto[]).forEach((profile) => expect(containsLiterally(profile, '!')).toBe(true));

    expect(idsOf(await search(`h\\_${tag}`))).toEqual([slash.userId]);
    const onlyBackslash = await search('\\');
    expect(idsOf(onlyBackslash)).toContain(slash.userId);
    expect(idsOf(onlyBackslash)).not.toContain(slashLookalike.userId);
    (onlyBackslash.body as UserResponseDto[]).forEach((profile) => expect(containsLiterally(profile, '\\')).toBe(true));
  });

  it('answers an empty array when nothing matches', async () => {
    const res = await search(`no-such-${randomBytes(6).toString('hex')}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual([]);
  });

  it('answers 400 when the keyword is missing or blank', async () => {
    const missing = await users().get('/api/user/search').set('Authorization', admin.bearer);
    expectEnvelope(missing, 400, 'Validation failed for one or more fields');
    expect(missing.body.validationErrors).toEqual(['keyword: must not be blank']);
    expectEnvelope(await search(''), 400);
    expectEnvelope(await search('   '), 400);
  });

  it('answers 403 to a USER and 401 to an anonymous caller', async () => {
    const user = await registeredUser(stack);
    expectEnvelope(await users().get('/api/user/search').query({ keyword: user.email }).set('Authorization', user.bearer), 403);
    expectEnvelope(await users().get('/api/user/search').query({ keyword: 'a' }), 401, AUTHENTICATION_REQUIRED);
  });
});

describe('PUT /api/user/update/{id}', () => {
  it('lets a user update their own profile, keeping email and createdAt', async () => {
    const user = await registeredUser(stack);
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
    const user = await registeredUser(stack);
    const res = await users().put(`/api/user/update/${user.userId}`).set('Authorization', admin.bearer).send(updateBody({ address: 'Changed by admin' }));
    expect(res.status).toBe(200);
    expectProfile(res.body, { userId: user.userId, email: user.email, address: 'Changed by admin' });
    expect((await readBack(user.userId)).body.address).toBe('Changed by admin');
  });

  it('answers 403 when a USER updates someone else, changing nothing', async () => {
    const victim = await registeredUser(stack);
    const attacker = await registeredUser(stack);
    const before = (await readBack(victim.userId)).body;
    const res = await users().put(`/api/user/update/${victim.userId}`).set('Authorization', attacker.bearer).send(updateBody());
    expectEnvelope(res, 403);
    expect((await readBack(victim.userId)).body).toEqual(before);
  });

  it('answers 400 with validationErrors for every invalid field, changing nothing', async () => {
    const user = await registeredUser(stack);
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
    const user = await registeredUser(stack);
    const res = await users().put(`/api/user/update/${user.userId}`).set('Authorization', user.bearer).send(updateBody({ email: user.email.toUpperCase() }));
    expect(res.status).toBe(200);
    expectProfile(res.body, { userId: user.userId, email: user.email, firstName: 'Grace' });
    expect((await readBack(user.userId)).body.email).toBe(user.email);
  });

  it('treats a null email as not sent', async () => {
    const user = await registeredUser(stack);
    const res = await users().put(`/api/user/update/${user.userId}`).set('Authorization', user.bearer).send(updateBody({ email: null }));
    expect(res.status).toBe(200);
    expect(res.body.email).toBe(user.email);
  });

  it('answers 400 for a different email, changing nothing', async () => {
    const user = await registeredUser(stack);
    const before = (await readBack(user.userId)).body;
    const res = await users().put(`/api/user/update/${user.userId}`).set('Authorization', user.bearer).send(updateBody({ email: 'someone.else@example.com' }));
    expectEnvelope(res, 400, 'The email is the login identity and cannot be changed here');
    expect((await readBack(user.userId)).body).toEqual(before);
  });

  it('answers 404 for an unknown id', async () => {
    const id = randomUUID();
    const res = await users().put(`/api/user/update/${id}`).set('Authorization', admin.bearer).send(updateBody());
    expectEnvelope(res, 404, `User not found with id: ${id}`);
    expectEnvelope(await readBack(id), 404);
  });

  it('answers 400 for a non-UUID id and 401 to an anonymous caller', async () => {
    expectEnvelope(await users().put('/api/user/update/12345').set('Authorization', admin.bearer).send(updateBody()), 400);
    const user = await registeredUser(stack);
    expectEnvelope(await users().put(`/api/user/update/${user.userId}`).send(updateBody()), 401, AUTHENTICATION_REQUIRED);
    expect((await readBack(user.userId)).body.firstName).toBe(user.firstName);
  });
});

describe('DELETE /api/user/{id}', () => {
  it('lets an ADMIN delete a profile, answering plain text; the profile is then gone', async () => {
    const user = await registeredUser(stack);
    const res = await users().delete(`/api/user/${user.userId}`).set('Authorization', admin.bearer);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain/);
    expect(res.text).toBe(`User with id : ${user.userId} Deleted successfully`);
    expectEnvelope(await readBack(user.userId), 404, `User not found with id: ${user.userId}`);
    expect(await stack.user.db.manager.count(UserProfile, { where: { userId: user.userId } })).toBe(0);
  });

  it('answers 403 when an admin deletes their own account, which remains', async () => {
    const res = await users().delete(`/api/user/${admin.userId}`).set('Authorization', admin.bearer);
    expectEnvelope(res, 403, 'Admins cannot delete their own account');
    expect((await readBack(admin.userId)).status).toBe(200);
  });

  it('answers 403 to a USER, deleting nothing', async () => {
    const victim = await registeredUser(stack);
    const attacker = await registeredUser(stack);
    expectEnvelope(await users().delete(`/api/user/${victim.userId}`).set('Authorization', attacker.bearer), 403);
    expectEnvelope(await users().delete(`/api/user/${attacker.userId}`).set('Authorization', attacker.bearer), 403);
    expect((await readBack(victim.userId)).status).toBe(200);
    expect((await readBack(attacker.userId)).status).toBe(200);
  });

  it('answers 404 for an unknown id', async () => {
    const id = randomUUID();
    expectEnvelope(await users().delete(`/api/user/${id}`).set('Authorization', admin.bearer), 404, `User not found with id: ${id}`);
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
    expectEnvelope(await users().post('/api/user/create').set('Authorization', admin.bearer).send(body), 401);
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
    expect(await stack.user.db.manager.count(UserProfile, { where: { userId: body.userId } })).toBe(1);
    const found = await users().get('/api/user/search').query({ keyword: body.email }).set('Authorization', admin.bearer);
    expect(found.body).toEqual([first.body]);
  });

  it('keeps the first profile when the same userId is created again with other fields, also in parallel', async () => {
    const body = profileRequest({ firstName: 'Original' });
    const first = await users().post('/api/user/create').set('X-Internal-Api-Key', INTERNAL_KEY).send(body);
    expect(first.status).toBe(200);
    const again = await users().post('/api/user/create').set('X-Internal-Api-Key', INTERNAL_KEY).send({ ...body, firstName: 'Replaced', address: 'Elsewhere' });
    expect(again.status).toBe(200);
    expect(again.body).toEqual(first.body);

    const racing = profileRequest();
    const results = await Promise.all(Array.from({ length: 8 }, () => users().post('/api/user/create').set('X-Internal-Api-Key', INTERNAL_KEY).send(racing)));
    expect(results.map((r) => r.status)).toEqual(Array(8).fill(200));
    results.forEach((r) => expect(r.body).toEqual(results[0].body));
    expect(await stack.user.db.manager.count(UserProfile, { where: { userId: racing.userId } })).toBe(1);
    expect((await readBack(body.userId)).body).toEqual(first.body);
  });

  it('answers 409 when another userId reuses an existing email, whatever its case', async () => {
    const existing = await createProfile();
    const body = profileRequest({ email: existing.email.toUpperCase() });
    const res = await users().post('/api/user/create').set('X-Internal-Api-Key', INTERNAL_KEY).send(body);
    expectEnvelope(res, 409, `A user with email ${existing.email} already exists`);
    expectEnvelope(await readBack(body.userId), 404);
    expect(await stack.user.db.manager.count(UserProfile, { where: { email: existing.email } })).toBe(1);
  });

  it('answers 400 for an invalid body with the internal key', async () => {
    const res = await users().post('/api/user/create').set('X-Internal-Api-Key', INTERNAL_KEY).send(profileRequest({ userId: 'nope', phoneNumber: 'x' }));
    expectEnvelope(res, 400, 'Validation failed for one or more fields');
    expect(res.body.validationErrors).toEqual(expect.arrayContaining(['userId: must be a UUID', expect.stringMatching(/^phoneNumber: /)]));
  });
});
