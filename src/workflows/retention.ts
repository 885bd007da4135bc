import { proxyActivities } from '@temporalio/workflow';
import type { createRetentionActivities } from '../activities/retention';
import type { RetentionInput, RetentionReport } from '../schemas/retention';

// The retention run a Temporal Schedule starts (`casework schedules apply`, src/client/schedules.ts):
// one activity empties every store of what is past its retention (src/activities/retention.ts).
// A run that fails is retried by its activity's policy; the schedule's next run carries on where
// it stopped, as each batch is its own transaction.

const { applyRetention } = proxyActivities<ReturnType<typeof createRetentionActivities>>({
  // A first run over a large backlog deletes batch after batch; heartbeats show it is alive.
  startToCloseTimeout: '2 hours',
  heartbeatTimeout: '1 minute',
  retry: { initialInterval: '10 seconds', backoffCoefficient: 2, maximumInterval: '10 minutes', maximumAttempts: 5 },
});

/** One retention run: the rows removed and the time taken per store. */
export async function retention(_input: RetentionInput = {}): Promise<RetentionReport> {
  return applyRetention({ now: new Date().toISOString() });
}
