import type { Client } from '@temporalio/client';
import { NotFoundError } from '../errors';
import { describeCase } from './case-status';
import type { temporal } from '@temporalio/proto';
import type { TicketEvent } from '../schemas/event';
import { decodeHistoryPayloads } from '../temporal/history-payloads';
import { closeTicketSignal, customerMessageSignal } from '../workflows/investigation-api';

// The gate records an event in Postgres, hands it to Temporal, then marks it delivered. When the
// process dies, or Postgres goes away, between the hand-over and the mark, the desk's retry finds
// the event admitted but unmarked ("redeliver"). Temporal may have taken it already: this reads
// the latest run's history, so the retry is answered as a duplicate instead of signalling again.

/** Whether the latest run of `workflowId` already holds `event`'s signal (same kind, same event id). */
export async function signalledBefore(client: Client, workflowId: string, event: TicketEvent): Promise<boolean> {
  const signalName = event.type === 'ticket.closed' ? closeTicketSignal.name : customerMessageSignal.name;
  // describeCase first: it maps "no such workflow" to NotFoundError, which fetchHistory does not,
  // and reads a run whose memo is under an erased customer's key.
  const runId = await describeCase(client, workflowId).then(
    (run) => run.runId,
    (error: unknown) => {
      if (error instanceof NotFoundError) return undefined;
      throw error;
    },
  );
  if (!runId) return false;
  const history = await client.workflow.getHandle(workflowId, runId).fetchHistory();
  const converter = client.options.loadedDataConverter;
  for (const e of (history.events ?? []) as temporal.api.history.v1.IHistoryEvent[]) {
    const signalled = e.workflowExecutionSignaledEventAttributes;
    if (signalled?.signalName !== signalName) continue;
    const [args] = (await decodeHistoryPayloads(converter, signalled.input?.payloads)) as ({ eventId?: unknown } | undefined)[];
    if (args?.eventId === event.eventId) return true;
  }
  return false;
}
