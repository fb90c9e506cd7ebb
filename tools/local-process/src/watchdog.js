// Kills a child server when the process that started it is gone (crashed or SIGKILLed), so
// no local server (redis-server, anvil) outlives its test run or `npm start`. Plain JS: run
// directly by node, with no loader.
const [parentPid, childPid] = process.argv.slice(2).map(Number);
const alive = (pid) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};
const timer = setInterval(() => {
  if (!alive(childPid)) process.exit(0);
  if (!alive(parentPid)) {
    try {
      process.kill(childPid, 'SIGTERM');
    } catch {}
    clearInterval(timer);
    process.exit(0);
  }
}, 1000);
