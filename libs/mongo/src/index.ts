export {
  connectMongo,
  MONGO_CONNECT_TIMEOUT_MS,
  MONGO_SOCKET_TIMEOUT_MS,
  type MongoOptions,
  pingMongo,
} from './connection';
export { duplicateKeyFields, isDuplicateKey, type WriteError, writeErrorsOf } from './errors';
export {
  type DeclaredIndex,
  declaredIndexes,
  describeIndex,
  type IndexConflict,
  type IndexedModel,
  type IndexReport,
  migrateIndexes,
  missingUniqueIndexes,
} from './indexes';
export { findOneLean, onLeanRead } from './lean';
export {
  acrossOrganizations,
  type OrganizationDocument,
  organizationDocument,
  scopedTo,
  type TenantScope,
} from './tenant';
