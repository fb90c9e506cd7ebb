import net from 'node:net';
import { deserialize, serialize } from 'bson';
import { MongoClient } from 'mongodb';
import { EmbeddedMongoServer } from '../src';

/**
 * Bad input on one connection must never take the server down: the offending connection
 * is closed or answered with an error, and every other client keeps working.
 */

let server: EmbeddedMongoServer;
let client: MongoClient;

beforeAll(async () => {
  server = await EmbeddedMongoServer.start();
  client = await MongoClient.connect(server.uri, { serverSelectionTimeoutMS: 5000 });
  await client
    .db('robust')
    .collection('c')
    .insertOne({ _id: 'survivor' as never, n: 1 });
});

afterAll(async () => {
  await client.close();
  await server.stop();
});

interface Outcome {
  closed: boolean;
  reply?: Buffer;
}

/** Sends raw bytes on a fresh socket and reports whether the server closed it or answered. */
function sendRaw(bytes: Buffer, waitMs = 1000): Promise<Outcome> {
  return new Promise((resolve) => {
    const socket = net.connect(server.port, '127.0.0.1');
    const chunks: Buffer[] = [];
    let settled = false;
    const finish = (outcome: Outcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      resolve(outcome);
    };
    const timer = setTimeout(
      () => finish({ closed: false, reply: chunks.length ? Buffer.concat(chunks) : undefined }),
      waitMs,
    );
    socket.on('data', (c) => {
      chunks.push(c);
      const all = Buffer.concat(chunks);
      if (all.length >= 4 && all.length >= all.readInt32LE(0)) finish({ closed: false, reply: all });
    });
    socket.on('close', () =>
      finish({ closed: true, reply: chunks.length ? Buffer.concat(chunks) : undefined }),
    );
    socket.on('error', () => finish({ closed: true }));
    socket.write(bytes);
  });
}

function header(length: number, opCode: number, requestId = 7): Buffer {
  const h = Buffer.alloc(16);
  h.writeInt32LE(length, 0);
  h.writeInt32LE(requestId, 4);
  h.writeInt32LE(0, 8);
  h.writeInt32LE(opCode, 12);
  return h;
}

function opMsg(body: Buffer, flags = 0): Buffer {
  const prefix = Buffer.alloc(5);
  prefix.writeUInt32LE(flags, 0);
  prefix[4] = 0;
  return Buffer.concat([header(16 + 5 + body.length, 2013), prefix, body]);
}

function replyBody(reply: Buffer): Record<string, unknown> {
  // OP_MSG reply: header (16) + flags (4) + kind byte (1) + document.
  return deserialize(reply.subarray(21));
}

async function stillServing(): Promise<void> {
  const doc = await client
    .db('robust')
    .collection('c')
    .findOne({ _id: 'survivor' as never });
  expect(doc).toEqual({ _id: 'survivor', n: 1 });
}

