import type { Document } from 'bson';
import type { Catalog } from '../store/catalog';
import type { Collection } from '../store/collection';
import type { IndexSpec } from '../store/indexes';
import type { Doc } from '../store/values';
import { asUuid } from './records';

/**
 * Applies journal and snapshot records to a catalogue through the store's own methods (its
 * sink unset, so nothing is journalled again). A record that cannot apply means the files
 * and the store disagree; it throws rather than guess.
 */
export class Replayer {
  /** An `$out` whose documents are still being read. */
  private pendingOut?: { db: string; coll: string; uuid: Document['uuid']; count: number; docs: Doc[] };
  applied = 0;

  constructor(private readonly catalog: Catalog) {}

  apply(record: Document): void {
    this.applied++;
    if (this.pendingOut) {
      if (record.op !== 'doc') throw new Error(`expected an $out document, found op '${record.op}'`);
      this.pendingOut.docs.push(record.doc as Doc);
      this.finishOutIfComplete();
      return;
    }
    const { catalog } = this;
    const db = record.db as string;
    const coll = record.coll as string;
    switch (record.op) {
      case 'create':
        catalog.create(db, coll, record.options as Doc, asUuid(record.uuid));
        return;
      case 'drop':
        catalog.drop(db, coll);
        return;
      case 'dropDatabase':
        catalog.dropDatabase(db);
        return;
      case 'rename':
        catalog.rename(
          record.fromDb as string,
          record.from as string,
          record.toDb as string,
          record.to as string,
          record.dropTarget === true,
          asUuid(record.uuid),
        );
        return;
      case 'insert':
        this.collection(db, coll).insert(record.doc as Doc);
        return;
      case 'replace': {
        const collection = this.collection(db, coll);
        const doc = record.doc as Doc;
        const current = collection.byId(doc._id);
        if (!current) throw new Error(`replace of a missing document in ${db}.${coll}`);
        collection.replace(current, doc);
        return;
      }
      case 'delete': {
        const collection = this.collection(db, coll);
        const current = collection.byId(record.id);
        if (!current) throw new Error(`delete of a missing document in ${db}.${coll}`);
        collection.remove(current);
        return;
      }
      case 'createIndex':
        this.collection(db, coll).createIndex(record.spec as IndexSpec);
        return;
      case 'dropIndex':
        this.collection(db, coll).dropIndex(record.name as string);
        return;
      case 'dropAllIndexes':
        this.collection(db, coll).dropAllIndexes();
        return;
      case 'setExpireAfterSeconds':
        this.collection(db, coll).setExpireAfterSeconds(record.name as string, record.seconds as number);
        return;
      case 'replaceContents':
        this.pendingOut = { db, coll, uuid: record.uuid, count: record.count as number, docs: [] };
        this.finishOutIfComplete();
        return;
      default:
        throw new Error(`unknown record op '${String(record.op)}'`);
    }
  }

  /** Throws if an `$out` was left without all its documents (its frame ended early). */
  endOfFrame(): void {
    if (this.pendingOut)
      throw new Error(`$out into ${this.pendingOut.db}.${this.pendingOut.coll} is incomplete`);
  }

  private finishOutIfComplete(): void {
    const out = this.pendingOut;
    if (!out || out.docs.length < out.count) return;
    this.pendingOut = undefined;
    this.catalog.replaceContents(out.db, out.coll, out.docs, asUuid(out.uuid));
  }

  private collection(db: string, coll: string): Collection {
    const collection = this.catalog.get(db, coll);
    if (!collection) throw new Error(`record for missing collection ${db}.${coll}`);
    return collection;
  }
}
