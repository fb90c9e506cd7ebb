import type { State } from './state';
import type { Fault } from './types';
import type { DarajaFailure } from './validate';

/** A refused request: thrown by a handler, answered by the server as Daraja's error body. */
export class Failure extends Error {
  constructor(readonly failure: DarajaFailure) {
    super(failure.errorMessage);
  }
}

export function fail(failure: DarajaFailure): never {
  throw new Failure(failure);
}

/** What a fault without details answers (and an unexpected error). */
export const DEFAULT_FAULT: Required<Omit<Fault, 'hang'>> = {
  status: 500,
  errorCode: '500.003.1001',
  errorMessage: 'Internal Server Error',
};

/** Daraja's error body, with a request id of its own. */
export function errorBody(state: State, f: DarajaFailure) {
  return { requestId: state.ids.requestId(), errorCode: f.errorCode, errorMessage: f.errorMessage };
}
