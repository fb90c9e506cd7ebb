import { acrossOrganizations, organizationDocument, scopedTo } from '@parametric/mongo';
import type { Connection } from 'mongoose';
import { apiKeyModel } from './api-keys/model';
import { approvalModel } from './approvals/model';
import { type ApprovalStore, mongoApprovalStore } from './approvals/store';
import { auditModel } from './audit/model';
import { opsClientModel } from './clients/model';
import { operatorModel } from './operators/model';
import { organizationModel } from './organizations/model';
import {
  operatorRefreshTokenModel,
  operatorSessionModel,
  refreshTokenModel,
  sessionModel,
} from './sessions/model';
import { adminRosterModel, userModel } from './users/model';

/** Every model of the gateway (its `migrate` command creates their indexes). */
export const gatewayModels = (connection: Connection) => [
  organizationModel(connection),
  apiKeyModel(connection),
  userModel(connection),
  adminRosterModel(connection),
  sessionModel(connection),
  refreshTokenModel(connection),
  auditModel(connection),
  operatorModel(connection),
  operatorSessionModel(connection),
  operatorRefreshTokenModel(connection),
  opsClientModel(connection),
  approvalModel(connection),
];

/**
 * The gateway's data, two ways in: bound to one organization (partner handlers, and ops
 * actions on one organization), or across organizations (registration creating a tenant,
 * authentication finding a key, a user or a refresh token by its secret, the outbox relay).
 */
export function gatewayRepositories(
  connection: Connection,
  options: {
    /**
     * Called after a write that changes what gateways cache about an organization (its key, its
     * state, its users and sessions), before the change is answered: every replica then reads it
     * afresh on its next request (auth/versions.ts). Domain code calls it through the tenant.
     */
    authChanged?: (organizationId: string) => Promise<void>;
  } = {},
) {
  const authChanged = options.authChanged ?? (async () => undefined);
  const organizations = organizationModel(connection);
  const apiKeys = apiKeyModel(connection);
  const users = userModel(connection);
  const adminRosters = adminRosterModel(connection);
  const sessions = sessionModel(connection);
  const refreshTokens = refreshTokenModel(connection);
  const audit = auditModel(connection);
  const operators = operatorModel(connection);
  const operatorSessions = operatorSessionModel(connection);
  const operatorRefreshTokens = operatorRefreshTokenModel(connection);
  const opsClients = opsClientModel(connection);
  const approvals = approvalModel(connection);
  return {
    init: () =>
      Promise.all(
        [
          organizations,
          apiKeys,
          users,
          adminRosters,
          sessions,
          refreshTokens,
          audit,
          operators,
          operatorSessions,
          operatorRefreshTokens,
          opsClients,
          approvals,
        ].map((m) => m.init()),
      ),
    /** Operators and their sign-in sessions: the platform's own people, of no organization. */
    operatorData: () => ({
      operators,
      sessions: operatorSessions,
      refreshTokens: operatorRefreshTokens,
    }),
    /** Machine clients of the ops API (issue 25), of no organization either. */
    opsClients: () => opsClients,
    /** Four-eyes approvals of ops actions (approvals/), of no organization: they span every one. */
    approvals: (): ApprovalStore => mongoApprovalStore(approvals),
    forOrganization: (organizationId: string) => ({
      organizationId,
      /** See `authChanged` above: call after writing the organization, its key, a user or a session. */
      authChanged: () => authChanged(organizationId),
      organization: organizationDocument(organizations, organizationId),
      apiKey: organizationDocument(apiKeys, organizationId),
      users: scopedTo(users, organizationId),
      adminRoster: organizationDocument(adminRosters, organizationId),
      sessions: scopedTo(sessions, organizationId),
      refreshTokens: scopedTo(refreshTokens, organizationId),
    }),
    /** The ops audit trail (audit/trail.ts): ops act across organizations, so it is not scoped. */
    opsAudit: () => audit,
    acrossOrganizations: () => ({
      organizations: acrossOrganizations(organizations),
      apiKeys: acrossOrganizations(apiKeys),
      users: acrossOrganizations(users),
      sessions: acrossOrganizations(sessions),
      refreshTokens: acrossOrganizations(refreshTokens),
    }),
  };
}

export type GatewayRepositories = ReturnType<typeof gatewayRepositories>;
export type TenantGatewayData = ReturnType<GatewayRepositories['forOrganization']>;
export type GatewayDataAcross = ReturnType<GatewayRepositories['acrossOrganizations']>;
