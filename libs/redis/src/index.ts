export { BoundedRedis, commandBoundOf } from './bounded';
export { connectFailFast, REDIS_COMMAND_TIMEOUT_MS, REDIS_CONNECT_TIMEOUT_MS } from './fail-fast';
