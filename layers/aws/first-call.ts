/**
 * What `load` makes, made on the first call and shared by every later one; a failed load is tried again on
 * the next call. For what a function imports only when it needs it (an adapter's SDK, the tracer), so that
 * a cold start does not pay for it.
 */
export function onFirstCall<T>(load: () => Promise<T>): () => Promise<T> {
  let loading: Promise<T> | undefined;
  return () => {
    loading ??= load().catch((error) => {
      loading = undefined;
      throw error;
    });
    return loading;
  };
}
