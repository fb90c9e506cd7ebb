import { createHash, randomUUID } from 'node:crypto';
import { GATEWAY_OPS_ROUTES, OPS_ROUTES } from '@parametric/contracts';
import { type RouteContract, uuid } from '@parametric/http';
import type { Logger } from '@parametric/logger';
import type { NextFunction, Request, Response } from 'express';
import type { Clock } from '../clock';
import type { AuditEntryDoc, AuditModel } from './model';

type AuditActorKind = 'operator' | 'client' | 'break-glass';

/** How an entry names who acted. */
export interface AuditActor {
  actor: string;
  actorKind: AuditActorKind;
  actorEmail: string | null;
  /** A machine client's name (issue 25); absent for anyone else. */
  actorName?: string | null;
  actorRole: string | null;
}

const WRITE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
/** A stored request or answer larger than this is summarised (a 1,000-assessment batch is ~1 MB). */
const MAX_STORED_JSON = 16 * 1024;
/** Fields never stored: secrets handed out or taken in, and farmers' personal identifiers. */
const REDACTED_FIELDS = new Set([
  'apiKey',
  'apiSecret',
  'secret',
  'webhookSecret',
  'password',
  'adminPassword',
  'token',
  'accessToken',
  'refreshToken',
  'invitationToken',
  'privateKey',
  'keyHash',
  'secretHash',
  'clientSecret',
  'client_secret',
  'access_token',
  'nationalId',
  'phoneNumber',
]);

interface Matcher {
  contract: RouteContract;
  pattern: RegExp;
  /** Whether the gateway holds what the action changes (an organization), so it can read `before`. */
  onOrganization: boolean;
}

const GATEWAY_OWNED = new Set<RouteContract>(GATEWAY_OPS_ROUTES as readonly RouteContract[]);

// Sign-in routes (no caller) are not ops actions: the sign-in log has them.
const MATCHERS: Matcher[] = Object.values(OPS_ROUTES)
  .flat()
  .filter(
    (contract) =>
      WRITE_METHODS.has(contract.method.toUpperCase()) &&
      !(contract as RouteContract).changesNothing &&
      contract.auth !== 'none',
  )
  .map((contract) => ({
    contract,
    pattern: new RegExp(`^${contract.path.replace(/\{[^}]+\}/g, '([^/]+)')}/?$`, 'i'),
    onOrganization: GATEWAY_OWNED.has(contract) && contract.path.startsWith('/organizations/{id}'),
  }));

/** A uuid as the route reads it (lower case), so the trail of an id is found whatever case ops sent. */
function idOf(segment: string): string {
  const parsed = uuid.safeParse(segment);
  return parsed.success ? parsed.data : segment;
}

/** The shared ops token (break-glass), by a fingerprint that names it without revealing it. */
export function opsActor(token: string): string {
  return `ops-token:${createHash('sha256').update(token).digest('hex').slice(0, 12)}`;
}

/**
 * Records every ops action that changes something, once it is answered and before the answer
 * leaves: who (the operator's id, email and role, or the break-glass token's fingerprint), what (the route's operationId, the path, the body),
 * when, the answer, and for actions on an organization the organization before and after.
 * Refused attempts change nothing and are not recorded. Mount after the ops token check.
 */
