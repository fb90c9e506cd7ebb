/**
 * The data directory cannot be used as it is (damaged files, or another live server holds
 * it). The server refuses to start rather than run on part of the data.
 */
export class DataDirError extends Error {
  constructor(
    readonly codeName: 'DBPathInUse' | 'CorruptData' | 'IOError',
    message: string,
  ) {
    super(`${codeName}: ${message}`);
    this.name = 'DataDirError';
  }
}
