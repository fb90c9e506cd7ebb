import { bulkRow, type farmerBody, type KYC_STATUSES } from '@parametric/contracts';
import { AppError, type FieldError, fieldErrors } from '@parametric/http';
import { duplicateKeyFields } from '@parametric/mongo';
import type { z } from 'zod';
import { herdView } from '../herds/model';
import { plotView } from '../plots/model';
import type { TenantPolicyData } from '../repositories';
import { type FarmerDoc, type FarmerModel, farmerView, opsFarmerView } from './model';

export type FarmerInput = z.output<typeof farmerBody>;
type KycStatus = (typeof KYC_STATUSES)[number];
type Tenant = Pick<TenantPolicyData, 'farmers' | 'plots' | 'herds'>;

const conflictDetails = (fields: string[]): FieldError[] =>
  fields.map((field) => ({ field, message: 'already registered to another farmer of this organization' }));

function conflict(fields: string[]): AppError {
  return AppError.conflict(
    'A farmer with this phone number or national ID is already registered',
    conflictDetails(fields),
  );
}

/** The unique fields of a duplicate-key error, or undefined for any other error. */
function clashingFields(err: unknown): string[] | undefined {
  return duplicateKeyFields(err)?.filter((field) => field !== 'organizationId');
}

/** The organization's farmer holding this phone number or national ID, and which of them. */
async function clash(tenant: Tenant, input: Pick<FarmerInput, 'phoneNumber' | 'nationalId'>) {
  const existing = await tenant.farmers
    .findOne({ $or: [{ phoneNumber: input.phoneNumber }, { nationalId: input.nationalId }] })
    .lean<FarmerDoc>();
  if (!existing) return undefined;
  const fields = [
    ...(existing.phoneNumber === input.phoneNumber ? ['phoneNumber'] : []),
    ...(existing.nationalId === input.nationalId ? ['nationalId'] : []),
  ];
  return { existing, fields };
}

/** The organization's environment, as the gateway signed it (absent: live). */
export type Environment = 'sandbox' | 'live' | undefined;

/**
 * The KYC status a new farmer starts with: PENDING in a live organization, where ops decide it;
 * in a sandbox one APPROVED, except for the magic national IDs (docs/api.md, "Sandbox") that let
 * a partner try its handling of the other outcomes: one beginning `REJECT` is REJECTED, one
 * beginning `PENDING` stays PENDING (either case).
 */
export function initialKycStatus(environment: Environment, nationalId: string): KycStatus {
  if (environment !== 'sandbox') return 'PENDING';
  const id = nationalId.toUpperCase();
  if (id.startsWith('REJECT')) return 'REJECTED';
  if (id.startsWith('PENDING')) return 'PENDING';
  return 'APPROVED';
}

async function insertFarmer(
  tenant: Tenant,
  input: FarmerInput,
  environment: Environment,
): Promise<FarmerDoc> {
  const created = await tenant.farmers.create({
    ...input,
    location: input.location ?? null,
    kycStatus: initialKycStatus(environment, input.nationalId),
  });
  return created.toObject() as FarmerDoc;
}

/**
 * Registers a farmer, KYC PENDING (in a sandbox organization as `initialKycStatus` says). A phone
 * number or national ID already registered in the organization is 409 naming the field; the
 * unique indexes decide a race the look-up missed.
 */
export async function registerFarmer(tenant: Tenant, input: FarmerInput, environment?: Environment) {
  const found = await clash(tenant, input);
  if (found) throw conflict(found.fields);
  try {
    return farmerView(await insertFarmer(tenant, input, environment));
  } catch (err) {
    const fields = clashingFields(err);
    if (fields) throw conflict(fields);
    throw err;
  }
}

type BulkResult =
  | { index: number; status: 'created'; farmerId: string; plotIds: string[] }
  | { index: number; status: 'duplicate'; farmerId: string }
  | { index: number; status: 'conflict' | 'invalid'; errors: FieldError[] };