describe('embedded-mongod under malformed input', () => {
  it('closes a connection whose declared message length is below the header size', async () => {
    const bytes = Buffer.alloc(16);
    bytes.writeInt32LE(8, 0);
    expect((await sendRaw(bytes)).closed).toBe(true);
    await stillServing();
  });

  it('closes a connection that announces a message over the 48 MB limit, without buffering it', async () => {
    expect((await sendRaw(header(64 * 1024 * 1024, 2013))).closed).toBe(true);
    await stillServing();
  });

  it('closes a connection that uses an unknown opcode', async () => {
    const bytes = Buffer.concat([header(26, 9999), Buffer.alloc(10)]);
    expect((await sendRaw(bytes)).closed).toBe(true);
    await stillServing();
  });

  it('closes a connection whose OP_MSG has an unknown section kind', async () => {
    const body = Buffer.from([9, 0, 0, 0, 0]);
    const bytes = Buffer.concat([header(16 + 4 + body.length, 2013), Buffer.alloc(4), body]);
    expect((await sendRaw(bytes)).closed).toBe(true);
    await stillServing();
  });

  it('closes a connection whose OP_MSG sets an unknown required flag bit', async () => {
    const bytes = opMsg(Buffer.from(serialize({ ping: 1, $db: 'admin' })), 1 << 5);
    expect((await sendRaw(bytes)).closed).toBe(true);
    await stillServing();
  });

  it('closes a connection whose BSON document claims more bytes than the message holds', async () => {
    const doc = Buffer.from(serialize({ ping: 1, $db: 'admin' }));
    doc.writeInt32LE(doc.length + 100, 0);
    expect((await sendRaw(opMsg(doc))).closed).toBe(true);
    await stillServing();
  });

  it('answers invalid BSON inside a well-framed OP_MSG with an InvalidBSON error (code 22)', async () => {
    const doc = Buffer.from(serialize({ ping: 1, $db: 'admin' }));
    // Corrupt the element type byte of the first field into an undefined BSON type.
    doc[4] = 0x7e;
    const outcome = await sendRaw(opMsg(doc));
    expect(outcome.reply).toBeDefined();
    expect(replyBody(outcome.reply as Buffer)).toMatchObject({ ok: 0, code: 22, codeName: 'InvalidBSON' });
    await stillServing();
  });

  it('answers a command without $db with an error and keeps the connection usable', async () => {
    const outcome = await sendRaw(opMsg(Buffer.from(serialize({ ping: 1 }))));
    expect(replyBody(outcome.reply as Buffer)).toMatchObject({ ok: 0, code: 40571 });
    await stillServing();
  });

  it('answers a legacy OP_QUERY find with UnsupportedOpQueryCommand (code 352), as mongod 7 does', async () => {
    const name = Buffer.from('robust.$cmd\0');
    const query = Buffer.from(serialize({ find: 'c' }));
    const fields = Buffer.alloc(8);
    const body = Buffer.concat([Buffer.alloc(4), name, fields, query]);
    const outcome = await sendRaw(Buffer.concat([header(16 + body.length, 2004), body]));
    const reply = outcome.reply as Buffer;
    // OP_REPLY: header (16) + flags (4) + cursorId (8) + startingFrom (4) + numberReturned (4).
    expect(reply.readInt32LE(12)).toBe(1);
    expect(deserialize(reply.subarray(36))).toMatchObject({ ok: 0, code: 352 });
  });

  it('answers the legacy OP_QUERY isMaster handshake with OP_REPLY and no setName', async () => {
    const name = Buffer.from('admin.$cmd\0');
    const query = Buffer.from(serialize({ isMaster: 1 }));
    const body = Buffer.concat([Buffer.alloc(4), name, Buffer.alloc(8), query]);
    const outcome = await sendRaw(Buffer.concat([header(16 + body.length, 2004, 42), body]));
    const reply = outcome.reply as Buffer;
    expect(reply.readInt32LE(8)).toBe(42); // responseTo
    const doc = deserialize(reply.subarray(36));
    expect(doc).toMatchObject({ ok: 1, ismaster: true, maxWireVersion: 21 });
    expect(doc.setName).toBeUndefined();
    expect(doc.topologyVersion).toBeUndefined();
  });

  it('sends no reply to a moreToCome OP_MSG but still applies it', async () => {
    const insert = serialize({ insert: 'c', documents: [{ _id: 'fire-and-forget' }], $db: 'robust' });
    const outcome = await sendRaw(opMsg(Buffer.from(insert), 1 << 1), 300);
    expect(outcome.reply).toBeUndefined();
    expect(
      await client
        .db('robust')
        .collection('c')
        .countDocuments({ _id: 'fire-and-forget' as never }),
    ).toBe(1);
  });

  it('accepts a message split across many tiny TCP writes', async () => {
    const bytes = opMsg(Buffer.from(serialize({ ping: 1, $db: 'admin' })));
    const reply = await new Promise<Buffer>((resolve, reject) => {
      const socket = net.connect(server.port, '127.0.0.1', async () => {
        for (const byte of bytes) {
          socket.write(Buffer.from([byte]));
          await new Promise((r) => setImmediate(r));
        }
      });
      socket.on('data', (c) => {
        socket.destroy();
        resolve(c);
      });
      socket.on('error', reject);
    });
    expect(replyBody(reply)).toMatchObject({ ok: 1 });
  });

  it('keeps serving other clients while one connection sends garbage continuously', async () => {
    const garbage = net.connect(server.port, '127.0.0.1');
    garbage.on('error', () => undefined);
    garbage.write(Buffer.alloc(1024, 0xff));
    await stillServing();
    garbage.destroy();
  });
});
