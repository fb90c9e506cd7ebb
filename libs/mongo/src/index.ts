export { connectMongo, type MongoOptions, pingMongo } from './connection';
export { duplicateKeyFields, isDuplicateKey } from './errors';
export {
  acrossOrganizations,
  type OrganizationDocument,
  organizationDocument,
  scopedTo,
  type TenantScope,
} from './tenant';
