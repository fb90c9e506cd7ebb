export { freePort } from './free-port';
export { watchChild } from './watch-child';
