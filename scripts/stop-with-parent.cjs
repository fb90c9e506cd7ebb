// Preloaded (`node --require`) into the stand-ins `npm start` runs (simulators, webhook receiver),
// which have no parent watch of their own: when the platform process that started them is gone
// (killed outright: it could not stop them), their IPC channel closes, and they stop as on SIGTERM
// (their own graceful stop). The services watch for this themselves (libs/runtime/src/process.ts).
// Plain JavaScript: it runs before tsx is registered.
if (process.channel) {
  process.on('disconnect', () => process.kill(process.pid, 'SIGTERM'));
  // Watching must not keep the process alive by itself.
  process.channel.unref();
}
