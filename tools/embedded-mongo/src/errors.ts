import type { Document } from 'bson';

/** MongoDB server error codes this server answers with (names as the real server spells them). */
export const ErrorCodes = {
  InternalError: 1,
  BadValue: 2,
  FailedToParse: 9,
  Unauthorized: 13,
  TypeMismatch: 14,
  PathNotViable: 28,
  IllegalOperation: 20,
  InvalidBSON: 22,
  NamespaceNotFound: 26,
  IndexNotFound: 27,
  ConflictingUpdateOperators: 40,
  CursorNotFound: 43,
  NamespaceExists: 48,
  CommandNotFound: 59,
  ImmutableField: 66,
  CannotCreateIndex: 67,
  InvalidOptions: 72,
  InvalidNamespace: 73,
  IndexOptionsConflict: 85,
  IndexKeySpecsConflict: 86,
  CommandNotSupported: 115,
  CannotIndexParallelArrays: 171,
  InvalidPipelineOperator: 168,
  Location40323: 40323,
  Location40414: 40414,
  Location40571: 40571,
  Location40415: 40415,
  Location51024: 51024,
  Location51091: 51091,
  Location15975: 15975,
  Location40601: 40601,
  Location31253: 31253,
  Location31254: 31254,
  UnsupportedOpQueryCommand: 352,
  BSONObjectTooLarge: 10334,
  Location40324: 40324,
  DuplicateKey: 11000,
} as const;

export type ErrorCodeName = keyof typeof ErrorCodes;

/** A command failure rendered as `{ ok: 0, errmsg, code, codeName, ...extra }`. */
export class MongoCommandError extends Error {
  readonly code: number;
  readonly codeName: string;

  constructor(
    codeName: ErrorCodeName,
    errmsg: string,
    readonly extra: Document = {},
  ) {
    super(errmsg);
    this.code = ErrorCodes[codeName];
    // Location codes have no name on the real server either.
    this.codeName = codeName.startsWith('Location') ? '' : codeName;
  }

  toReply(): Document {
    const reply: Document = { ok: 0, errmsg: this.message, code: this.code };
    if (this.codeName) reply.codeName = this.codeName;
    return { ...reply, ...this.extra };
  }

  /** The shape used inside `writeErrors`. */
  toWriteError(index: number): Document {
    return { index, code: this.code, errmsg: this.message, ...this.extra };
  }
}

/** Errors thrown by mingo are about the user's query or update, so they are the user's BadValue. */
export function asBadValue(err: unknown): MongoCommandError {
  if (err instanceof MongoCommandError) return err;
  return new MongoCommandError('BadValue', err instanceof Error ? err.message : String(err));
}
