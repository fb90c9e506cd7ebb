export * from './approvals';
export * from './common';
export * from './determinations/ingest';
export * from './determinations/routes';
export * from './determinations/schemas';
export {
  API_VERSION,
  OPS_ROUTES,
  opsDocument,
  PARTNER_ROUTES,
  partnerDocument,
  type ServiceName,
} from './documents';
export * from './four-eyes';
export * from './gateway';
export * from './operators';
export * from './ops';
export * from './ops-clients';
export * from './payments/payouts';
export * from './payments/premiums';
export * from './payments/quotes';
export * from './policy/bounds';
export * from './policy/farmers';
export * from './policy/policies';
export * from './users';
export * from './webhooks';
