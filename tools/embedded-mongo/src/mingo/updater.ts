import path from 'node:path';
import { Context } from 'mingo/core';
import * as booleanOperators from 'mingo/operators/expression/boolean';
import * as comparisonOperators from 'mingo/operators/expression/comparison';
import * as builtinPipeline from 'mingo/operators/pipeline';
import * as builtinQuery from 'mingo/operators/query';
import * as updateOperators from 'mingo/operators/update';
import {
  CONTEXT,
  computeOptions,
  forkOptions,
  type MingoComputeOptions,
  Query,
  UPDATE_QUERY_OPERATORS,
} from './context';

type Doc = Record<string, unknown>;
type Mutate = (doc: Doc) => string[];
type UpdateOperator = (expr: unknown, arrayFilters: Doc[], options: MingoComputeOptions) => Mutate;

/**
 * mingo's `buildParams` (how `mingo/updater` resolves every path of one update, array filters
 * and positional `$` included, and checks them against each other), which the package does not
 * export; the file `mingo/operators/update` itself loads, so the same module.
 */
const { buildParams } = require(
  path.join(path.dirname(require.resolve('mingo/package.json')), 'cjs/operators/update/_internal.js'),
) as { buildParams: (exprs: unknown[], arrayFilters: Doc[], options: MingoComputeOptions) => unknown };

const UPDATE_OPERATORS = updateOperators as unknown as Record<string, UpdateOperator>;

/** The pipeline stages `mingo/updater` adds to its context (for pipeline-style updates). */
const UPDATER_PIPELINE = {
  $addFields: builtinPipeline.$addFields,
  $set: builtinPipeline.$set,
  $project: builtinPipeline.$project,
  $unset: builtinPipeline.$unset,
  $replaceRoot: builtinPipeline.$replaceRoot,
  $replaceWith: builtinPipeline.$replaceWith,
};

/**
 * The options `mingo/updater` builds for every update, built once: its `updateDocuments`
 * copies the context it is given and adds its operators to the copy on each call, which
 * was half of what an update cost.
 */
function updaterOptions(context: Context): MingoComputeOptions {
  // mingo types each table by kind; these are its own tables.
  const ops = (tables: unknown) => tables as never;
  return computeOptions({
    idKey: '_id',
    context: context
      .addExpressionOps(ops(booleanOperators))
      .addExpressionOps(ops(comparisonOperators))
      .addQueryOps(ops(builtinQuery))
      .addPipelineOps(ops(UPDATER_PIPELINE)),
    collation: {},
    firstOnly: true,
  });
}

const QUERY_ONLY = updaterOptions(
  Context.init({ query: UPDATE_QUERY_OPERATORS } as unknown as Parameters<typeof Context.init>[0]),
);
const WITH_EXPRESSIONS = updaterOptions(Context.from(CONTEXT));

function assert(condition: unknown, message: string): void {
  if (!condition) throw new Error(message);
}

/**
 * `update(doc, modifier, arrayFilters, condition, { cloneMode: 'deep' })` of `mingo/updater`
 * for a modifier (`{ $set: ..., ... }`), step by step as its `updateDocuments` takes them, on
 * options built once. Changes `doc` in place; returns the paths it modified, sorted.
 * `evaluatesExpressions`: the modifier, array filters or condition hold `$expr` or `$where`.
 */
export function updateDocument(
  doc: Doc,
  modifier: Doc,
  arrayFilters: Doc[] | undefined,
  condition: Doc | undefined,
  evaluatesExpressions: boolean,
): string[] {
  const filters = arrayFilters ?? [];
  const options = forkOptions(evaluatesExpressions ? WITH_EXPRESSIONS : QUERY_ONLY).update({
    condition: condition ?? {},
    updateConfig: { cloneMode: 'deep', arrayFilters },
    variables: undefined,
    updateParams: {},
  });
  if (condition && Object.keys(condition).length > 0 && !new Query(condition, options as never).test(doc)) {
    return [];
  }
  const unknownOp = Object.keys(modifier).find((op) => !UPDATE_OPERATORS[op]);
  assert(!unknownOp, `Unknown update operator: '${unknownOp}'.`);
  const renameTargets = Object.values((modifier.$rename ?? {}) as Doc).map((target) => ({
    [target as string]: true,
  }));
  options.update({
    updateParams: buildParams([...Object.values(modifier), ...renameTargets], filters, options),
  });
  const mutations = Object.keys(modifier).map((op) =>
    (UPDATE_OPERATORS[op] as UpdateOperator)(modifier[op], filters, options),
  );
  const modified: string[] = [];
  for (const mutate of mutations) modified.push(...mutate(doc));
  return modified.sort();
}