export function recordOpsActions(deps: {
  audit: AuditModel;
  /**
   * The organization as ops read it (ops/domain.ts), kept as `before` of an action on it; rejects
   * for an organization that does not exist. Handed in, so the trail depends on no ops module.
   */
  organizationView: (organizationId: string) => Promise<unknown>;
  /** Who acts (auth/ops-caller.ts `auditActorOf`), handed in so the trail depends on no auth module. */
  actorOf: (req: Request) => AuditActor;
  logger: Logger;
  clock: Clock;
}) {
  return async (req: Request, res: Response, next: NextFunction): Promise<void> => {
    const method = req.method.toUpperCase();
    if (!WRITE_METHODS.has(method)) return next();
    let matched: { matcher: Matcher; targetId: string | null } | undefined;
    for (const matcher of MATCHERS) {
      if (matcher.contract.method.toUpperCase() !== method) continue;
      const found = matcher.pattern.exec(req.path);
      if (found) {
        matched = { matcher, targetId: found[1] ? idOf(decodeURIComponent(found[1])) : null };
        break;
      }
    }
    if (!matched) return next();
    const { matcher, targetId } = matched;
    const organizationId = matcher.contract.path.startsWith('/organizations/{id}') ? targetId : null;
    const before =
      matcher.onOrganization && targetId ? await organizationSnapshot(deps.organizationView, targetId) : null;

    const send = res.send.bind(res);
    let recorded = false;
    res.send = ((body?: unknown) => {
      if (recorded) return send(body);
      recorded = true;
      // A refusal changed nothing (bad input changes nothing, audit included); the request log
      // has it under its request id.
      if (res.statusCode >= 300) return send(body);
      const answerBytes = bytesOf(body);
      // A large answer is summarised unread; its data is read only for an organization id.
      const answer = answerBytes > MAX_STORED_JSON && organizationId ? null : answerData(body);
      const entry: AuditEntryDoc = {
        _id: randomUUID(),
        at: deps.clock(),
        ...deps.actorOf(req),
        action: matcher.contract.operationId,
        method,
        path: `/ops${req.path}`,
        organizationId: organizationId ?? stringField(answer, 'organizationId'),
        targetId,
        status: res.statusCode,
        requestId: String(req.id),
        request: stored(req.body ?? null, requestBytes(req)),
        before: stored(before),
        after: answerBytes > MAX_STORED_JSON ? omitted(answerBytes) : stored(answer),
      };
      // Written before the answer leaves: an action whose entry could not be written is still
      // answered (it happened), and the failure is logged at error for ops to see.
      deps.audit
        .create(entry)
        .catch((err: unknown) =>
          deps.logger.error(
            { err, action: entry.action, requestId: entry.requestId },
            'audit entry not written',
          ),
        )
        .finally(() => send(body));
      return res;
    }) as Response['send'];
    next();
  };
}

async function organizationSnapshot(
  organizationView: (organizationId: string) => Promise<unknown>,
  organizationId: string,
) {
  try {
    return await organizationView(organizationId);
  } catch {
    return null; // no such organization: the action will say so
  }
}

/** The `data` of a JSON envelope the action answered with, if it is one. */
function answerData(body: unknown): unknown {
  try {
    const parsed =
      typeof body === 'string'
        ? JSON.parse(body)
        : Buffer.isBuffer(body)
          ? JSON.parse(body.toString('utf8'))
          : body;
    return parsed && typeof parsed === 'object' && 'data' in parsed
      ? (parsed as { data: unknown }).data
      : null;
  } catch {
    return null;
  }
}

function stringField(value: unknown, field: string): string | null {
  const found = value && typeof value === 'object' ? (value as Record<string, unknown>)[field] : undefined;
  return typeof found === 'string' ? found : null;
}

/**
 * What is stored of a body: secrets and personal identifiers out, large bodies summarised. A
 * body known to be large as it came (`bytes`, its size on the wire) is summarised without being
 * walked: copying a 1,000-item batch and its answer to redact them, then writing them out to
 * learn their size, was a ninth of the gateway's CPU on a drought day (docs/decisions.md, "A batch
 * answer as short as its caller wants").
 */
function stored(value: unknown, bytes?: number): unknown {
  if (value === null || value === undefined) return null;
  if (bytes !== undefined && bytes > MAX_STORED_JSON) return omitted(bytes);
  const redacted = redact(value);
  const size = Buffer.byteLength(JSON.stringify(redacted));
  return size > MAX_STORED_JSON ? omitted(size) : redacted;
}

function omitted(bytes: number) {
  return { omitted: `${bytes} bytes of JSON` };
}

/** A body's size as it came, when its headers say (not for a compressed or chunked one). */
function requestBytes(req: Request): number | undefined {
  const length = req.headers['content-length'];
  if (length === undefined || req.headers['content-encoding'] !== undefined) return undefined;
  const bytes = Number(length);
  return Number.isSafeInteger(bytes) ? bytes : undefined;
}

