import request from 'supertest';
import { registeredUser, StackSuite, stackSuite } from '../../test/harness';
import { errorCodes, graphql, leaksInternals } from '../../test/graphql';
import type { UserService } from './service';

const suite = stackSuite(new StackSuite());

const users = () => (suite.stack.user as unknown as { users: UserService }).users;
const gql = (query: string, bearer?: string, variables?: Record<string, unknown>) => graphql(suite.stack.urls.user, query, { bearer, variables });

const ENTITIES = `query ($representations: [_Any!]!) {
  _entities(representations: $representations) { ... on User { userId email firstName } }
}`;
const asUser = (userId: string) => ({ __typename: 'User', userId });

describe('the user subgraph', () => {
  it('resolves User references for an ADMIN through one batched read', async () => {
    const [a, b] = [await registeredUser(suite.stack), await registeredUser(suite.stack)];
    const batch = jest.spyOn(users(), 'profilesFor');
    try {
      const res = await gql(ENTITIES, suite.admin.bearer, { representations: [asUser(a.userId), asUser(b.userId.toUpperCase())] });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        data: {
          _entities: [
            { userId: a.userId, email: a.email, firstName: 'Ada' },
            { userId: b.userId, email: b.email, firstName: 'Ada' },
          ],
        },
      });
      expect(batch).toHaveBeenCalledTimes(1);
      expect(batch.mock.calls[0][1]).toEqual([a.userId, b.userId]);
    } finally {
      batch.mockRestore();
    }
  });

  it("gives a USER their own profile and FORBIDDEN for someone else's, in the same batch", async () => {
    const [me, other] = [await registeredUser(suite.stack), await registeredUser(suite.stack)];
    const res = await gql(ENTITIES, me.bearer, { representations: [asUser(me.userId), asUser(other.userId)] });
    expect(res.status).toBe(200);
    expect(res.body.data._entities).toEqual([{ userId: me.userId, email: me.email, firstName: 'Ada' }, null]);
    expect(res.body.errors).toEqual([expect.objectContaining({ message: 'Access is denied', path: ['_entities', 1], extensions: { code: 'FORBIDDEN', reason: 'FORBIDDEN' } })]);
  });

  it('answers `me` and `user` with the same fields REST shows', async () => {
    const me = await registeredUser(suite.stack);
    const rest = await request(suite.stack.urls.user).get(`/api/user/${me.userId}`).set('Authorization', me.bearer);
    const res = await gql(`query ($id: ID!) { me { userId email phoneNumber dateOfBirth address createdAt } user(userId: $id) { userId lastName } }`, me.bearer, { id: me.userId });
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({
      me: {
        userId: me.userId,
        email: rest.body.email,
        phoneNumber: rest.body.phoneNumber,
        dateOfBirth: rest.body.dateOfBirth,
        address: rest.body.address,
        createdAt: rest.body.createdAt,
      },
      user: { userId: me.userId, lastName: 'Reader' },
    });
  });

  it('keeps `users` and `searchUsers` to ADMINs: FORBIDDEN for a USER, UNAUTHENTICATED without a valid token', async () => {
    const reader = await registeredUser(suite.stack);
    const asUserRes = await gql('{ users { userId } }', reader.bearer);
    expect(asUserRes.status).toBe(200);
    expect(errorCodes(asUserRes.body)).toEqual(['FORBIDDEN']);
    expect(asUserRes.body.data).toBeNull();

    const anonymous = await gql('{ users { userId } }');
    expect(errorCodes(anonymous.body)).toEqual(['UNAUTHENTICATED']);
    expect(anonymous.body.errors[0].message).toBe('Authentication is required to access this resource');

    const forged = await gql('{ searchUsers(keyword: "ada") { userId } }', 'Bearer not.a.token');
    expect(errorCodes(forged.body)).toEqual(['UNAUTHENTICATED']);

    const found = await gql('query ($k: String!) { searchUsers(keyword: $k) { userId } }', suite.admin.bearer, { k: reader.email.toUpperCase() });
    expect(found.body).toEqual({ data: { searchUsers: [{ userId: reader.userId }] } });
    const all = await gql('{ users { userId } }', suite.admin.bearer);
    expect(all.body.data.users).toEqual(expect.arrayContaining([{ userId: reader.userId }, { userId: suite.admin.userId }]));
  });

  it('answers a blank keyword with BAD_USER_INPUT and the REST validationErrors', async () => {
    const res = await gql('{ searchUsers(keyword: "  ") { userId } }', suite.admin.bearer);
    expect(res.body.errors).toEqual([
      expect.objectContaining({
        message: 'Validation failed for one or more fields',
        extensions: { code: 'BAD_USER_INPUT', reason: 'VALIDATION_FAILED', validationErrors: ['keyword: must not be blank'] },
      }),
    ]);
  });

  it('updates a profile with the REST rules: owner or ADMIN, the same validation errors', async () => {
    const [owner, other] = [await registeredUser(suite.stack), await registeredUser(suite.stack)];
    const update = 'mutation ($id: ID!, $input: UserInput!) { updateUser(userId: $id, input: $input) { userId firstName phoneNumber } }';
    const input = { firstName: ' Grace ', lastName: 'Hopper', phoneNumber: '+14155550199', dateOfBirth: '1906-12-09', address: '1 Navy Way', email: null };

    const ok = await gql(update, owner.bearer, { id: owner.userId, input });
    expect(ok.body).toEqual({ data: { updateUser: { userId: owner.userId, firstName: 'Grace', phoneNumber: '+14155550199' } } });

    const denied = await gql(update, other.bearer, { id: owner.userId, input });
    expect(errorCodes(denied.body)).toEqual(['FORBIDDEN']);

    const invalid = await gql(update, suite.admin.bearer, { id: owner.userId, input: { ...input, phoneNumber: '12', dateOfBirth: '2999-01-01' } });
    const rest = await request(suite.stack.urls.user)
      .put(`/api/user/update/${owner.userId}`)
      .set('Authorization', suite.admin.bearer)
      .send({ ...input, email: undefined, phoneNumber: '12', dateOfBirth: '2999-01-01' });
    expect(rest.status).toBe(400);
    expect(invalid.body.errors).toEqual([
      expect.objectContaining({ extensions: { code: 'BAD_USER_INPUT', reason: 'VALIDATION_FAILED', validationErrors: rest.body.validationErrors } }),
    ]);

    const badId = await gql(update, suite.admin.bearer, { id: 'not-a-uuid', input });
    expect(badId.body.errors[0].extensions).toEqual({ code: 'BAD_USER_INPUT', reason: 'VALIDATION_FAILED', validationErrors: ['userId: must be a UUID'] });
  });

  it("deletes a profile as an ADMIN, but never the ADMIN's own", async () => {
    const doomed = await registeredUser(suite.stack);
    const res = await gql('mutation ($id: ID!) { deleteUser(userId: $id) }', suite.admin.bearer, { id: doomed.userId });
    expect(res.body).toEqual({ data: { deleteUser: doomed.userId } });
    const gone = await gql('query ($id: ID!) { user(userId: $id) { userId } }', suite.admin.bearer, { id: doomed.userId });
    expect(gone.body.errors).toEqual([
      expect.objectContaining({ message: `User not found with id: ${doomed.userId}`, extensions: { code: 'NOT_FOUND', reason: 'USER_NOT_FOUND' } }),
    ]);

    const self = await gql('mutation ($id: ID!) { deleteUser(userId: $id) }', suite.admin.bearer, { id: suite.admin.userId });
    expect(self.body.errors).toEqual([expect.objectContaining({ message: 'Admins cannot delete their own account', extensions: { code: 'FORBIDDEN', reason: 'FORBIDDEN' } })]);
  });

  it('never answers with a stack trace, and keeps CSRF prevention on', async () => {
    const res = await gql('{ users { userId } }', 'Bearer x');
    expect(leaksInternals(res.body)).toBe(false);
    const simpleGet = await request(suite.stack.urls.user).get('/graphql').query({ query: '{ __typename }' });
    expect(simpleGet.status).toBe(400);
    expect(simpleGet.text).toMatch(/CSRF/);
  });

  it('publishes its SDL for composition tools', async () => {
    const res = await gql('{ _service { sdl } }');
    expect(res.body.data._service.sdl).toMatch(/type User\s+@key\(fields: "userId"\)/);
  });
});
