import type { Document } from 'bson';
import { MongoCommandError } from '../errors';
import { type Selection, selectDocs, shapeFound } from '../query';
import type { AccessPlan } from '../store/planner';
import { type Doc, formatValue, isPlainObject } from '../store/values';
import { EMBEDDED_MONGOD_VERSION } from '../version';
import { type CommandContext, type CommandHandler, targetCollection } from './context';
import { findOptions } from './read';

const VERBOSITIES = new Set(['queryPlanner', 'executionStats', 'allPlansExecution']);

/**
 * `explain` of `find` and `count`: which access the planner chose (`COLLSCAN`, `IDHACK`, or
 * `IXSCAN` under `FETCH`, named as mongod names them) and, from `executionStats` on, how many
 * index keys and documents the query examined. The plan tree is mongod's in outline only
 * (no rejected plans, no plan cache, simplified index bounds).
 */
const explain: CommandHandler = (body, ctx) => {
  const inner = body.explain;
  if (!isPlainObject(inner)) {
    throw new MongoCommandError(
      'TypeMismatch',
      "BSON field 'explain.explain' is the wrong type, expected type 'object'",
    );
  }
  const verbosity = body.verbosity ?? 'allPlansExecution';
  if (typeof verbosity !== 'string' || !VERBOSITIES.has(verbosity)) {
    throw new MongoCommandError(
      'BadValue',
      "verbosity string must be one of {'queryPlanner', 'executionStats', 'allPlansExecution'}",
    );
  }
  const command = Object.keys(inner)[0] ?? '';
  const run = EXPLAINABLE[command];
  if (!run) {
    throw new MongoCommandError(
      'CommandNotSupported',
      `explain of ${command} is not supported by embedded-mongod`,
    );
  }
  const { namespace, filter, selection, root, nReturned } = run(inner, ctx);
  const winningPlan = root(accessStage(selection.plan, filter));
  const reply: Document = {
    explainVersion: '1',
    queryPlanner: {
      namespace,
      indexFilterSet: false,
      parsedQuery: filter,
      winningPlan,
      rejectedPlans: [],
    },
  };
  if (verbosity !== 'queryPlanner') {
    reply.executionStats = {
      executionSuccess: true,
      nReturned,
      executionTimeMillis: 0,
      totalKeysExamined: selection.keysExamined,
      totalDocsExamined: selection.docsExamined,
      executionStages: { ...winningPlan, nReturned },
    };
    if (verbosity === 'allPlansExecution') reply.executionStats.allPlansExecution = [];
  }
  return {
    ...reply,
    command: { ...inner, $db: ctx.db },
    serverInfo: { host: 'embedded-mongod', version: EMBEDDED_MONGOD_VERSION, gitVersion: 'embedded-mongod' },
    ok: 1,
  };
};

interface Explained {
  namespace: string;
  filter: Doc;
  selection: Selection;
  /** Wraps the access stage in the stages the command adds (sort, limit, count, …). */
  root: (access: Doc) => Doc;
  nReturned: number;
}

const EXPLAINABLE: Record<string, (inner: Document, ctx: CommandContext) => Explained> = {
  find(inner, ctx) {
    const name = targetCollection(inner, 'find', ctx);
    const { singleBatch: _, ...options } = findOptions(inner);
    const filter = isPlainObject(inner.filter) ? inner.filter : {};
    const selection = selectDocs(ctx.state.catalog.get(ctx.db, name), filter);
    const nReturned = shapeFound(selection.docs, filter, options).length;
    const root = (access: Doc) => {
      let stage = access;
      if (isPlainObject(options.sort) && Object.keys(options.sort).length > 0)
        stage = { stage: 'SORT', sortPattern: options.sort, inputStage: stage };
      if (options.skip) stage = { stage: 'SKIP', skipAmount: options.skip, inputStage: stage };
      if (options.limit) stage = { stage: 'LIMIT', limitAmount: options.limit, inputStage: stage };
      if (isPlainObject(options.projection) && Object.keys(options.projection).length > 0)
        stage = { stage: 'PROJECTION_DEFAULT', transformBy: options.projection, inputStage: stage };
      return stage;
    };
    return { namespace: `${ctx.db}.${name}`, filter, selection, root, nReturned };
  },
  count(inner, ctx) {
    const name = targetCollection(inner, 'count', ctx);
    const filter = isPlainObject(inner.query) ? inner.query : {};
    const selection = selectDocs(ctx.state.catalog.get(ctx.db, name), filter);
    const root = (access: Doc) => ({ stage: 'COUNT', inputStage: access });
    return { namespace: `${ctx.db}.${name}`, filter, selection, root, nReturned: 0 };
  },
};

function accessStage(plan: AccessPlan, filter: Doc): Doc {
  if (plan.stage === 'COLLSCAN') return { stage: 'COLLSCAN', filter, direction: 'forward' };
  if (plan.stage === 'IDHACK') return { stage: 'IDHACK' };
  if (plan.stage === 'OR') {
    // FETCH over OR over each clause's scan, as mongod shows it.
    const inputStages = plan.plans.map((sub) => {
      const stage = accessStage(sub, {});
      return stage.stage === 'FETCH' ? (stage.inputStage as Doc) : stage;
    });
    return { stage: 'FETCH', filter, inputStage: { stage: 'OR', inputStages } };
  }
  const { index, prefix, range } = plan;
  const indexBounds: Doc = {};
  index.fields.forEach((field, i) => {
    const equals = prefix[i];
    if (equals) indexBounds[field] = equals.map((v) => `[${formatValue(v)}, ${formatValue(v)}]`);
    else if (i === prefix.length && range) {
      const low = range.lower
        ? `${range.lower.inclusive ? '[' : '('}${formatValue(range.lower.value)}`
        : '[MinKey';
      const high = range.upper
        ? `${formatValue(range.upper.value)}${range.upper.inclusive ? ']' : ')'}`
        : 'MaxKey]';
      indexBounds[field] = [`${low}, ${high}`];
    } else indexBounds[field] = ['[MinKey, MaxKey]'];
  });
  return {
    stage: 'FETCH',
    filter,
    inputStage: {
      stage: 'IXSCAN',
      keyPattern: index.spec.key,
      indexName: index.name,
      isMultiKey: index.isMultikey,
      isUnique: index.unique,
      isSparse: index.sparse,
      isPartial: index.spec.partialFilterExpression !== undefined,
      indexVersion: 2,
      direction: 'forward',
      indexBounds,
    },
  };
}

export const explainCommands: Record<string, CommandHandler> = { explain };
