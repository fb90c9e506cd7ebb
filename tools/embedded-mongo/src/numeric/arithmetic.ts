import { Decimal128, type Long } from 'bson';
import * as dec from './decimal';
import {
  type BsonNumber,
  fitsInt64,
  intOrLong,
  longOf,
  type NumericKind,
  numericKind,
  toBigInt,
  toDec,
  toDouble,
  widest,
} from './numbers';

/**
 * mongod's numeric type promotion. Updates (`$inc`, `$mul`) follow SafeNum: int+int widens
 * to long, long overflow is an error, any decimal makes the result decimal (a double joins
 * at 15 digits), otherwise double. Aggregation follows the expression and accumulator
 * states, where long overflow turns into double instead of failing.
 */

function integral(kind: NumericKind): boolean {
  return kind === 'int' || kind === 'long';
}

function integerResult(value: bigint, kind: NumericKind): number | Long | undefined {
  if (!fitsInt64(value)) return undefined;
  return kind === 'int' ? intOrLong(value) : longOf(value);
}

/** `$inc`: the new value, or undefined when int64 overflows (mongod fails the update). */
export function safeAdd(a: BsonNumber, b: BsonNumber): BsonNumber | undefined {
  const kind = widest(numericKind(a), numericKind(b));
  if (kind === 'decimal') return dec.toDecimal128(dec.add(toDec(a), toDec(b)));
  if (kind === 'double') return toDouble(a) + toDouble(b);
  return integerResult(toBigInt(a as number | Long) + toBigInt(b as number | Long), kind);
}

/** `$mul`, with the same rules as `safeAdd`. */
export function safeMultiply(a: BsonNumber, b: BsonNumber): BsonNumber | undefined {
  const kind = widest(numericKind(a), numericKind(b));
  if (kind === 'decimal') return dec.toDecimal128(dec.multiply(toDec(a), toDec(b)));
  if (kind === 'double') return toDouble(a) * toDouble(b);
  return integerResult(toBigInt(a as number | Long) * toBigInt(b as number | Long), kind);
}

/** `$add`'s running total: the narrowest type that holds the result, long overflow → double. */
export class AddState {
  private kind: NumericKind = 'int';
  private longTotal = 0n;
  private doubleTotal = 0;
  private decimalTotal: dec.Dec = dec.fromBigInt(0n);

  add(value: BsonNumber): void {
    const old = this.kind;
    this.kind = widest(old, numericKind(value));
    if (old !== this.kind) {
      if (this.kind === 'double') this.doubleTotal = Number(this.longTotal);
      if (this.kind === 'decimal')
        this.decimalTotal = integral(old)
          ? dec.fromBigInt(this.longTotal)
          : dec.fromDouble(this.doubleTotal, 15);
    }
    if (integral(this.kind)) {
      const next = this.longTotal + toBigInt(value as number | Long);
      if (fitsInt64(next)) this.longTotal = next;
      else {
        this.kind = 'double';
        this.doubleTotal = Number(this.longTotal) + toDouble(value);
      }
    } else if (this.kind === 'double') this.doubleTotal += toDouble(value);
    else this.decimalTotal = dec.add(this.decimalTotal, toDec(value));
  }

  value(): BsonNumber {
    if (this.kind === 'int') return intOrLong(this.longTotal);
    if (this.kind === 'long') return longOf(this.longTotal);
    if (this.kind === 'double') return this.doubleTotal;
    return dec.toDecimal128(this.decimalTotal);
  }
}

/** `$multiply`'s running product, tracked as mongod's MultiplyState does. */
export class MultiplyState {
  private kind: NumericKind = 'int';
  private longProduct = 1n;
  private doubleProduct = 1;
  private decimalProduct: dec.Dec = dec.fromBigInt(1n);

  multiply(value: BsonNumber): void {
    const old = this.kind;
    this.kind = widest(old, numericKind(value));
    if (this.kind === 'decimal') {
      if (old !== 'decimal')
        this.decimalProduct =
          old === 'double' ? dec.fromDouble(this.doubleProduct, 15) : dec.fromBigInt(this.longProduct);
      this.decimalProduct = dec.multiply(this.decimalProduct, toDec(value));
      return;
    }
    this.doubleProduct *= toDouble(value);
    if (this.kind === 'double') return;
    const next = this.longProduct * toBigInt(value as number | Long);
    if (fitsInt64(next)) this.longProduct = next;
    else this.kind = 'double';
  }

