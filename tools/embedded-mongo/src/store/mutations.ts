import type { UUID } from 'bson';
import type { IndexSpec } from './indexes';
import type { Doc } from './values';

/**
 * One committed change to the catalogue, at the level the store's own methods work, so that
 * replaying it calls the same method again (and so re-checks nothing it could disagree on).
 * Updates carry the whole new document: replay then never re-runs update operators, whose
 * result could depend on the time (`$currentDate`) or on code that changed since.
 */
export type Mutation =
  | { op: 'create'; db: string; coll: string; options: Doc; uuid: UUID }
  | { op: 'drop'; db: string; coll: string }
  | { op: 'dropDatabase'; db: string }
  | { op: 'rename'; fromDb: string; from: string; toDb: string; to: string; dropTarget: boolean; uuid: UUID }
  | { op: 'insert'; db: string; coll: string; doc: Doc }
  | { op: 'replace'; db: string; coll: string; doc: Doc }
  | { op: 'delete'; db: string; coll: string; id: unknown }
  | { op: 'createIndex'; db: string; coll: string; spec: IndexSpec }
  | { op: 'dropIndex'; db: string; coll: string; name: string }
  | { op: 'dropAllIndexes'; db: string; coll: string }
  | { op: 'setExpireAfterSeconds'; db: string; coll: string; name: string; seconds: number }
  /** `$out`: the `count` records after this one are `doc` records holding the new contents. */
  | { op: 'replaceContents'; db: string; coll: string; uuid: UUID; count: number }
  | { op: 'doc'; doc: Doc };

/** Where the catalogue reports each change once it has succeeded. */
export type MutationSink = (mutation: Mutation) => void;
