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

export { Aggregator, Query };
