import { type Capability, roleHas } from '@parametric/contracts';
import { AppError, type Binding, type Handler, implement, type RouteContract } from '@parametric/http';
import type { PartnerContext } from './context';

/** `403 FORBIDDEN` unless the caller's role has the capability (the table: libs/contracts). */
export function requireCapability(role: string, capability: Capability): void {
  if (!roleHas(role, capability)) {
    throw AppError.forbidden(`Your role ${role} lacks the capability ${capability} this endpoint needs`);
  }
}

/**
 * `implement` that checks the route's declared capability against the role the gateway
 * signed, before the handler runs: the gateway checks first, this keeps the service safe on
 * its own (defence in depth) with the same rule and the same answer.
 */
export function implementChecked<C extends RouteContract>(
  contract: C,
  handler: Handler<C, PartnerContext>,
): Binding<PartnerContext> {
  if (!contract.capability) throw new Error(`${contract.operationId} declares no capability`);
  const capability = contract.capability as Capability;
  return implement(contract, (input, context) => {
    requireCapability(context.role, capability);
    return handler(input, context);
  });
}
