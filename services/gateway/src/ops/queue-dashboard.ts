import { randomUUID } from 'node:crypto';
import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { ExpressAdapter } from '@bull-board/express';
import { AppError, assertCapability } from '@parametric/http';
import type { Logger } from '@parametric/logger';
import type { Queue } from 'bullmq';
import { type NextFunction, type Request, type Response, Router } from 'express';
import type { AuditModel } from '../audit/model';
import type { AuditActor } from '../audit/trail';
import type { Clock } from '../clock';

/**
 * Where the dashboard lives on the ops port: behind an operator's session (its sign-in form,
 * ops/queue-sign-in.ts), their email and password, or the ops token (auth/ops-caller.ts).
 */
export const QUEUE_DASHBOARD_PATH = '/ops/queues';

const READS = new Set(['GET', 'HEAD']);

/**
 * The queue dashboard (@bull-board): every queue of the registry, its jobs by state, their data,
 * errors and attempts. Read-only unless `writable` (QUEUE_DASHBOARD_WRITABLE): retrying or
 * removing a job changes what the platform does next, so it is an explicit choice, and each such
 * action is written to the ops audit trail (action `opsQueueDashboard`).
 */
export function queueDashboard(deps: {
  queues: Queue[];
  writable: boolean;
  audit: AuditModel;
  actorOf: (req: Request) => AuditActor;
  logger: Logger;
  clock: Clock;
}): Router {
  const server = new ExpressAdapter();
  server.setBasePath(QUEUE_DASHBOARD_PATH);
  createBullBoard({
    queues: deps.queues.map(
      (queue) => new BullMQAdapter(queue, { readOnlyMode: !deps.writable, allowRetries: deps.writable }),
    ),
    serverAdapter: server,
    options: {
      uiConfig: {
        boardTitle: 'Platform queues',
        // An operator signed in with the form (ops/queue-sign-in.ts) signs out there.
        miscLinks: [{ text: 'Sign out', url: `${QUEUE_DASHBOARD_PATH}/sign-out` }],
      },
    },
  });
  const router = Router();
  // Reading needs `ops.queues:read` (every ops role); a retry or removal `ops.queues:write` (OPS_ADMIN).
  router.use((req: Request, _res: Response, next: NextFunction) => {
    if (!req.caller) throw new Error('authenticateOps must run before the queue dashboard');
    assertCapability(req.caller, READS.has(req.method) ? 'ops.queues:read' : 'ops.queues:write');
    next();
  });
  router.use(deps.writable ? recordActions(deps) : refuseWrites);
  router.use(server.getRouter());
  return router;
}

/** Read-only: bull-board refuses changes on read-only queues too; this refuses them all first. */
function refuseWrites(req: Request, _res: Response, next: NextFunction): void {
  if (READS.has(req.method)) {
    next();
    return;
  }
  next(
    AppError.forbidden(
      'The queue dashboard is read-only; set QUEUE_DASHBOARD_WRITABLE=true on the gateway to retry or remove jobs',
    ),
  );
}

function recordActions(deps: {
  audit: AuditModel;
  actorOf: (req: Request) => AuditActor;
  logger: Logger;
  clock: Clock;
}) {
  return (req: Request, res: Response, next: NextFunction): void => {
    if (READS.has(req.method)) {
      next();
      return;
    }
    res.on('finish', () => {
      if (res.statusCode >= 300) return;
      deps.audit
        .create({
          _id: randomUUID(),
          at: deps.clock(),
          ...deps.actorOf(req),
          action: 'opsQueueDashboard',
          method: req.method,
          path: `${QUEUE_DASHBOARD_PATH}${req.path}`,
          organizationId: null,
          targetId: null,
          status: res.statusCode,
          requestId: String(req.id),
          request: null,
          before: null,
          after: null,
        })
        .catch((err: unknown) =>
          deps.logger.error(
            { err, requestId: String(req.id) },
            'audit entry of a queue dashboard action not written',
          ),
        );
    });
    next();
  };
}
