/**
 * Graceful shutdown on SIGINT/SIGTERM: runs the steps in order, once. A second signal while
 * stopping exits at once (the operator means it).
 */
export function onShutdown(steps: Array<() => Promise<unknown>>, log: (msg: string) => void = console.error): void {
  let stopping = false;
  const stop = async (signal: NodeJS.Signals) => {
    if (stopping) {
      log(`${signal} again: exiting now`);
      process.exit(130);
    }
    stopping = true;
    log(`${signal}: shutting down`);
    let code = 0;
    for (const step of steps) {
      try {
        await step();
      } catch (err) {
        code = 1;
        log(`shutdown step failed: ${(err as Error).message}`);
      }
    }
    process.exit(code);
  };
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, (s) => void stop(s));
}