async function importRow(
  tenant: Tenant,
  index: number,
  raw: unknown,
  environment: Environment,
): Promise<BulkResult> {
  const parsed = bulkRow.safeParse(raw);
  if (!parsed.success) return { index, status: 'invalid', errors: fieldErrors(parsed.error, '(row)') };
  const { plots, ...farmer } = parsed.data;
  const found = await clash(tenant, farmer);
  if (found) {
    // The same person again (both identifiers match): re-sending a file creates nothing.
    const same =
      found.existing.phoneNumber === farmer.phoneNumber && found.existing.nationalId === farmer.nationalId;
    return same
      ? { index, status: 'duplicate', farmerId: found.existing._id }
      : { index, status: 'conflict', errors: conflictDetails(found.fields) };
  }
  try {
    const created = await insertFarmer(tenant, farmer, environment);
    const createdPlots = await Promise.all(
      plots.map((plot) => tenant.plots.create({ ...plot, farmerId: created._id })),
    );
    return { index, status: 'created', farmerId: created._id, plotIds: createdPlots.map((p) => p._id) };
  } catch (err) {
    const fields = clashingFields(err);
    if (!fields) throw err;
    return { index, status: 'conflict', errors: conflictDetails(fields) };
  }
}

/**
 * Imports rows one by one: each gets a result (created, duplicate, conflict, invalid) and a bad
 * row never stops the others. Rows run in order so a file naming a person twice has one
 * `created` and one `duplicate`, the same as re-sending it.
 */
export async function bulkImportFarmers(tenant: Tenant, rows: readonly unknown[], environment?: Environment) {
  const results: BulkResult[] = [];
  for (const [index, raw] of rows.entries()) results.push(await importRow(tenant, index, raw, environment));
  const summary = { created: 0, duplicate: 0, conflict: 0, invalid: 0 };
  for (const r of results) summary[r.status]++;
  return { summary, results };
}

export interface FarmerListQuery {
  page: number;
  limit: number;
  kycStatus?: KycStatus;
}

/** Newest first; `limit` is already capped by the one paging rule (the contract's query schema). */
export async function listFarmers(tenant: Tenant, query: FarmerListQuery) {
  const filter = query.kycStatus ? { kycStatus: query.kycStatus } : {};
  const [rows, total] = await Promise.all([
    tenant.farmers
      .find(filter)
      .sort({ createdAt: -1, _id: -1 })
      .skip((query.page - 1) * query.limit)
      .limit(query.limit)
      .lean<FarmerDoc[]>(),
    tenant.farmers.countDocuments(filter),
  ]);
  return { items: rows.map(farmerView), at: { page: query.page, limit: query.limit, total } };
}

/** One of the organization's farmers; another organization's is indistinguishable from an unknown one. */
export async function requireFarmer(tenant: Pick<Tenant, 'farmers'>, farmerId: string): Promise<FarmerDoc> {
  const farmer = await tenant.farmers.findById(farmerId).lean<FarmerDoc>();
  if (!farmer) throw AppError.notFound('Farmer');
  return farmer;
}

export async function readFarmer(tenant: Tenant, farmerId: string) {
  return farmerView(await requireFarmer(tenant, farmerId));
}

/** A page of a farmer's plots, oldest first (the order they were registered in). */
export async function farmerPlots(tenant: Tenant, farmerId: string, paging: { page: number; limit: number }) {
  const farmer = await requireFarmer(tenant, farmerId);
  const { items, total } = await tenant.plots.listPage({ farmerId: farmer._id }, paging, 'oldestFirst');
  return { items: items.map(plotView), total };
}

/** A page of a farmer's herds, oldest first (the order they were registered in). */
export async function farmerHerds(tenant: Tenant, farmerId: string, paging: { page: number; limit: number }) {
  const farmer = await requireFarmer(tenant, farmerId);
  const { items, total } = await tenant.herds.listPage({ farmerId: farmer._id }, paging, 'oldestFirst');
  return { items: items.map(herdView), total };
}

/**
 * Ops record a KYC decision by farmer id alone, whichever organization the farmer belongs to:
 * hence the model across organizations.
 */
/** Any organization's farmer, by id (ops; the payments service paying a farmer). */
export async function readAnyFarmer(farmers: FarmerModel, farmerId: string) {
  const farmer = await farmers.findById(farmerId).lean<FarmerDoc>();
  if (!farmer) throw AppError.notFound('Farmer');
  return opsFarmerView(farmer);
}

export async function setFarmerKyc(farmers: FarmerModel, farmerId: string, status: 'APPROVED' | 'REJECTED') {
  const farmer = await farmers
    .findOneAndUpdate({ _id: farmerId }, { $set: { kycStatus: status } }, { returnDocument: 'after' })
    .lean<FarmerDoc>();
  if (!farmer) throw AppError.notFound('Farmer');
  return opsFarmerView(farmer);
}
