import { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Express } from 'express';

/**
 * The request and response classes of an express app's server, whose instances are born with the
 * app's own prototypes (`app.request`, `app.response`).
 *
 * express gives every request and response its app's prototypes as it enters the app
 * (`Object.setPrototypeOf` in application.js `handle`). For an object born with Node's prototype
 * that is a prototype transition, which V8 carries out by replaying every property of the
 * object's shape onto a new one (its `MapUpdater`): about 22,000 instructions a request in the
 * gateway (docs/performance.md, "Born with express's prototypes"). An object that already has the
 * prototype is left as it is.
 */
export function messageClasses(app: Express): {
  IncomingMessage: typeof IncomingMessage;
  ServerResponse: typeof ServerResponse;
} {
  function AppRequest(socket: Socket): IncomingMessage {
    return Reflect.construct(IncomingMessage, [socket], AppRequest) as IncomingMessage;
  }
  AppRequest.prototype = app.request;
  function AppResponse(req: IncomingMessage, ...options: unknown[]): ServerResponse {
    // Node passes its options (high-water mark, body-write rules) after the request.
    return Reflect.construct(ServerResponse, [req, ...options], AppResponse) as ServerResponse;
  }
  AppResponse.prototype = app.response;
  return {
    IncomingMessage: AppRequest as unknown as typeof IncomingMessage,
    ServerResponse: AppResponse as unknown as typeof ServerResponse,
  };
}
