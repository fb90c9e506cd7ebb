/** One item waiting in a batch, with the promise its caller holds. */
export interface Batched<T, R> {
  item: T;
  resolve(result: R): void;
  reject(err: unknown): void;
}

/**
 * Gathers the items a worker's concurrent jobs hand in (jobs arrive one fetch at a time) into
 * batches: the first item waits `windowMs` for others, a full batch (`maxBatch`) goes at once.
 * `handle` settles each item of its batch (it may settle some later than others). Returns what
 * a job calls with its item; the promise is settled by `handle`.
 */
export function batchesOf<T, R>(
  options: { maxBatch: number; windowMs: number },
  handle: (batch: Array<Batched<T, R>>) => void,
): (item: T) => Promise<R> {
  let pending: Array<Batched<T, R>> = [];
  let armed = false;

  function flush(): void {
    armed = false;
    while (pending.length > 0) {
      const batch = pending.slice(0, options.maxBatch);
      pending = pending.slice(options.maxBatch);
      handle(batch);
    }
  }

  return (item) =>
    new Promise<R>((resolve, reject) => {
      pending.push({ item, resolve, reject });
      if (pending.length >= options.maxBatch) flush();
      else if (!armed) {
        armed = true;
        setTimeout(flush, options.windowMs);
      }
    });
}
