// Small helpers shared by the conformance suites. Nothing here knows about any particular server:
// the suites state what a real MongoDB 7.0 standalone answers.
import {
  Decimal128,
  type Document,
  Double,
  Int32,
  Long,
  MongoServerError,
  type ObjectId,
  type WriteError,
} from 'mongodb';

/**
 * A document of any shape with an `_id` of any type. The driver's default `Document` assumes ObjectId ids,
 * which these suites deliberately do not.
 */
export interface Doc {
  _id?: string | number | ObjectId | Document;
  // biome-ignore lint/suspicious/noExplicitAny: stored documents hold arbitrary BSON values
  [key: string]: any;
}

/** Awaits `operation`, which must reject with a server error; returns that error for further checks. */
export async function serverError(operation: Promise<unknown>): Promise<MongoServerError> {
  let outcome: unknown;
  try {
    outcome = await operation;
  } catch (error) {
    if (error instanceof MongoServerError) return error;
    throw error;
  }
  throw new Error(`expected a MongoServerError, but the operation succeeded with ${JSON.stringify(outcome)}`);
}

/** The write errors of a bulk error as an array (the driver types them as one-or-many). */
export function writeErrorsOf(error: MongoServerError): WriteError[] {
  const raw: unknown = (error as { writeErrors?: unknown }).writeErrors;
  if (raw === undefined) return [];
  return (Array.isArray(raw) ? raw : [raw]) as WriteError[];
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Regex-escapes a literal string (database and collection names in error messages). */
export function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * A numeric value with its BSON type, as read with `promoteValues: false`: `int 5`,
 * `long 9007199254740993`, `double 2.5`, `decimal 1.50`. Anything else is `other <text>`.
 */
export function bsonNumber(value: unknown): string {
  if (value instanceof Int32) return `int ${value.value}`;
  if (value instanceof Double) return `double ${value.value}`;
  if (value instanceof Long) return `long ${value.toString()}`;
  if (value instanceof Decimal128) return `decimal ${value.toString()}`;
  return `other ${String(value)}`;
}

/** Every field of a document except `_id` rendered with `bsonNumber`. */
export function bsonNumbers(doc: Document | null): Record<string, string> {
  if (!doc) throw new Error('expected a document, got null');
  return Object.fromEntries(
    Object.entries(doc)
      .filter(([k]) => k !== '_id')
      .map(([k, v]) => [k, bsonNumber(v)]),
  );
}
