import { toApplicationFailure } from '../errors';

/** Any activity function: one input object in, a promise out. */
type ActivityFn = (...args: never[]) => Promise<unknown>;

/**
 * The activities of one factory with casework's errors turned into the failures Temporal acts
 * on (src/errors.ts: transient kinds retry, the rest fail at once). Every factory returns its
 * activities through this, so the mapping is written once.
 */
export function failuresForTemporal<T extends Record<string, ActivityFn>>(activities: T): T {
  const wrapped: Record<string, ActivityFn> = {};
  for (const [name, fn] of Object.entries(activities)) {
    wrapped[name] = async (...args: never[]) => {
      try {
        return await fn(...args);
      } catch (error) {
        throw toApplicationFailure(error);
      }
    };
  }
  return wrapped as T;
}
