/**
 * Profiles: reads, search, update and delete with their role and ownership rules, and the internal
 * create called at registration. REST routes and GraphQL resolvers both call these functions.
 */
import { In, type EntityManager } from 'typeorm';
import type { Database } from '../../platform/database';
import { containsPattern, isUniqueViolation } from '../../platform/database';
import { assertRole, assertSelfOrAdmin, isSelfOrAdmin, type Principal } from '../../platform/auth';
import { type AppError, badRequest, conflict, contractTimestamp, forbidden, notFound } from '../../platform/errors';
import type { CreateUserProfileRequest, ProfileFieldsDto, UserResponseDto } from '../../platform/contracts/profiles';
import { storedKey } from '../../platform/validation';
import type { UserRequestDto } from './dto';
import { UserProfile } from './entities';
import { publishUserDeleted } from './events';

export function toUserResponse(profile: UserProfile): UserResponseDto {
  return {
    userId: profile.userId,
    firstName: profile.firstName,
    lastName: profile.lastName,
    email: profile.email,
    phoneNumber: profile.phoneNumber,
    dateOfBirth: profile.dateOfBirth,
    address: profile.address,
    emailVerified: profile.emailVerified,
    createdAt: contractTimestamp(profile.createdAt),
    updatedAt: contractTimestamp(profile.updatedAt),
  };
}

const userNotFound = (id: string) => notFound(`User not found with id: ${id}`, 'USER_NOT_FOUND');

function profileFields(dto: ProfileFieldsDto): Pick<UserProfile, 'firstName' | 'lastName' | 'phoneNumber' | 'dateOfBirth' | 'address'> {
  return {
    firstName: dto.firstName.trim(),
    lastName: dto.lastName.trim(),
    phoneNumber: dto.phoneNumber,
    dateOfBirth: dto.dateOfBirth,
    address: dto.address.trim(),
  };
}

export class UserService {
  constructor(private readonly db: Database) {}

  async getUser(id: string): Promise<UserResponseDto> {
    const profile = await this.db.manager.findOne(UserProfile, { where: { userId: id } });
    if (!profile) throw userNotFound(id);
    return toUserResponse(profile);
  }

  /** Batch lookup for federation references: the known ones, in no particular order. */
  async getUsers(ids: readonly string[]): Promise<UserResponseDto[]> {
    if (ids.length === 0) return [];
    const rows = await this.db.manager
      .createQueryBuilder(UserProfile, 'p')
      .where('p.user_id IN (:...ids)', { ids: [...ids] })
      .getMany();
    return rows.map(toUserResponse);
  }

  /**
   * Batch read for GraphQL (references and `user`), in the order of `ids`: each profile for its
   * owner or an ADMIN, FORBIDDEN for anyone else, USER_NOT_FOUND when unknown. One query for all.
   */
  async profilesFor(principal: Principal, ids: readonly string[]): Promise<(UserResponseDto | AppError)[]> {
    const found = new Map((await this.getUsers(ids.filter((id) => isSelfOrAdmin(principal, id)))).map((user) => [user.userId, user]));
    return ids.map((id) => (isSelfOrAdmin(principal, id) ? (found.get(id) ?? userNotFound(id)) : forbidden()));
  }

  async listUsers(principal: Principal): Promise<UserResponseDto[]> {
    assertRole(principal, 'ADMIN');
    const rows = await this.db.manager.find(UserProfile, { order: { createdAt: 'ASC', userId: 'ASC' } });
    return rows.map(toUserResponse);
  }

  async searchUsers(principal: Principal, keyword: string): Promise<UserResponseDto[]> {
    assertRole(principal, 'ADMIN');
    const rows = await this.db.manager
      .createQueryBuilder(UserProfile, 'p')
      .where("LOWER(p.first_name) LIKE :pattern ESCAPE '!' OR LOWER(p.last_name) LIKE :pattern ESCAPE '!' OR LOWER(p.email) LIKE :pattern ESCAPE '!'", {
        pattern: containsPattern(keyword.trim().toLowerCase()),
      })
      .orderBy('p.created_at', 'ASC')
      .addOrderBy('p.user_id', 'ASC')
      .getMany();
    return rows.map(toUserResponse);
  }

  async updateUser(principal: Principal, id: string, dto: UserRequestDto): Promise<UserResponseDto> {
    assertSelfOrAdmin(principal, id);
    const profile = await this.db.transaction(async (manager) => {
      const current = await manager.findOne(UserProfile, { where: { userId: id } });
      if (!current) throw userNotFound(id);
      if (dto.email != null && storedKey(dto.email) !== current.email) {
        throw badRequest('The email is the login identity and cannot be changed here', 'EMAIL_IMMUTABLE');
      }
      Object.assign(current, profileFields(dto), { updatedAt: new Date() });
      await manager.save(current);
      return current;
    });
    return toUserResponse(profile);
  }

  async deleteUser(principal: Principal, id: string): Promise<void> {
    assertRole(principal, 'ADMIN');
    if (principal.userId === id) throw forbidden('Admins cannot delete their own account');
    await this.db.transaction(async (manager) => {
      const result = await manager.delete(UserProfile, { userId: id });
      if (!result.affected) throw userNotFound(id);
      await publishUserDeleted(manager, id);
    });
  }

  /** The owner proved the address theirs (`email-verified`); an unknown profile (deleted since) changes nothing. */
  async markEmailVerified(manager: EntityManager, userId: string): Promise<void> {
    await manager.update(UserProfile, { userId: userId.toLowerCase() }, { emailVerified: true });
  }

  /**
   * Internal, at registration: creating the same userId twice returns the first profile. A profile
   * of the same email under one of `replacesUserIds` is replaced: the auth service names only
   * registrations it removed, and it calls while it holds the account of this email (unique there),
   * so that profile belongs to no account. It is safe under races because only those named ids are
   * ever removed: a late create of an abandoned attempt names no live account, so when it lands
   * after the retry it meets the retry's profile, cannot remove it, and gets 409; and the unique
   * email keeps one profile per email whatever the order. The orphan had no account, hence no
   * sessions or orders: its removal is not announced as a deleted user.
   */
  async createProfile(request: CreateUserProfileRequest): Promise<UserResponseDto> {
    const userId = request.userId.toLowerCase();
    const email = storedKey(request.email);
    const existing = await this.db.manager.findOne(UserProfile, { where: { userId } });
    if (existing) return toUserResponse(existing);
    const orphans = (request.replacesUserIds ?? []).map((id) => id.toLowerCase()).filter((id) => id !== userId);
    const now = new Date();
    const profile = Object.assign(new UserProfile(), { userId, email, ...profileFields(request), emailVerified: false, createdAt: now, updatedAt: now });
    try {
      await this.db.transaction(async (manager) => {
        if (orphans.length > 0) await manager.delete(UserProfile, { email, userId: In(orphans) });
        await manager.insert(UserProfile, profile);
      });
    } catch (error) {
      if (!isUniqueViolation(error)) throw error;
      const raced = await this.db.manager.findOne(UserProfile, { where: { userId } });
      if (raced) return toUserResponse(raced);
      throw conflict(`A user with email ${email} already exists`, 'DUPLICATE_EMAIL');
    }
    return toUserResponse(profile);
  }
}
