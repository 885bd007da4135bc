import { CaseworkError, NotFoundError } from '../errors';
import {
  WorkflowNotFoundError,
  WorkflowUpdateFailedError,
  type Client,
} from '@temporalio/client';
import type { TicketEvent } from '../schemas/event';
import { investigationId } from '../schemas/event';
import type { InvestigationSettings, InvestigationStatus, RefundDecision } from '../schemas/investigation';
import { SA } from '../schemas/search-attributes';
import { closeTicketSignal, customerMessageSignal, decideRefundUpdate, statusQuery } from '../workflows/investigation-api';
import { investigation } from '../workflows/investigation';

// The operations the CLI and the HTTP endpoint share: one place that knows how a ticket event
// becomes a workflow start or signal, and how a person reads and decides an investigation.

/** The investigation does not exist (never started, or its id is mistyped). */
export class InvestigationNotFoundError extends NotFoundError {}

/** A refund decision the workflow's validator refused; the message says why (already decided is a conflict). */
export class DecisionRejectedError extends CaseworkError {
  constructor(message: string) {
    super(/already been decided/.test(message) ? 'conflict' : 'refused', message);
  }
}

/** Where an event went. */
export interface Delivered {
  workflowId: string;
  runId: string;
  /** True when this event started a new run; false when it signalled a running one. */
  action: 'started_or_signalled' | 'closed';
}

/**
 * Delivers a validated ticket event. `ticket.created` and `ticket.message` use
 * signal-with-start, so the order they arrive in does not matter and a repeated eventId is
 * dropped by the workflow; `ticket.closed` signals the running investigation.
 */
export async function deliverEvent(
  client: Client,
  event: TicketEvent,
  options: { taskQueue: string; settings: InvestigationSettings },
): Promise<Delivered> {
  const workflowId = investigationId(event.ticketId);
  if (event.type === 'ticket.closed') {
    const handle = client.workflow.getHandle(workflowId);
    await mapNotFound(workflowId, () => handle.signal(closeTicketSignal, { eventId: event.eventId, customerId: event.customerId }));
    const described = await handle.describe();
    return { workflowId, runId: described.runId, action: 'closed' };
  }
  const handle = await client.workflow.signalWithStart(investigation, {
    workflowId,
    taskQueue: options.taskQueue,
    args: [{ ticketId: event.ticketId, customerId: event.customerId, settings: options.settings }],
    signal: customerMessageSignal,
    signalArgs: [{ eventId: event.eventId, customerId: event.customerId, message: event.message, receivedAt: event.receivedAt }],
    typedSearchAttributes: [
      { key: SA.customerId, value: event.customerId },
      { key: SA.ticketId, value: event.ticketId },
    ],
    staticSummary: `Ticket ${event.ticketId} from ${event.customerId}`,
    staticDetails: `Support investigation for ticket ${event.ticketId}, opened by event ${event.eventId} at ${event.receivedAt}.`,
  });
  return { workflowId, runId: handle.signaledRunId, action: 'started_or_signalled' };
}

async function mapNotFound<T>(workflowId: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (error) {
    if (error instanceof WorkflowNotFoundError || (error as Error).name === 'WorkflowNotFoundError') {
      throw new InvestigationNotFoundError(`no investigation ${workflowId} is running (check the id, or start it with a ticket.created event)`);
    }
    throw error;
  }
}

/** The status query's answer; a closed run still answers from its last state. */
export function readStatus(client: Client, workflowId: string): Promise<InvestigationStatus> {
  return mapNotFound(workflowId, () => client.workflow.getHandle(workflowId).query(statusQuery));
}

/**
 * Sends a refund decision through the validated update: a bad decision (unknown request,
 * approver not allowed, over their limit, already decided) is refused before it reaches history.
 */
export async function decideRefund(client: Client, workflowId: string, decision: RefundDecision): Promise<{ requestId: string; decision: string }> {
  try {
    // One id per decision: a caller retrying after a timeout gets the original answer, not a second update.
    const updateId = `decide-${decision.requestId}-${decision.decision}-${decision.approver}`;
    return await mapNotFound(workflowId, () => client.workflow.getHandle(workflowId).executeUpdate(decideRefundUpdate, { args: [decision], updateId }));
  } catch (error) {
    if (error instanceof WorkflowUpdateFailedError) {
      const cause = error.cause instanceof Error ? error.cause.message : error.message;
      throw new DecisionRejectedError(`refund decision refused: ${cause}`);
    }
    throw error;
  }
}

/** States in which the investigation is waiting on someone, so its answer so far is final. */
const SETTLED: ReadonlySet<InvestigationStatus['status']> = new Set(['awaiting_approval', 'waiting_for_customer', 'needs_human', 'closed']);

/**
 * Polls the status query until the investigation waits on a person (approval or customer) or
 * closes, having gone past step `afterStep` (the step count before the event was sent).
 * For the CLI's `--wait` and the demo.
 */
export async function waitUntilSettled(
  client: Client,
  workflowId: string,
  options: { afterStep?: number; timeoutMs?: number; pollMs?: number; onStatus?: (status: InvestigationStatus) => void } = {},
): Promise<InvestigationStatus> {
  const deadline = Date.now() + (options.timeoutMs ?? 120_000);
  for (;;) {
    const status = await readStatus(client, workflowId).catch((error: Error) => {
      // A brand-new run may not have processed its first task yet.
      if (error.name === 'QueryNotRegisteredError') return undefined;
      throw error;
    });
    if (status) {
      options.onStatus?.(status);
      if (status.status === 'closed' || (SETTLED.has(status.status) && status.step > (options.afterStep ?? 0))) return status;
    }
    if (Date.now() > deadline) throw new Error(`investigation ${workflowId} did not settle within ${(options.timeoutMs ?? 120_000) / 1000} s`);
    await new Promise((r) => setTimeout(r, options.pollMs ?? 200));
  }
}

/**
 * Delivers an event and waits for the investigation's answer to it: the next settled status
 * past the step it had reached, or, for `ticket.closed`, the final status the run returns once
 * its case is recorded. For the CLI's `--wait`, the demo, the benchmarks and the tests.
 */
export async function deliverAndWait(
  client: Client,
  event: TicketEvent,
  options: { taskQueue: string; settings: InvestigationSettings; timeoutMs?: number; pollMs?: number; onStatus?: (status: InvestigationStatus) => void },
): Promise<InvestigationStatus> {
  const workflowId = investigationId(event.ticketId);
  const before = await readStatus(client, workflowId).then((s) => s.step, () => 0);
  await deliverEvent(client, event, options);
  if (event.type === 'ticket.closed') return client.workflow.getHandle<typeof investigation>(workflowId).result();
  return waitUntilSettled(client, workflowId, { afterStep: before, timeoutMs: options.timeoutMs, pollMs: options.pollMs, onStatus: options.onStatus });
}
