import { Aggregator } from 'mingo/aggregator';
import { Context, computeValue } from 'mingo/core';
import * as builtinAccumulators from 'mingo/operators/accumulator';
import * as builtinExpressions from 'mingo/operators/expression';
import * as builtinPipeline from 'mingo/operators/pipeline';
import * as builtinProjection from 'mingo/operators/projection';
import * as builtinQuery from 'mingo/operators/query';
import * as builtinWindow from 'mingo/operators/window';
import { Query } from 'mingo/query';
import { $sort } from '../sort';
import { accumulatorExpressions, accumulators } from './accumulators';
import { expressionOperators } from './expression-operators';
import { $group, $groupKey } from './group';
import { queryOperators } from './query-operators';

/**
 * mingo's operators with ours in place of the ones that must treat int64 and Decimal128 as
 * numbers. mingo's top-level `Query`/`Aggregator` always prefer their built-in operators,
 * so the server uses the base classes with this context instead.
 */
const CONTEXT = Context.init({
  accumulator: { ...builtinAccumulators, ...accumulators },
  expression: { ...builtinExpressions, ...accumulatorExpressions, ...expressionOperators, $groupKey },
  pipeline: { ...builtinPipeline, $group, $sort },
  projection: builtinProjection,
  query: { ...builtinQuery, ...queryOperators },
  window: builtinWindow,
} as unknown as Parameters<typeof Context.init>[0]);

export const MINGO_OPTIONS = { idKey: '_id', context: CONTEXT } as const;

/**
 * mingo's own options object (`ComputeOptions`), which its classes take as it is. Given plain
 * options, every `Query` and `Aggregator` copies each operator table of the context (≈400
 * operators) before it does anything, which cost more than the query it then ran; given a
 * `ComputeOptions`, it copies only that object's per-run locals (`$$NOW`, the condition) and
 * shares the context. The class is not exported, so it is taken from the options an
 * operator receives.
 */
export interface MingoComputeOptions {
  update(locals: Record<string, unknown>): MingoComputeOptions;
  constructor: { init(options: unknown): MingoComputeOptions };
}

export function computeOptions(options: Record<string, unknown>): MingoComputeOptions {
  let received: MingoComputeOptions | undefined;
  const probe = Context.init({
    expression: {
      $probe: (_obj: unknown, _expr: unknown, options: MingoComputeOptions) => {
        received = options;
        return null;
      },
    },
  } as unknown as Parameters<typeof Context.init>[0]);
  computeValue({}, null, '$probe', { context: probe } as unknown as Parameters<typeof computeValue>[3]);
  return (received as MingoComputeOptions).constructor.init(options);
}

/** A copy of `options` with its own locals, as mingo's classes make one on construction. */
export function forkOptions(options: MingoComputeOptions): MingoComputeOptions {
  return options.constructor.init(options);
}

/**
 * `MINGO_OPTIONS` for `new Query` and `new Aggregator` (it is a class instance: to add
 * options, spread `MINGO_OPTIONS` instead).
 */
export const MINGO_COMPILED = computeOptions(MINGO_OPTIONS) as unknown as typeof MINGO_OPTIONS;

/**
 * The query operators the updater needs (positional `$`, array filters, `$pull`
 * conditions), ours included. Updates whose conditions evaluate expressions (`$expr`,
 * `$where`) take the whole of `CONTEXT`.
 */
export const UPDATE_QUERY_OPERATORS = { ...builtinQuery, ...queryOperators };
export { Aggregator, CONTEXT, Query };
