import type { Socket } from 'node:net';
import { BSONError, type Document } from 'bson';
import { runCommand } from '../commands';
import { MongoCommandError } from '../errors';
import type { ServerState } from '../state';
import type { Reply } from './encoded';
import {
  encodeOpMsg,
  encodeOpReply,
  HEADER_SIZE,
  MAX_MESSAGE_SIZE,
  type MessageHeader,
  MSG_MORE_TO_COME,
  OP_MSG,
  OP_QUERY,
  ProtocolError,
  parseOpMsg,
  parseOpQuery,
  readHeader,
} from './protocol';

/** Commands a 7.0 server still answers over legacy OP_QUERY: the handshake only. */
const OP_QUERY_COMMANDS = new Set(['hello', 'isMaster', 'ismaster']);

let nextRequestId = 1;

/**
 * One client socket: frames messages, runs each command synchronously (so every command
 * is atomic with respect to every other), and answers. A message that breaks framing
 * closes only this connection; a bad command inside a good frame gets an error reply.
 */
export class Connection {
  private chunks: Buffer[] = [];
  private buffered = 0;

  constructor(
    private readonly socket: Socket,
    private readonly state: ServerState,
    readonly id: number,
    private readonly log: (message: string) => void,
  ) {
    socket.setNoDelay(true);
    socket.on('data', (chunk: Buffer) => this.onData(chunk));
    // A client vanishing mid-write is routine; it must not reach the process.
    socket.on('error', () => socket.destroy());
  }

  private onData(chunk: Buffer): void {
    this.chunks.push(chunk);
    this.buffered += chunk.length;
    while (this.buffered >= 4 && !this.socket.destroyed) {
      const length = this.peekLength();
      if (length < HEADER_SIZE || length > MAX_MESSAGE_SIZE) {
        this.close(`invalid message length ${length}`);
        return;
      }
      if (this.buffered < length) return;
      this.handle(this.take(length));
    }
  }

  private peekLength(): number {
    if ((this.chunks[0] as Buffer).length < 4) this.chunks = [Buffer.concat(this.chunks)];
    return (this.chunks[0] as Buffer).readInt32LE(0);
  }

  private take(length: number): Buffer {
    const all = this.chunks.length === 1 ? (this.chunks[0] as Buffer) : Buffer.concat(this.chunks);
    const message = all.subarray(0, length);
    const rest = all.subarray(length);
    this.chunks = rest.length > 0 ? [rest] : [];
    this.buffered = rest.length;
    return message;
  }

  private handle(message: Buffer): void {
    const header = readHeader(message);
    try {
      if (header.opCode === OP_MSG) this.handleOpMsg(header, message);
      else if (header.opCode === OP_QUERY) this.handleOpQuery(header, message);
      else this.close(`unsupported opcode ${header.opCode}`);
    } catch (err) {
      if (err instanceof ProtocolError) this.close(err.message);
      else this.close(`failed to handle message: ${err instanceof Error ? err.message : String(err)}`);
    }
  }

  private handleOpMsg(header: MessageHeader, message: Buffer): void {
    if (message.length < HEADER_SIZE + 5) throw new ProtocolError('OP_MSG too short');
    const moreToCome = (message.readUInt32LE(HEADER_SIZE) & MSG_MORE_TO_COME) !== 0;
    let reply: Reply;
    try {
      const request = parseOpMsg(message);
      reply = this.execute(request.body, request.sequences);
    } catch (err) {
      if (!(err instanceof BSONError)) throw err;
      reply = new MongoCommandError('InvalidBSON', `invalid BSON in request: ${err.message}`).toReply();
    }
    if (!moreToCome) this.send(encodeOpMsg(nextRequestId++, header.requestId, reply), header, true);
  }

  private execute(body: Document, sequences: Map<string, Document[]>): Reply {
    const db = body.$db;
    if (typeof db !== 'string') {
      return new MongoCommandError('Location40571', 'OP_MSG requests require a $db argument').toReply();
    }
    return runCommand(body, { state: this.state, db, connectionId: this.id, sequences });
  }

  private handleOpQuery(header: MessageHeader, message: Buffer): void {
    let reply: Reply;
    try {
      const { fullCollectionName, query } = parseOpQuery(message);
      const command = (query.$query && typeof query.$query === 'object' ? query.$query : query) as Document;
      const name = Object.keys(command)[0] ?? '';
      const dot = fullCollectionName.indexOf('.');
      if (!fullCollectionName.endsWith('.$cmd') || !OP_QUERY_COMMANDS.has(name)) {
        reply = new MongoCommandError(
          'UnsupportedOpQueryCommand',
          `Unsupported OP_QUERY command: ${name}. The client driver may require an upgrade. For more details see https://dochub.mongodb.org/core/legacy-opcode-removal`,
        ).toReply();
      } else {
        reply = this.execute({ ...command, $db: fullCollectionName.slice(0, dot) }, new Map());
      }
    } catch (err) {
      if (!(err instanceof BSONError)) throw err;
      reply = new MongoCommandError('InvalidBSON', `invalid BSON in request: ${err.message}`).toReply();
    }
    this.send(encodeOpReply(nextRequestId++, header.requestId, reply), header, false);
  }

  private send(bytes: Buffer, header: MessageHeader, opMsg: boolean): void {
    if (this.socket.destroyed) return;
    this.socket.write(bytes.length <= MAX_MESSAGE_SIZE ? bytes : this.tooLarge(header, opMsg));
  }

  private tooLarge(header: MessageHeader, opMsg: boolean): Buffer {
    const reply = new MongoCommandError(
      'BSONObjectTooLarge',
      'reply exceeds the maximum message size',
    ).toReply();
    return opMsg
      ? encodeOpMsg(nextRequestId++, header.requestId, reply)
      : encodeOpReply(nextRequestId++, header.requestId, reply);
  }

  close(reason: string): void {
    if (this.socket.destroyed) return;
    this.log(`closing connection ${this.id}: ${reason}`);
    this.socket.destroy();
  }
}
