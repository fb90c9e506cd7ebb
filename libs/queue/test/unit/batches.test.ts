import { type Batched, batchesOf } from '../../src/batches';

describe('batchesOf (a worker writing the jobs in hand together)', () => {
  const collecting = (maxBatch: number) => {
    const batches: number[][] = [];
    const take = batchesOf<number, string>(
      { maxBatch, windowMs: 5 },
      (batch: Array<Batched<number, string>>) => {
        batches.push(batch.map((b) => b.item));
        for (const b of batch) {
          if (b.item < 0) b.reject(new Error(`refused ${b.item}`));
          else b.resolve(`done ${b.item}`);
        }
      },
    );
    return { batches, take };
  };

  it('hands the items of one window over as one batch, each caller getting its own result', async () => {
    const { batches, take } = collecting(100);
    const results = await Promise.allSettled([take(1), take(-2), take(3)]);
    expect(batches).toEqual([[1, -2, 3]]);
    expect(results).toEqual([
      { status: 'fulfilled', value: 'done 1' },
      { status: 'rejected', reason: new Error('refused -2') },
      { status: 'fulfilled', value: 'done 3' },
    ]);
  });

  it('never hands over more than maxBatch at once, and starts a full batch without waiting', async () => {
    const { batches, take } = collecting(2);
    const first = [take(1), take(2)];
    expect(batches).toEqual([[1, 2]]);
    await Promise.all([...first, take(3)]);
    expect(batches).toEqual([[1, 2], [3]]);
  });
});
