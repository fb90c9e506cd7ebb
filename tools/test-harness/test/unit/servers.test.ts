import {
  connectDriver,
  connectMongoose,
  connectRedis,
  testChain,
  testMongoUrl,
  testRedisUrl,
} from '../../src';

// This file is itself in the unit project: what a misclassified test meets.
const REFUSAL = /this test file runs in the jest "unit" project, which starts no servers, yet it asked for/;

describe('a unit test asking the harness for a server', () => {
  it('is refused at once, naming the server and the way out', async () => {
    expect(() => testMongoUrl()).toThrow(REFUSAL);
    expect(() => testMongoUrl()).toThrow(/asked for MongoDB: test the rule against an in-memory store/);
    expect(() => testRedisUrl()).toThrow(/asked for Redis/);
    expect(() => connectRedis()).toThrow(/asked for Redis/);
    await expect(testChain()).rejects.toThrow(/asked for the chain/);
    await expect(connectDriver('unit')).rejects.toThrow(REFUSAL);
    await expect(connectMongoose('unit')).rejects.toThrow(REFUSAL);
  });

  it('is refused even when a platform run in the same jest process published the servers', () => {
    expect(process.env.TEST_MONGO_URL).toBeUndefined();
    expect(process.env.TEST_REDIS_URL).toBeUndefined();
    process.env.TEST_MONGO_URL = 'mongodb://127.0.0.1:9/';
    try {
      expect(() => testMongoUrl()).toThrow(REFUSAL);
    } finally {
      delete process.env.TEST_MONGO_URL;
    }
  });
});