  value(): BsonNumber {
    if (this.kind === 'int') return intOrLong(this.longProduct);
    if (this.kind === 'long') return longOf(this.longProduct);
    if (this.kind === 'double') return this.doubleProduct;
    return dec.toDecimal128(this.decimalProduct);
  }
}

/** `$subtract` of two numbers. */
export function subtractNumbers(a: BsonNumber, b: BsonNumber): BsonNumber {
  const kind = widest(numericKind(a), numericKind(b));
  if (kind === 'decimal') return dec.toDecimal128(dec.subtract(toDec(a), toDec(b)));
  if (kind === 'double') return toDouble(a) - toDouble(b);
  const difference = toBigInt(a as number | Long) - toBigInt(b as number | Long);
  if (!fitsInt64(difference)) return toDouble(a) - toDouble(b);
  return kind === 'int' ? intOrLong(difference) : longOf(difference);
}

/** `$divide`: decimal when either side is, else double; undefined for a zero divisor. */
export function divideNumbers(a: BsonNumber, b: BsonNumber): BsonNumber | undefined {
  if (a instanceof Decimal128 || b instanceof Decimal128) {
    const divisor = toDec(b);
    if (divisor.kind === 'finite' && divisor.coef === 0n) return undefined;
    return dec.toDecimal128(dec.divide(toDec(a), divisor));
  }
  const divisor = toDouble(b);
  return divisor === 0 ? undefined : toDouble(a) / divisor;
}

/**
 * `$sum` and `$avg`: integers are summed exactly, doubles with compensation (mongod keeps a
 * double-double sum), decimals in decimal; the result takes the widest type seen, and a
 * long total that no longer fits int64 becomes a double.
 */
export class SumState {
  private kind: NumericKind = 'int';
  private count = 0;
  private integers = 0n;
  private doubles = 0;
  private compensation = 0;
  private hasDoubles = false;
  private decimals: dec.Dec = dec.fromBigInt(0n);

  add(value: BsonNumber): void {
    this.count++;
    const kind = numericKind(value);
    this.kind = widest(this.kind, kind);
    if (integral(kind)) this.integers += toBigInt(value as number | Long);
    else if (kind === 'double') this.addDouble(value as number);
    else this.decimals = dec.add(this.decimals, toDec(value));
  }

  private addDouble(x: number): void {
    this.hasDoubles = true;
    const t = this.doubles + x;
    if (Number.isFinite(t) && Number.isFinite(x)) {
      this.compensation +=
        Math.abs(this.doubles) >= Math.abs(x) ? this.doubles - t + x : x - t + this.doubles;
    }
    this.doubles = t;
  }

  private nonDecimalDouble(): number {
    const head = Number(this.integers);
    const tail = Number(this.integers - BigInt(head));
    if (!Number.isFinite(this.doubles)) return this.doubles;
    return this.doubles + head + (this.compensation + tail);
  }

  /** The non-decimal part as a decimal, the double part at 34 digits as mongod converts it. */
  private nonDecimal(): dec.Dec {
    const integers = dec.fromBigInt(this.integers);
    if (!this.hasDoubles) return integers;
    const doubles = dec.add(dec.fromDouble(this.doubles, 34), dec.fromDouble(this.compensation, 34));
    return dec.add(integers, doubles);
  }

  sum(): BsonNumber {
    if (integral(this.kind) && fitsInt64(this.integers)) {
      return this.kind === 'int' ? intOrLong(this.integers) : longOf(this.integers);
    }
    if (this.kind === 'decimal') return dec.toDecimal128(dec.add(this.decimals, this.nonDecimal()));
    return this.nonDecimalDouble();
  }

  /** null when no numeric input was seen. */
  average(): BsonNumber | null {
    if (this.count === 0) return null;
    if (this.kind === 'decimal') {
      const total = dec.add(this.decimals, this.nonDecimal());
      return dec.toDecimal128(dec.divide(total, dec.fromBigInt(BigInt(this.count))));
    }
    return this.nonDecimalDouble() / this.count;
  }
}
