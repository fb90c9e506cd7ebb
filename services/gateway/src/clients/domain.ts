import { OPS_CLIENT_SCOPES, type OpsClientScope } from '@parametric/contracts';
import { AppError } from '@parametric/http';
import type { Logger } from '@parametric/logger';
import type { Clock } from '../clock';
import type { ClientTokens } from '../credentials/access-tokens';
import { hashCredential, randomSecret, sameHash } from '../credentials/secrets';
import type { LoginThrottle } from '../rate-limit/login-throttle';
import type { OpsClientDoc, OpsClientModel } from './model';
import { opsClientView } from './view';

export interface OpsClientsDeps {
  clients: OpsClientModel;
  /** Secrets are stored only as HMACs under it (credentials/secrets.ts), as API keys are. */
  pepper: string;
  tokens: ClientTokens;
  /** Failed client authentications, per client id and address, as failed sign-ins are. */
  throttle: LoginThrottle;
  logger: Logger;
  clock: Clock;
}

/** An OAuth 2.0 error of the token endpoint (RFC 6749, section 5.2), answered in that shape, not the envelope. */
export class TokenRefusal extends Error {
  constructor(
    readonly error:
      | 'invalid_request'
      | 'invalid_client'
      | 'invalid_scope'
      | 'unsupported_grant_type'
      | 'unauthorized_client',
    readonly description: string,
  ) {
    super(description);
  }
}

/** Compared against when the client id is unknown, so an unknown id costs what a wrong secret does. */
const NO_HASH = '0'.repeat(64);

/**
 * Machine clients (issue 25; docs/ops.md, "Machine clients"): created with scopes, a secret
 * shown once, rotated or revoked by an ops admin; they exchange the secret for a short-lived
 * token (`POST /ops/auth/token`), and every request with it reads the client again.
 */
export function createOpsClients(deps: OpsClientsDeps) {
  return {
    create: (input: { name: string; scopes: OpsClientScope[] }) => create(deps, input),
    list: (query: { page: number; limit: number; status?: string }) => list(deps, query),
    rotateSecret: (id: string) => rotateSecret(deps, id),
    revoke: (id: string) => revoke(deps, id),
    issueToken: (input: TokenRequest, clientIp: string) => issueToken(deps, input, clientIp),
    resolve: (token: string) => resolve(deps, token),
  };
}

export type OpsClients = ReturnType<typeof createOpsClients>;

const newSecret = (deps: OpsClientsDeps) => {
  const secret = randomSecret('ocs');
  return { secret, hash: hashCredential(deps.pepper, secret) };
};

async function create(deps: OpsClientsDeps, input: { name: string; scopes: OpsClientScope[] }) {
  const { secret, hash } = newSecret(deps);
  const created = await deps.clients.create({
    name: input.name,
    scopes: [...new Set(input.scopes)],
    secretHash: hash,
  });
  const client = created.toObject() as OpsClientDoc;
  return { client: opsClientView(client), clientId: client._id, clientSecret: secret };
}

async function list(deps: OpsClientsDeps, query: { page: number; limit: number; status?: string }) {
  const filter: Record<string, unknown> = query.status ? { status: query.status } : {};
  const [items, total] = await Promise.all([
    deps.clients
      .find(filter)
      .sort({ createdAt: -1, _id: -1 })
      .skip((query.page - 1) * query.limit)
      .limit(query.limit)
      .lean<OpsClientDoc[]>(),
    deps.clients.countDocuments(filter),
  ]);
  return { items: items.map(opsClientView), total };
}

