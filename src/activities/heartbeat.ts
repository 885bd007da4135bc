import { Context } from '@temporalio/activity';

/** How often a long activity tells Temporal it is alive. */
export const HEARTBEAT_EVERY_MS = 5_000;

/**
 * Runs `fn` while heartbeating every few seconds, so a worker that dies mid-call is noticed
 * within the activity's heartbeat timeout and the call is retried elsewhere, instead of after
 * its whole start-to-close timeout. Outside an activity (unit tests) it just runs `fn`.
 */
export async function withHeartbeat<T>(fn: () => Promise<T>): Promise<T> {
  let context: Context;
  try {
    context = Context.current();
  } catch {
    return fn();
  }
  // A local activity has no heartbeat: the worker keeps its workflow task alive instead.
  if (context.info.isLocal) return fn();
  context.heartbeat();
  const timer = setInterval(() => context.heartbeat(), HEARTBEAT_EVERY_MS);
  try {
    return await fn();
  } finally {
    clearInterval(timer);
  }
}
