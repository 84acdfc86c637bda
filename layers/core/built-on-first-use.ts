/**
 * A value made at its first use and kept: a request schema that zod would otherwise build at every cold
 * start, for a function that may never parse that request (docs/decisions/0058-what-a-zip-function-loads-at-init.md).
 */
export function builtOnFirstUse<T>(build: () => T): () => T {
  let value: { made: T } | undefined;
  return () => {
    value ??= { made: build() };
    return value.made;
  };
}
