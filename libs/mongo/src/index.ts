export {
  connectMongo,
  MONGO_CONNECT_TIMEOUT_MS,
  MONGO_SOCKET_TIMEOUT_MS,
  type MongoOptions,
  pingMongo,
} from './connection';
export { duplicateKeyFields, isDuplicateKey, type WriteError, writeErrorsOf } from './errors';
export {
  acrossOrganizations,
  type OrganizationDocument,
  organizationDocument,
  scopedTo,
  type TenantScope,
} from './tenant';
