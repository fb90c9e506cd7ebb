// Handshake and server-identity commands as a MongoDB 7.0 standalone answers them.
import { connectDriver, type DriverHandle, testMongoBackend } from '@parametric/test-harness';
import { type Document, ObjectId } from 'mongodb';
import { serverError } from './support';

describe('conformance: handshake', () => {
  let handle: DriverHandle;

  beforeAll(async () => {
    handle = await connectDriver('handshake');
  });

  afterAll(async () => {
    await handle.close();
  });

  const admin = () => handle.client.db('admin');

  it('hello answers ok:1 with isWritablePrimary:true, maxWireVersion >= 17 (7.0 is 21) and minWireVersion 0', async () => {
    const reply = await admin().command({ hello: 1 });
    expect(reply.ok).toBe(1);
    expect(reply.isWritablePrimary).toBe(true);
    expect(typeof reply.maxWireVersion).toBe('number');
    expect(reply.maxWireVersion).toBeGreaterThanOrEqual(17);
    expect(reply.minWireVersion).toBe(0);
  });

  it('hello on a standalone has logicalSessionTimeoutMinutes and no replica-set or mongos fields (setName, hosts, msg)', async () => {
    const reply = await admin().command({ hello: 1 });
    expect(typeof reply.logicalSessionTimeoutMinutes).toBe('number');
    expect(reply.logicalSessionTimeoutMinutes).toBeGreaterThan(0);
    expect(reply).not.toHaveProperty('setName');
    expect(reply).not.toHaveProperty('hosts');
    expect(reply).not.toHaveProperty('primary');
    expect(reply).not.toHaveProperty('secondary');
    expect(reply).not.toHaveProperty('msg');
  });

  it('hello reports the standard limits: 16 MiB documents, 48 MB messages, 100000 writes per batch', async () => {
    const reply = await admin().command({ hello: 1 });
    expect(reply.maxBsonObjectSize).toBe(16 * 1024 * 1024);
    expect(reply.maxMessageSizeBytes).toBe(48_000_000);
    expect(reply.maxWriteBatchSize).toBe(100_000);
  });

  it('hello carries localTime as a BSON date, readOnly:false and a numeric connectionId', async () => {
    const reply = await admin().command({ hello: 1 });
    expect(reply.localTime).toBeInstanceOf(Date);
    expect(Math.abs((reply.localTime as Date).getTime() - Date.now())).toBeLessThan(10 * 60 * 1000);
    expect(reply.readOnly).toBe(false);
    expect(typeof reply.connectionId).toBe('number');
  });

  // The one deliberate difference from mongod in the handshake: a topologyVersion would make
  // drivers switch to streaming (awaitable hello) monitoring, which embedded-mongod does not
  // serve, so it answers like a pre-4.4 standalone and drivers poll instead.
  it('hello carries a topologyVersion on a real mongod, and none on embedded-mongod', async () => {
    const reply = await admin().command({ hello: 1 });
    if (testMongoBackend() === 'embedded') {
      expect(reply.topologyVersion).toBeUndefined();
    } else {
      expect(reply.topologyVersion.processId).toBeInstanceOf(ObjectId);
    }
  });

  it('hello is answered on any database, not only admin', async () => {
    const reply = await handle.db.command({ hello: 1 });
    expect(reply.ok).toBe(1);
    expect(reply.isWritablePrimary).toBe(true);
  });

  it('legacy isMaster answers ismaster:true with the same wire versions as hello', async () => {
    const hello = await admin().command({ hello: 1 });
    const legacy = await admin().command({ isMaster: 1 });
    expect(legacy.ok).toBe(1);
    expect(legacy.ismaster).toBe(true);
    expect(legacy.maxWireVersion).toBe(hello.maxWireVersion);
    expect(legacy.minWireVersion).toBe(hello.minWireVersion);
    expect(legacy).not.toHaveProperty('setName');
  });

  it('the lowercase ismaster alias answers ismaster:true too', async () => {
    const legacy = await admin().command({ ismaster: 1 });
    expect(legacy.ok).toBe(1);
    expect(legacy.ismaster).toBe(true);
  });

  it('isMaster with helloOk:true echoes helloOk:true', async () => {
    const legacy = await admin().command({ isMaster: 1, helloOk: true });
    expect(legacy.helloOk).toBe(true);
  });

  it('ping answers exactly { ok: 1 } on a standalone', async () => {
    expect(await admin().command({ ping: 1 })).toEqual({ ok: 1 });
    expect(await handle.db.command({ ping: 1 })).toEqual({ ok: 1 });
  });

  it('buildInfo has a version starting with a digit that matches its four-number versionArray', async () => {
    const info = await admin().command({ buildInfo: 1 });
    expect(info.ok).toBe(1);
    expect(typeof info.version).toBe('string');
    expect(info.version).toMatch(/^\d/);
    const versionArray = info.versionArray as unknown[];
    expect(Array.isArray(versionArray)).toBe(true);
    expect(versionArray).toHaveLength(4);
    for (const part of versionArray) expect(typeof part).toBe('number');
    expect(info.version.startsWith(versionArray.slice(0, 3).join('.'))).toBe(true);
    expect(info.maxBsonObjectSize).toBe(16 * 1024 * 1024);
  });

  it('the lowercase buildinfo alias answers the same version', async () => {
    const info = await admin().command({ buildInfo: 1 });
    const alias = await admin().command({ buildinfo: 1 });
    expect(alias.ok).toBe(1);
    expect(alias.version).toBe(info.version);
  });

  it('an unknown command fails with code 59 CommandNotFound and errmsg "no such command: \'<name>\'"', async () => {
    const error = await serverError(admin().command({ noSuchCommandXyz: 1 }));
    expect(error.code).toBe(59);
    expect(error.codeName).toBe('CommandNotFound');
    expect(error.message).toBe("no such command: 'noSuchCommandXyz'");
    expect((error.errorResponse as Document).ok).toBe(0);
  });

  it('getLastError (removed in 5.1) fails with a server error (ok:0) instead of answering', async () => {
    const error = await serverError(handle.db.command({ getLastError: 1 }));
    expect((error.errorResponse as Document).ok).toBe(0);
    expect(typeof error.code).toBe('number');
  });
});
