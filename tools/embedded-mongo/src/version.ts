/** The mongod release this server presents itself as (handshake, buildInfo, --version). */
export const EMBEDDED_MONGOD_VERSION = '7.0.14';
export const MAX_WIRE_VERSION = 21;
