/** The user service's table: one profile per account, keyed by the auth service's userId. */
import { Column, Entity, PrimaryColumn } from 'typeorm';
import { TimestampColumn } from '../../platform/database';

@Entity({ name: 'user_profiles' })
export class UserProfile {
  @PrimaryColumn({ name: 'user_id', type: 'varchar', length: 36 })
  userId!: string;

  @Column({ type: 'varchar', length: 100, unique: true })
  email!: string;

  @Column({ name: 'first_name', type: 'varchar', length: 50 })
  firstName!: string;

  @Column({ name: 'last_name', type: 'varchar', length: 50 })
  lastName!: string;

  @Column({ name: 'phone_number', type: 'varchar', length: 16 })
  phoneNumber!: string;

  @Column({ name: 'date_of_birth', type: 'varchar', length: 10 })
  dateOfBirth!: string;

  @Column({ type: 'varchar', length: 255 })
  address!: string;

  /** Set by the auth service's `email-verified`; never by the profile's own routes. */
  @Column({ name: 'email_verified', type: 'boolean', default: false })
  emailVerified!: boolean;

  @TimestampColumn('created_at')
  createdAt!: Date;

  @TimestampColumn('updated_at')
  updatedAt!: Date;
}
