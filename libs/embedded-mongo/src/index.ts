export { MongoCommandError } from './errors';
export { EMBEDDED_MONGOD_BIN, type LocalMongo, startLocalMongo } from './local-mongo';
export { type EmbeddedMongoOptions, EmbeddedMongoServer } from './server';
export { EMBEDDED_MONGOD_VERSION, MAX_WIRE_VERSION } from './version';
