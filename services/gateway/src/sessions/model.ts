import { type Connection, type InferSchemaType, type Model, Schema } from 'mongoose';
import { SESSION_END_REASONS } from './reasons';

/**
 * A sign-in session: one login and every refresh token descended from it (the "family").
 * Access tokens carry its id (`sid`), so revoking it ends the session's access tokens too.
 */
const sessionFields = {
  _id: { type: String, required: true },
  /** The person: a dashboard user, or an operator in `operator_sessions`. */
  userId: { type: String, required: true },
  lastRefreshedAt: { type: Date, default: null },
  revokedAt: { type: Date, default: null },
  revokedReason: { type: String, enum: SESSION_END_REASONS, default: null },
  /** Kept until the last refresh token of the session could have expired. */
  expiresAt: { type: Date, required: true },
};

function sessionSchemaOf<F extends object>(extra: F) {
  const schema = new Schema({ ...sessionFields, ...extra }, { timestamps: true, versionKey: false });
  // Serves revoking every session of a person (deactivation).
  schema.index({ userId: 1, revokedAt: 1 });
  // Clean-up: a session whose refresh tokens have all expired is of no further use.
  schema.index({ expiresAt: 1 }, { expireAfterSeconds: 0 });
  return schema;
}

const sessionSchema = sessionSchemaOf({ organizationId: { type: String, required: true } });
/** Operators' sessions: the same record, without an organization (issue 25; one identity core). */
const operatorSessionSchema = sessionSchemaOf({});

export type SessionDoc = InferSchemaType<typeof sessionSchema> & { _id: string };
export type SessionModel = Model<SessionDoc>;

export function sessionModel(connection: Connection): SessionModel {
  return (
    (connection.models.Session as SessionModel | undefined) ??
    connection.model<SessionDoc>('Session', sessionSchema, 'sessions')
  );
}

/**
 * Refresh tokens, by the HMAC of the token (`_id`): opaque and single use. A spent token is
 * kept (with `spentAt`) until it expires, so presenting it again is recognised as theft.
 */
function refreshTokenSchemaOf<F extends object>(extra: F) {
  const schema = new Schema(
    {
      _id: { type: String, required: true },
      sessionId: { type: String, required: true },
      userId: { type: String, required: true },
      expiresAt: { type: Date, required: true },
      spentAt: { type: Date, default: null },
      ...extra,
    },
    { timestamps: true, versionKey: false },
  );
  // Clean-up once a token can no longer be used (a replay after that is simply unknown).
  schema.index({ expiresAt: 1 }, { expireAfterSeconds: 0 });
  return schema;
}
const refreshTokenSchema = refreshTokenSchemaOf({ organizationId: { type: String, required: true } });
const operatorRefreshTokenSchema = refreshTokenSchemaOf({});

export type RefreshTokenDoc = InferSchemaType<typeof refreshTokenSchema> & { _id: string };
export type RefreshTokenModel = Model<RefreshTokenDoc>;

export function refreshTokenModel(connection: Connection): RefreshTokenModel {
  return (
    (connection.models.RefreshToken as RefreshTokenModel | undefined) ??
    connection.model<RefreshTokenDoc>('RefreshToken', refreshTokenSchema, 'refresh_tokens')
  );
}

export type OperatorSessionDoc = InferSchemaType<typeof operatorSessionSchema> & { _id: string };
export type OperatorSessionModel = Model<OperatorSessionDoc>;
export type OperatorRefreshTokenDoc = InferSchemaType<typeof operatorRefreshTokenSchema> & { _id: string };
export type OperatorRefreshTokenModel = Model<OperatorRefreshTokenDoc>;

export function operatorSessionModel(connection: Connection): OperatorSessionModel {
  return (
    (connection.models.OperatorSession as OperatorSessionModel | undefined) ??
    connection.model<OperatorSessionDoc>('OperatorSession', operatorSessionSchema, 'operator_sessions')
  );
}

export function operatorRefreshTokenModel(connection: Connection): OperatorRefreshTokenModel {
  return (
    (connection.models.OperatorRefreshToken as OperatorRefreshTokenModel | undefined) ??
    connection.model<OperatorRefreshTokenDoc>(
      'OperatorRefreshToken',
      operatorRefreshTokenSchema,
      'operator_refresh_tokens',
    )
  );
}
