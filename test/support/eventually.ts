/**
 * The one way a test waits: poll `probe` until `done` holds for what it returns, as a client polls the
 * service. It returns the last value, whether `done` held or the time ran out, so the test's own assertion
 * on that value says what went wrong. A test never sleeps to show that nothing happens: it waits here for
 * the state that proves nothing more can (the workflow idle, the execution ended), then looks once.
 */
export async function eventually<T>(
  probe: () => T | Promise<T>,
  done: (value: T) => boolean,
  { timeoutMs = 60_000, intervalMs = 100 }: { timeoutMs?: number; intervalMs?: number } = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (done(value) || Date.now() > deadline) return value;
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
