export { type CommandLine, commandLine } from './command-line';
export { freePort } from './free-port';
export { watchChild } from './watch-child';
