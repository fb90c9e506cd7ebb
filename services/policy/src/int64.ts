import { onLeanRead } from '@parametric/mongo';
import { mongo, type Schema } from 'mongoose';

function asBigint(value: unknown, path: string): unknown {
  if (value === null || value === undefined || typeof value === 'bigint') return value;
  if (typeof value === 'number') {
    if (!Number.isSafeInteger(value))
      throw new Error(`${path} holds ${value}, which is not exact minor units`);
    return BigInt(value);
  }
  if (value instanceof mongo.Long) return value.toBigInt();
  throw new Error(`${path} holds a ${typeof value}, not minor units`);
}

/**
 * Money is written as int64 (mongoose `BigInt` paths, so `$inc` and comparisons are exact),
 * and code handles it as `bigint`. Reads do not always give one back: lean reads (every
 * tenant-scope `findOneAndUpdate` among them) get what the driver deserialised, a JS number
 * below 2^53 or a `Long` above, and documents written before money was int64 hold doubles.
 * This turns those paths into `bigint` on every read of the model, lean or not, and on the
 * driver's reads that stand in for lean ones (`findOneLean`, libs/mongo/src/lean.ts).
 */
export function readAsBigint(schema: Schema, paths: readonly string[]): void {
  onLeanRead(schema, (fields) => {
    for (const path of paths) {
      const value = fields[path];
      if (value !== undefined && typeof value !== 'bigint') fields[path] = asBigint(value, path);
    }
  });
}
