/** The auth service's one call to the user service: create the profile at registration. */
import { callService } from '../../platform/http';
import { INTERNAL_KEY_HEADER } from '../../platform/auth';
import { serviceUnavailable } from '../../platform/errors';
import type { CreateUserProfileRequest } from '../../platform/contracts/profiles';
import type { ProfileDirectory } from './service';

/** `userServiceUrl` is read on every call, so a caller may learn the URL after construction. */
export function userServiceProfiles(userServiceUrl: () => string, internalApiKey: string, timeoutMs: number): ProfileDirectory {
  return {
    async createProfile(request: CreateUserProfileRequest) {
      const { userId, email, firstName, lastName, phoneNumber, dateOfBirth, address, replacesUserIds } = request;
      const response = await callService(
        `${userServiceUrl()}/api/user/create`,
        {
          method: 'POST',
          headers: { 'content-type': 'application/json', [INTERNAL_KEY_HEADER]: internalApiKey },
          body: JSON.stringify({ userId, email, firstName, lastName, phoneNumber, dateOfBirth, address, replacesUserIds }),
        },
        { service: 'user', timeoutMs },
      );
      if (!response.ok) {
        throw serviceUnavailable(`The user service could not create the profile (status ${response.status})`, 'USER_UNAVAILABLE');
      }
    },
  };
}
