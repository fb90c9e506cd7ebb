import { Aggregator } from 'mingo/aggregator';
import { Context } from 'mingo/core';
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
 * For mingo's updater, which copies every operator table of the context it is given on each
 * update and then adds its own query and comparison operators: with the ~180 expression
 * operators of `CONTEXT` that copying was most of what an update cost (≈100 µs). An update
 * needs only the query operators (positional `$`, array filters, `$pull` conditions), ours
 * included; updates whose conditions evaluate expressions (`$expr`) take `MINGO_OPTIONS`.
 */
export const MINGO_UPDATE_OPTIONS = {
  idKey: '_id',
  context: Context.init({ query: { ...builtinQuery, ...queryOperators } } as unknown as Parameters<
    typeof Context.init
  >[0]),
} as const;

export { Aggregator, Query };
