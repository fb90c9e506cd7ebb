export {
  createApp,
  errorHandler,
  finishApp,
  MAX_BODY_BYTES,
  MAX_JSON_DEPTH,
  MAX_OPS_BODY_BYTES,
} from './app';
export {
  assertCapability,
  CAPABILITIES,
  type Caller,
  type Capability,
  capabilitiesOf,
  OPS_CAPABILITIES,
  type OpsCapability,
  type PartnerCapability,
  ROLE_CAPABILITIES,
  ROLES,
  type Role,
  roleHas,
} from './capabilities';
export {
  type Auth,
  type DataResponse,
  defineRoute,
  errorCodesOf,
  expressPath,
  type HttpMethod,
  type PageResponse,
  type RawResponse,
  type RouteContract,
  type SuccessResponse,
} from './contract';
export { answeredAfterDeadline, DEFAULT_REQUEST_DEADLINE_MS } from './deadline';
export { errorBody, type Pagination, paginationOf } from './envelope';
export { AppError, ERROR_STATUS, type ErrorCode, type FieldError } from './errors';
export { type InternalClientOptions, internalGet, internalPost } from './internal-client';
export {
  CONTEXT_HEADER,
  CONTEXT_MAX_AGE_MS,
  type InternalContext,
  type OpsContext,
  organizationOf,
  requireInternalContext,
  requireOpsContext,
  SIGNATURE_HEADER,
  signContext,
  verifyContext,
  verifyOpsContext,
} from './internal-context';
export {
  type Binding,
  created,
  type Handler,
  type InputOf,
  implement,
  mountRoutes,
  ok,
  page,
  type Reply,
  type ReplyOf,
  raw,
  renderReply,
} from './mount';
export { type DocumentOptions, openApiDocument, paginationSchema } from './openapi';
export { answerOptions } from './options';
export { type HealthCheck, healthRoutes, type Listening, listen, metricsRoutes, runChecks } from './serve';
export { fieldErrors, invalidInput, MAX_PAGE_LIMIT, paginationQuery, parseInput, uuid } from './validation';
