/** Reading profiles: GET /api/user/{id}, the admin's list GET /api/user/ and GET /api/user/search. */
import { randomBytes, randomUUID } from 'node:crypto';
import type request from 'supertest';
import { AUTHENTICATION_REQUIRED, expectEnvelope, registeredUser } from '../../test/harness';
import { afterMillisecond, expectProfile, userService } from '../../test/user-service';
import type { UserResponseDto } from '../../platform/contracts/profiles';
import { UserProfile } from './entities';

const suite = userService();
const { users, createProfile } = suite;

describe('GET /api/user/{id}', () => {
  it('answers any authenticated caller with the exact UserResponseDto', async () => {
    const registering = Date.now();
    const owner = await registeredUser(suite.stack, { firstName: 'Owner', lastName: 'Person' });
    const stranger = await registeredUser(suite.stack);
    const res = await users().get(`/api/user/${owner.userId}`).set('Authorization', stranger.bearer);
    const answered = Date.now();
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
    // The moment of the registration: after the test began it and before the answer came back.
    expect(Date.parse(`${res.body.createdAt}Z`)).toBeGreaterThanOrEqual(registering);
    expect(Date.parse(`${res.body.createdAt}Z`)).toBeLessThanOrEqual(answered);
    expect(res.body.updatedAt).toBe(res.body.createdAt);
  });

  it('accepts an upper-case UUID and answers with the lower-case userId', async () => {
    const profile = await createProfile();
    const res = await users().get(`/api/user/${profile.userId.toUpperCase()}`).set('Authorization', suite.admin.bearer);
    expect(res.status).toBe(200);
    expect(res.body).toEqual(profile);
  });

  it('answers 404 for an unknown id', async () => {
    const id = randomUUID();
    const res = await users().get(`/api/user/${id}`).set('Authorization', suite.admin.bearer);
    expectEnvelope(res, 404, `User not found with id: ${id}`);
    expect(res.body.path).toBe(`/api/user/${id}`);
  });

  it('answers 400 for an id that is not a UUID', async () => {
    const res = await users().get('/api/user/not-a-uuid').set('Authorization', suite.admin.bearer);
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

    const res = await users().get('/api/user/').set('Authorization', suite.admin.bearer);
    expect(res.status).toBe(200);
    const list = res.body as UserResponseDto[];
    list.forEach((profile) => expectProfile(profile));
    expect(list).toHaveLength(await suite.stack.user.db.manager.count(UserProfile));
    expect(list[0].userId).toBe(suite.admin.userId);
    const createdAts = list.map((p) => p.createdAt);
    expect(createdAts).toEqual([...createdAts].sort());
    const ids = list.map((p) => p.userId);
    expect(ids.indexOf(first.userId)).toBeLessThan(ids.indexOf(second.userId));
    expect(ids.indexOf(second.userId)).toBeLessThan(ids.indexOf(third.userId));
    expect(list.find((p) => p.userId === second.userId)).toEqual(second);

    const withoutSlash = await users().get('/api/user').set('Authorization', suite.admin.bearer);
    expect(withoutSlash.status).toBe(200);
    expect(withoutSlash.body).toEqual(list);
  });

  it('answers 403 to a USER', async () => {
    const user = await registeredUser(suite.stack);
    expectEnvelope(await users().get('/api/user/').set('Authorization', user.bearer), 403);
    expectEnvelope(await users().get('/api/user').set('Authorization', user.bearer), 403);
  });

  it('answers 401 to an anonymous caller', async () => {
    expectEnvelope(await users().get('/api/user/'), 401, AUTHENTICATION_REQUIRED);
  });
});

describe('GET /api/user/search', () => {
  const search = (keyword: string) => users().get('/api/user/search').query({ keyword }).set('Authorization', suite.admin.bearer);
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

  it('treats quotes, the escape character ! and backslashes as plain characters', async () => {
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
    const missing = await users().get('/api/user/search').set('Authorization', suite.admin.bearer);
    expectEnvelope(missing, 400, 'Validation failed for one or more fields');
    expect(missing.body.validationErrors).toEqual(['keyword: must not be blank']);
    expectEnvelope(await search(''), 400);
    expectEnvelope(await search('   '), 400);
  });

  it('answers 403 to a USER and 401 to an anonymous caller', async () => {
    const user = await registeredUser(suite.stack);
    expectEnvelope(await users().get('/api/user/search').query({ keyword: user.email }).set('Authorization', user.bearer), 403);
    expectEnvelope(await users().get('/api/user/search').query({ keyword: 'a' }), 401, AUTHENTICATION_REQUIRED);
  });
});
