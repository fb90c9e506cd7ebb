import { randomUUID } from 'node:crypto';
import { USER_STATUSES } from '@parametric/contracts';
import { ROLES } from '@parametric/http';
import { type Connection, type InferSchemaType, type Model, Schema } from 'mongoose';

/**
 * What every person who signs in with a password has, a dashboard user or an operator
 * (operators/model.ts): status, the password only as a scrypt hash, the invitation.
 */
export const personFields = {
  status: { type: String, required: true, enum: USER_STATUSES, default: 'INVITED' },
  passwordHash: { type: String, default: null },
  /** HMAC of the one-time invitation token while INVITED; cleared once redeemed. */
  invitationHash: { type: String, default: null },
  invitationExpiresAt: { type: Date, default: null },
  lastLoginAt: { type: Date, default: null },
  deactivatedAt: { type: Date, default: null },
} as const;

/** Dashboard users: many per organization; the password only as a scrypt hash. */
const userSchema = new Schema(
  {
    _id: { type: String, default: () => randomUUID() },
    organizationId: { type: String, required: true },
    email: { type: String, required: true },
    name: { type: String, required: true },
    role: { type: String, required: true, enum: ROLES },
    ...personFields,
  },
  { timestamps: true, versionKey: false },
);
// Serves sign-in ({ email }, across organizations) and keeps an email to one user platform-wide.
userSchema.index({ email: 1 }, { unique: true });
// Serves accepting an invitation: the token's hash finds its user.
userSchema.index(
  { invitationHash: 1 },
  { unique: true, partialFilterExpression: { invitationHash: { $type: 'string' } } },
);
// Serves the organization's user list, newest first (optionally by status or role).
userSchema.index({ organizationId: 1, createdAt: -1 });

export type UserDoc = InferSchemaType<typeof userSchema> & { _id: string };
export type UserModel = Model<UserDoc>;

export function userModel(connection: Connection): UserModel {
  return (
    (connection.models.User as UserModel | undefined) ??
    connection.model<UserDoc>('User', userSchema, 'users')
  );
}

/**
 * The organization's active ORG_ADMIN users as one document (`_id` = organization id), so the
 * last-admin rule is one conditional write: a demotion or deactivation first pulls the user
 * from this list on the condition that someone else remains, and two admins demoting each
 * other at once cannot both succeed.
 */
const adminRosterSchema = new Schema(
  {
    _id: { type: String, required: true },
    activeAdminIds: { type: [String], default: [] },
  },
  { versionKey: false },
);

export type AdminRosterDoc = InferSchemaType<typeof adminRosterSchema> & { _id: string };
export type AdminRosterModel = Model<AdminRosterDoc>;

export function adminRosterModel(connection: Connection): AdminRosterModel {
  return (
    (connection.models.AdminRoster as AdminRosterModel | undefined) ??
    connection.model<AdminRosterDoc>('AdminRoster', adminRosterSchema, 'admin_rosters')
  );
}