/** The size of an answer as `res.send` is handed it (the forwarded bytes, or a JSON text). */
function bytesOf(body: unknown): number {
  if (Buffer.isBuffer(body)) return body.length;
  return typeof body === 'string' ? Buffer.byteLength(body) : 0;
}

function redact(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(redact);
  if (value === null || typeof value !== 'object' || value instanceof Date) return value;
  return Object.fromEntries(
    Object.entries(value).map(([key, inner]) => [
      key,
      REDACTED_FIELDS.has(key) ? '[Redacted]' : redact(inner),
    ]),
  );
}

/** GET /ops/audit: newest first, filtered by organization, action and time. */
export async function listAudit(
  audit: AuditModel,
  query: {
    page: number;
    limit: number;
    organizationId?: string;
    action?: string;
    actor?: string;
    from?: string;
    to?: string;
  },
) {
  const filter: Record<string, unknown> = {};
  if (query.organizationId) filter.organizationId = query.organizationId;
  if (query.action) filter.action = query.action;
  // An operator by id (`operator:<id>` or the bare id) or by email; a client or the token by its actor.
  if (query.actor) {
    const actor = query.actor;
    filter.$or = [
      { actor },
      { actor: `operator:${actor}` },
      { actorEmail: actor.toLowerCase() },
      // An action carried out on approval is the requester's too.
      { 'approval.requestedBy.id': actor.replace(/^operator:/, '') },
      { 'approval.requestedBy.email': actor.toLowerCase() },
    ];
  }
  if (query.from || query.to) {
    filter.at = {
      ...(query.from ? { $gte: new Date(query.from) } : {}),
      ...(query.to ? { $lte: new Date(query.to) } : {}),
    };
  }
  const [entries, total] = await Promise.all([
    audit
      .find(filter)
      .sort({ at: -1, _id: -1 })
      .skip((query.page - 1) * query.limit)
      .limit(query.limit)
      .lean<AuditEntryDoc[]>(),
    audit.countDocuments(filter),
  ]);
  return { items: entries.map(auditEntryView), total };
}

export function auditEntryView(entry: AuditEntryDoc) {
  return {
    id: entry._id,
    at: entry.at.toISOString(),
    actor: entry.actor,
    actorKind: (entry.actorKind ?? null) as AuditActorKind | null,
    actorEmail: entry.actorEmail ?? null,
    actorName: entry.actorName ?? null,
    actorRole: entry.actorRole ?? null,
    action: entry.action,
    method: entry.method,
    path: entry.path,
    organizationId: entry.organizationId ?? null,
    targetId: entry.targetId ?? null,
    status: entry.status,
    requestId: entry.requestId,
    request: entry.request ?? null,
    before: entry.before ?? null,
    after: entry.after ?? null,
    approval: (entry.approval ?? null) as AuditApproval | null,
  };
}

/** Who asked for an action carried out on approval, and who approved it. */
export interface AuditApproval {
  id: string;
  requestedBy: { id: string; email: string | null; role: string };
  approvedBy: { id: string; email: string | null; role: string };
}

/**
 * Records an action carried out (or refused) on approval (four eyes; approvals/domain.ts): the
 * approver is the actor, and the entry names the requester beside them. The approve request has
 * its own entry (`opsApproveApproval`) and the request its `202` one, so the trail shows all three.
 */
export async function recordApprovedAction(
  audit: AuditModel,
  entry: {
    at: Date;
    approval: AuditApproval;
    action: string;
    method: string;
    path: string;
    organizationId: string | null;
    targetId: string | null;
    status: number;
    requestId: string;
    request: unknown;
    after: unknown;
  },
): Promise<void> {
  const approver = entry.approval.approvedBy;
  await audit.create({
    _id: randomUUID(),
    ...entry,
    actor: approver.id.startsWith('oidc:') ? approver.id : `operator:${approver.id}`,
    actorKind: 'operator',
    actorEmail: approver.email,
    actorName: null,
    actorRole: approver.role,
    request: stored(entry.request),
    before: null,
    after: stored(entry.after),
  });
}
