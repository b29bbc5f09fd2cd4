/**
 * What the user service's own test files share: the service (with auth) started around the calling
 * file, profiles made through its internal create call, and the exact shape of a profile.
 */
import { randomUUID } from 'node:crypto';
import request from 'supertest';
import type { UserResponseDto } from '../platform/contracts/profiles';
import { StackSuite, stackSuite, TIMESTAMP, UUID } from './harness';
import { INTERNAL_KEY, newUser } from './stack';
import { waitFor } from './wait';

export class UserService extends StackSuite {
  readonly users = () => request(this.stack.urls.user);

  /** A profile body for the internal create call, with a fresh userId and a unique email. */
  readonly profileRequest = (overrides: Record<string, unknown> = {}) => {
    const { password: _password, ...fields } = newUser();
    return { userId: randomUUID(), ...fields, ...overrides };
  };

  readonly createProfile = async (overrides: Record<string, unknown> = {}): Promise<UserResponseDto> => {
    const res = await this.users().post('/api/user/create').set('X-Internal-Api-Key', INTERNAL_KEY).send(this.profileRequest(overrides));
    if (res.status !== 200) throw new Error(`create failed: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body as UserResponseDto;
  };

  /** The profile as the admin reads it. */
  readonly readBack = (id: string): Promise<request.Response> => this.users().get(`/api/user/${id}`).set('Authorization', this.admin.bearer);
}

/** Starts auth and user before the calling file's tests and stops them after. */
export const userService = (): UserService => stackSuite(new UserService());

const PROFILE_FIELDS = ['userId', 'firstName', 'lastName', 'email', 'phoneNumber', 'dateOfBirth', 'address', 'emailVerified', 'createdAt', 'updatedAt'];

/** The exact UserResponseDto: ten fields, no more, timestamps in UTC without a zone. */
export function expectProfile(body: unknown, expected: Partial<UserResponseDto> = {}): void {
  expect(Object.keys(body as object).sort()).toEqual([...PROFILE_FIELDS].sort());
  expect(body).toEqual({
    userId: expect.stringMatching(UUID),
    firstName: expect.any(String),
    lastName: expect.any(String),
    email: expect.any(String),
    phoneNumber: expect.any(String),
    dateOfBirth: expect.stringMatching(/^\d{4}-\d{2}-\d{2}$/),
    address: expect.any(String),
    emailVerified: expect.any(Boolean),
    createdAt: expect.stringMatching(TIMESTAMP),
    updatedAt: expect.stringMatching(TIMESTAMP),
    ...expected,
  });
}

/** Waits until the clock has moved past `timestamp`, so the next profile is strictly newer. */
export async function afterMillisecond(timestamp: string): Promise<void> {
  await waitFor(() => Date.now() > Date.parse(`${timestamp}Z`), { timeoutMs: 1000, what: 'the next millisecond' });
}
