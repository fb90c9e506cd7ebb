export * from './common';
export * from './determinations/ingest';
export { OPS_ROUTES, opsDocument, PARTNER_ROUTES, partnerDocument, type ServiceName } from './documents';
export * from './gateway';
export * from './ops';
export * from './policy/bounds';
export * from './policy/farmers';
export * from './policy/policies';
export * from './webhooks';
