export { createApp, errorHandler, finishApp, MAX_BODY_BYTES } from './app';
export { errorBody, type Pagination, paginationOf, sendData, sendPage } from './envelope';
export { AppError, ERROR_STATUS, type ErrorCode, type FieldError } from './errors';
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
export { healthRoutes, type Listening, listen } from './serve';
export { fieldErrors, invalidInput, paginationQuery, route, uuidParam } from './validation';
