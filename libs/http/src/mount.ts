import type { Request, Response, Router } from 'express';
import type { z } from 'zod';
import { assertCapability } from './capabilities';
import { type DataResponse, expressPath, type PageResponse, type RouteContract } from './contract';
import { answeredAfterDeadline } from './deadline';
import { paginationOf } from './envelope';
import { parseInput } from './validation';

declare module 'node:http' {
  interface IncomingMessage {
    /**
     * The `baseUrl` the matched contract route is mounted at, recorded when its handler starts:
     * once an error leaves the routers they have restored `baseUrl`, and the request metrics
     * (`@parametric/metrics`) still need the route's full template.
     */
    routeBaseUrl?: string;
  }
}

type Out<S> = S extends z.ZodType ? z.output<S> : undefined;

/** A request's input after validation: defaults applied, unknown keys stripped or refused. */
export type InputOf<C extends RouteContract> = {
  params: Out<C['params']>;
  query: Out<C['query']>;
  headers: Out<C['headers']>;
  body: C['bodyOptional'] extends true ? Out<C['body']> | undefined : Out<C['body']>;
};

/** Response headers a handler sets (those its contract's response documents). */
type ReplyHeaders = { headers?: Record<string, string> };

type ReplyFor<S, R> = R extends PageResponse
  ? { status: S; data: z.input<R['item']>[]; page: { page: number; limit: number; total: number } }
  : R extends DataResponse
    ? { status: S; data: z.input<R['data']> } & ReplyHeaders
    : { status: S; raw: string };

/** What a handler returns: one of the contract's success statuses and its body, type-checked. */
export type ReplyOf<C extends RouteContract> = {
  [S in keyof C['responses'] & number]: ReplyFor<S, C['responses'][S]>;
}[keyof C['responses'] & number];

export type Handler<C extends RouteContract, Ctx> = (input: InputOf<C>, ctx: Ctx) => Promise<ReplyOf<C>>;

/** A contract and the handler that serves it. */
export interface Binding<Ctx> {
  contract: RouteContract;
  handle(input: unknown, ctx: Ctx): Promise<Reply>;
}

/** A reply as `renderReply` sends it. */
export interface Reply {
  status: number;
  data?: unknown;
  page?: unknown;
  raw?: string;
  headers?: Record<string, string>;
}

/**
 * Serves a contract: the handler parses nothing itself, calls its domain function with the
 * validated input and the request's context, and returns a view that the contract's types check.
 */
export function implement<C extends RouteContract, Ctx>(contract: C, handler: Handler<C, Ctx>): Binding<Ctx> {
  return {
    contract,
    handle: (input, ctx) => handler(input as InputOf<C>, ctx),
  };
}

/**
 * Mounts bindings on a router. A route that declares a capability refuses a caller without it
 * first (`assertCapability`, against the verified caller: in a service the role the gateway
 * signed, so each service holds to the role table on its own, not only behind the gateway);
 * then each request is validated against its contract (params, query, headers, then body: bad
 * input never reaches the handler), `contextOf` builds what the handler may touch (for partner
 * routes: repositories bound to the calling organization), and the reply is rendered in the
 * spec's envelope.
 */
export function mountRoutes<Ctx>(
  router: Router,
  bindings: ReadonlyArray<Binding<Ctx>>,
  contextOf: (req: Request) => Ctx,
): Router {
  for (const binding of bindings) {
    const { contract } = binding;
    if (contract.auth !== 'none' && !contract.capability) {
      throw new Error(`${contract.operationId} is a ${contract.auth} route that declares no capability`);
    }
    router[contract.method](expressPath(contract.path), async (req: Request, res: Response) => {
      req.routeBaseUrl = req.baseUrl;
      if (contract.capability) {
        // Fails closed: a route mounted without the guard that verifies its caller answers 500.
        if (!req.caller) throw new Error(`${contract.operationId} was reached without a verified caller`);
        assertCapability(req.caller, contract.capability);
      }
      const input = parseInput(contract, req);
      const reply = await binding.handle(input, contextOf(req));
      if (answeredAfterDeadline(req)) {
        req.log.warn(
          { operationId: contract.operationId },
          'request completed after its deadline had answered it',
        );
        return;
      }
      renderReply(res, contract, reply);
    });
  }
  return router;
}

/**
 * Sends a reply in the envelope its contract declares for its status: `{ success, data }`, the
 * paginated one, or a raw document. A status the contract does not declare is a bug, thrown (so
 * `500`), never sent. Routes mounted by `mountRoutes` answer through it, and so does any handler
 * that answers for a contract outside it (the gateway's four-eyes gate, services/gateway/src/approvals/gate.ts).
 */
export function renderReply(res: Response, contract: RouteContract, reply: Reply): void {
  const spec = contract.responses[reply.status];
  if (!spec) throw new Error(`${contract.operationId} answered undeclared status ${reply.status}`);
  res.status(reply.status);
  if (reply.headers) res.set(reply.headers);
  if (reply.raw !== undefined && 'contentType' in spec) {
    res.type(spec.contentType).send(reply.raw);
  } else if ('item' in spec) {
    const page = reply.page as { page: number; limit: number; total: number };
    res.json({ success: true, data: reply.data, pagination: paginationOf(page) });
  } else {
    res.json({ success: true, data: reply.data });
  }
}

/** `200` with `data`. */
export const ok = <T>(data: T) => ({ status: 200 as const, data });
/** `201` with `data`. */
export const created = <T>(data: T) => ({ status: 201 as const, data });
/** `200` with a page of items (the paginated envelope). */
export const page = <T>(data: T[], at: { page: number; limit: number; total: number }) => ({
  status: 200 as const,
  data,
  page: at,
});
/** `200` with a body that is not the JSON envelope (documents, the docs page). */
export const raw = (body: string) => ({ status: 200 as const, raw: body });
