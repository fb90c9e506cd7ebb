export { MongoCommandError } from './errors';
export { EMBEDDED_MONGOD_BIN, type LocalMongo, type LocalMongoOptions, startLocalMongo } from './local-mongo';
export { DataDirError } from './persistence/errors';
export { type EmbeddedMongoOptions, EmbeddedMongoServer } from './server';
export { USAGE_KINDS } from './state';
export { EMBEDDED_MONGOD_VERSION, MAX_WIRE_VERSION } from './version';