/** A new secret; the generation moves on, so the old secret's tokens stop on their next request. */
async function rotateSecret(deps: OpsClientsDeps, id: string) {
  const { secret, hash } = newSecret(deps);
  const updated = await deps.clients
    .findOneAndUpdate(
      { _id: id, status: 'ACTIVE' },
      { $set: { secretHash: hash, secretRotatedAt: deps.clock() }, $inc: { secretGeneration: 1 } },
      { returnDocument: 'after' },
    )
    .lean<OpsClientDoc>();
  if (!updated) {
    if (await deps.clients.exists({ _id: id }))
      throw AppError.conflict('A revoked client gets no new secret');
    throw AppError.notFound('Client');
  }
  deps.logger.info({ clientId: id }, 'ops client secret rotated');
  return { client: opsClientView(updated), clientId: updated._id, clientSecret: secret };
}

async function revoke(deps: OpsClientsDeps, id: string) {
  await deps.clients.updateOne(
    { _id: id, status: 'ACTIVE' },
    { $set: { status: 'REVOKED', revokedAt: deps.clock() } },
  );
  const client = await deps.clients.findById(id).lean<OpsClientDoc>();
  if (!client) throw AppError.notFound('Client');
  deps.logger.info({ clientId: id }, 'ops client revoked');
  return opsClientView(client);
}

export interface TokenRequest {
  clientId: string;
  clientSecret: string;
  /** The `scope` parameter: space-delimited, a subset of the client's scopes; all of them when absent. */
  scope?: string;
}

/**
 * The client credentials grant (RFC 6749, section 4.4). A wrong secret, an unknown or revoked client:
 * one answer (`invalid_client`), counted against the client id and the address, and refused
 * for a while past the budget, as failed sign-ins are (rate-limit/login-throttle.ts).
 */
async function issueToken(deps: OpsClientsDeps, input: TokenRequest, clientIp: string) {
  await deps.throttle.assertAllowed(input.clientId, clientIp);
  const client = await deps.clients.findById(input.clientId).lean<OpsClientDoc>();
  const presented = hashCredential(deps.pepper, input.clientSecret);
  const matches = sameHash(client?.secretHash ?? NO_HASH, presented);
  if (!client || !matches || client.status !== 'ACTIVE') {
    await deps.throttle.recordFailure(input.clientId, clientIp);
    throw new TokenRefusal('invalid_client', 'Client authentication failed');
  }
  await deps.throttle.recordSuccess(input.clientId);
  const scopes = grantedScopes(client.scopes, input.scope);
  const access = await deps.tokens.issue(client._id, client.secretGeneration, scopes);
  await deps.clients.updateOne({ _id: client._id }, { $set: { lastTokenAt: deps.clock() } });
  deps.logger.info({ clientId: client._id, scopes }, 'ops client token issued');
  return {
    access_token: access.token,
    token_type: 'Bearer' as const,
    expires_in: access.expiresIn,
    scope: scopes.join(' '),
  };
}

function grantedScopes(held: readonly string[], requested: string | undefined): string[] {
  if (requested === undefined) return [...held];
  const asked = requested.split(' ').filter((s) => s !== '');
  const unknown = asked.filter((s) => !(OPS_CLIENT_SCOPES as readonly string[]).includes(s));
  if (unknown.length > 0) throw new TokenRefusal('invalid_scope', `Unknown scope: ${unknown.join(' ')}`);
  const lacking = asked.filter((s) => !held.includes(s));
  if (lacking.length > 0) {
    throw new TokenRefusal('invalid_scope', `This client does not have the scope: ${lacking.join(' ')}`);
  }
  return [...new Set(asked)];
}

/**
 * The client behind an access token, read on every request (as operators are): a revoked
 * client, or a rotated secret, stops the token at once on every replica. The token's scopes
 * count only while the client still holds them.
 */
async function resolve(deps: OpsClientsDeps, token: string) {
  const claims = await deps.tokens.verify(token);
  if (!claims) return undefined;
  const client = await deps.clients.findById(claims.sub).lean<OpsClientDoc>();
  if (client?.status !== 'ACTIVE' || client.secretGeneration !== claims.gen) return undefined;
  const granted = claims.scope.split(' ').filter((s) => client.scopes.includes(s as OpsClientScope));
  return { _id: client._id, name: client.name, scopes: granted };
}
