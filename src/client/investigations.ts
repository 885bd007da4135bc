import { CaseworkError, NotFoundError, NotYetError, UnavailableError } from '../errors';
import { WorkflowNotFoundError, WorkflowUpdateFailedError, WorkflowUpdateRPCTimeoutOrCancelledError, type Client } from '@temporalio/client';
import { WorkflowExecutionAlreadyStartedError, WorkflowIdReusePolicy } from '@temporalio/common';
import type { Pool } from 'pg';
import { admitEvent, EventRefusedError, markDelivered } from '../db/tickets';
import { nextFreeSeq, TranscriptLog } from '../db/transcript-log';
import { bodyCodecOf } from '../temporal/codec/body-codec';
import { processMetrics } from '../observability/metrics';
import { inSpan } from '../observability/tracing';
import type { Span } from '@opentelemetry/api';
import type { TicketEvent } from '../schemas/event';
import { investigationId } from '../schemas/event';
import type { InvestigationSettings, InvestigationStatus, RecoveredFrom, RefundDecision } from '../schemas/investigation';
import { SA } from '../schemas/search-attributes';
import { closeTicketSignal, customerMessageSignal, decideRefundUpdate, statusQuery } from '../workflows/investigation-api';
import { investigation } from '../workflows/investigation';
import { deskNumbersOf } from './closed-run';
import { brokenRunOf, recoverBrokenRun, type Recovery } from './recovery';
import { signalledBefore } from './signalled-before';
import { workflowTaskTimeoutFor } from '../settings';

// The operations the CLI and the HTTP endpoint share: one place that knows how a ticket event
// becomes a workflow start or signal, and how a person reads and decides an investigation.

/** The investigation does not exist (never started, or its id is mistyped). */
export class InvestigationNotFoundError extends NotFoundError {}

/**
 * A refund decision the workflow's validator refused; the message says why. The kind comes
 * from the failure's type (DecisionConflict, DecisionRefused); histories from before the types
 * existed fall back to the message (already decided is a conflict).
 */
export class DecisionRejectedError extends CaseworkError {
  constructor(message: string, kind?: 'conflict' | 'refused') {
    super(kind ?? (/already been decided/.test(message) ? 'conflict' : 'refused'), message);
  }
}

/** A decision that came before its request is pending (the validator's DecisionNotYet): the same decision succeeds shortly. */
export class DecisionNotYetError extends NotYetError {}

/** No worker ran the decision's validator in time (none polls, or all are busy): retry once one runs. */
export class NoWorkerAnsweredError extends UnavailableError {}

/** The failure types the refund-decision validator throws (ApplicationFailure.type). */
export const DECISION_FAILURE = { notYet: 'DecisionNotYet', conflict: 'DecisionConflict', refused: 'DecisionRefused' } as const;

const DEADLINE_EXCEEDED = 4;

/** True when an error (or a cause) is the update RPC's own timeout: the server kept the call, no worker answered it. */
function isUpdateTimeout(error: unknown): boolean {
  let current: unknown = error;
  for (let depth = 0; current instanceof Error && depth < 8; depth++) {
    if (current instanceof WorkflowUpdateRPCTimeoutOrCancelledError || current.name === 'WorkflowUpdateRPCTimeoutOrCancelledError') return true;
    if ((current as { code?: unknown }).code === DEADLINE_EXCEEDED) return true;
    current = (current as { cause?: unknown }).cause;
  }
  return false;
}

/** The validator's refusal as casework's error, by its failure type, else by its words. */
function decisionError(error: WorkflowUpdateFailedError): CaseworkError {
  const cause = error.cause instanceof Error ? error.cause : undefined;
  const message = firstLine(cause?.message ?? error.message);
  const type = cause && 'type' in cause && typeof cause.type === 'string' ? cause.type : undefined;
  if (type === DECISION_FAILURE.notYet) return new DecisionNotYetError(`not yet: retry shortly (${message})`);
  if (type === DECISION_FAILURE.conflict) return new DecisionRejectedError(`refund decision refused: ${message}`, 'conflict');
  if (type === DECISION_FAILURE.refused) return new DecisionRejectedError(`refund decision refused: ${message}`, 'refused');
  return new DecisionRejectedError(`refund decision refused: ${message}`);
}

/** A message's first line: a failure's message can carry a stack the caller must never see. */
function firstLine(message: string): string {
  return (
    message
      .split('\n')
      .find((line) => line.trim() && !/^\s+at /.test(line))
      ?.trim() ?? message
  );
}

/** Where an event went. */
export interface Delivered {
  workflowId: string;
  /** The run the event reached; absent for a duplicate, which reached nothing. */
  runId?: string;
  /** True when this event started a new run; false when it signalled a running one. */
  action: 'started_or_signalled' | 'closed';
  /** True when the event had already been delivered: it was answered as delivered and nothing was sent to Temporal. */
  duplicate: boolean;
  /** Set when the ticket's run was broken (FAILED, TERMINATED, …) and this event started a run recovering it. */
  recovered?: RecoveredFrom;
}

/**
 * Delivers a validated ticket event. First the gate (db/tickets.ts) admits it: another
 * customer's ticket or a reused event id is refused (EventRefusedError, a ConflictError: HTTP
 * 409, exit 2) and counted, before anything reaches Temporal; an event already delivered is a
 * duplicate and sends nothing. Then `ticket.created` and `ticket.message` use signal-with-start,
 * so the order they arrive in does not matter; `ticket.closed` signals the running
 * investigation. `pool` is null only where there is no database (time-skipping tests): then
 * only the running workflow drops a repeated eventId.
 */
export async function deliverEvent(client: Client, pool: Pool | null, event: TicketEvent, options: { taskQueue: string; settings: InvestigationSettings }): Promise<Delivered> {
  const workflowId = investigationId(event.ticketId);
  const gate = (span: Span | undefined) => admitEvent(pool!, event).then((admitted) => (span?.setAttribute('casework.gate.admission', admitted), admitted));
  const admission = pool ? await inSpan('casework.ticket_gate', { 'casework.event.type': event.type }, gate).catch(countRefusal) : 'deliver';
  const asDuplicate: Delivered = { workflowId, action: event.type === 'ticket.closed' ? 'closed' : 'started_or_signalled', duplicate: true };
  if (admission === 'duplicate') return asDuplicate;
  // Admitted before but never marked: Temporal may have taken it just before the mark failed.
  if (admission === 'redeliver' && (await signalledBefore(client, workflowId, event))) {
    await markDelivered(pool!, event.eventId);
    return asDuplicate;
  }
  const delivered = await send(client, pool, event, workflowId, options);
  if (pool) await markDelivered(pool, event.eventId);
  return delivered;
}

function countRefusal(error: unknown): never {
  if (error instanceof EventRefusedError) processMetrics().eventsRefused.inc({ reason: error.reason });
  throw error;
}

async function send(
  client: Client,
  pool: Pool | null,
  event: TicketEvent,
  workflowId: string,
  options: { taskQueue: string; settings: InvestigationSettings },
): Promise<Delivered> {
  if (event.type === 'ticket.closed') {
    const handle = client.workflow.getHandle(workflowId);
    await mapNotFound(workflowId, () => handle.signal(closeTicketSignal, { eventId: event.eventId, customerId: event.customerId }));
    const described = await handle.describe();
    return { workflowId, runId: described.runId, action: 'closed', duplicate: false };
  }
  // A ticket seen before has a closed run: one that ended well is reopened by a fresh run (its
  // case is in the customer's memory), a broken one is recovered (client/recovery.ts). The first
  // attempt refuses to start over any closed run, so a broken run is never silently replaced.
  let attempt: StartAttempt = { policy: WorkflowIdReusePolicy.REJECT_DUPLICATE };
  for (let tries = 0; ; tries++) {
    try {
      return await signalWithStartInvestigation(client, event, workflowId, options, attempt);
    } catch (error) {
      if (!(error instanceof WorkflowExecutionAlreadyStartedError) || tries >= 3) throw error;
    }
    // Between the refusal and here another event may have started a run: then it is signalled.
    const closed = await client.workflow.getHandle(workflowId).describe();
    const broken = brokenRunOf(closed.status.name);
    // The closed runs' transcript-log entries stay: the new run numbers its own after them.
    const logFrom = pool ? await nextFreeSeq(pool, workflowId) : undefined;
    if (!broken) {
      // A run that started meanwhile is signalled, and has no result to wait for.
      const deskFrom = closed.status.name === 'COMPLETED' ? await deskNumbersOf(client, workflowId) : undefined;
      attempt = { policy: WorkflowIdReusePolicy.ALLOW_DUPLICATE, logFrom, deskFrom };
      continue;
    }
    const recovery = await recoverBrokenRun(client, workflowId, closed.runId, broken, { log: transcriptLogOf(client, pool) });
    processMetrics().runsRecovered.inc({ from: broken, transcript: recovery.recovered.transcript });
    attempt = { policy: WorkflowIdReusePolicy.ALLOW_DUPLICATE_FAILED_ONLY, recovery, logFrom };
  }
}

/**
 * The transcript log a by-reference run's conversation is read back from, through the client's
 * own payload codec: the one its workers encrypted the entries with.
 */
export function transcriptLogOf(client: Client, pool: Pool | null): TranscriptLog | undefined {
  const [codec] = client.options.loadedDataConverter.payloadCodecs;
  return pool && codec ? new TranscriptLog(pool, bodyCodecOf(codec)) : undefined;
}

/** How one signal-with-start may start a run over a closed one, and what a recovered run carries. */
interface StartAttempt {
  policy: WorkflowIdReusePolicy;
  recovery?: Recovery;
  /** Where the new run's transcript-log numbers start (after the closed runs' entries). */
  logFrom?: number;
  /** Where the new run's desk post numbers start (after the closed run's): a reused number would be skipped as posted. */
  deskFrom?: { replies: number; notes: number };
}

async function signalWithStartInvestigation(
  client: Client,
  event: TicketEvent,
  workflowId: string,
  options: { taskQueue: string; settings: InvestigationSettings },
  attempt: StartAttempt,
): Promise<Delivered> {
  // A recovery is exactly what the recovered run's input adds: the carried state and where it came from.
  const recovered: Partial<Recovery> = attempt.recovery ?? {};
  const handle = await client.workflow.signalWithStart(investigation, {
    workflowId,
    taskQueue: options.taskQueue,
    workflowIdReusePolicy: attempt.policy,
    workflowTaskTimeout: workflowTaskTimeoutFor(options.settings),
    args: [
      {
        ticketId: event.ticketId,
        customerId: event.customerId,
        settings: options.settings,
        ...recovered,
        ...(attempt.logFrom && attempt.logFrom > 1 ? { logFrom: attempt.logFrom } : {}),
        ...(attempt.deskFrom ? { deskFrom: attempt.deskFrom } : {}),
      },
    ],
    signal: customerMessageSignal,
    signalArgs: [{ eventId: event.eventId, customerId: event.customerId, message: event.message, receivedAt: event.receivedAt }],
    typedSearchAttributes: [
      { key: SA.customerId, value: event.customerId },
      { key: SA.ticketId, value: event.ticketId },
    ],
    staticSummary: `Ticket ${event.ticketId} from ${event.customerId}`,
    staticDetails:
      `Support investigation for ticket ${event.ticketId}, opened by event ${event.eventId} at ${event.receivedAt}.` +
      (attempt.recovery ? ` Recovered from ${attempt.recovery.recovered.runStatus} run ${attempt.recovery.recovered.runId}.` : ''),
  });
  return { workflowId, runId: handle.signaledRunId, action: 'started_or_signalled', duplicate: false, ...(attempt.recovery ? { recovered: attempt.recovery.recovered } : {}) };
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
export async function decideRefund(
  client: Client,
  workflowId: string,
  decision: RefundDecision,
  options: { timeoutMs?: number } = {},
): Promise<{ requestId: string; decision: string }> {
  // One id per decision: a caller retrying after a timeout gets the original answer, not a second update.
  const updateId = `decide-${decision.requestId}-${decision.decision}-${decision.approver}`;
  const update = () => mapNotFound(workflowId, () => client.workflow.getHandle(workflowId).executeUpdate(decideRefundUpdate, { args: [decision], updateId }));
  try {
    return await (options.timeoutMs === undefined ? update() : client.withDeadline(Date.now() + options.timeoutMs, update));
  } catch (error) {
    if (error instanceof WorkflowUpdateFailedError) throw decisionError(error);
    if (isUpdateTimeout(error)) {
      throw new NoWorkerAnsweredError(
        `no worker answered the refund decision for ${workflowId} in time (is \`casework worker\` running?); ` + 'retry the same decision: it is applied at most once',
      );
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
  pool: Pool | null,
  event: TicketEvent,
  options: { taskQueue: string; settings: InvestigationSettings; timeoutMs?: number; pollMs?: number; onStatus?: (status: InvestigationStatus) => void },
): Promise<InvestigationStatus> {
  const workflowId = investigationId(event.ticketId);
  const before = await readStatus(client, workflowId).then(
    (s) => s.step,
    () => 0,
  );
  const delivered = await deliverEvent(client, pool, event, options);
  if (event.type === 'ticket.closed') return client.workflow.getHandle<typeof investigation>(workflowId).result();
  // A duplicate changes nothing: its answer is the investigation as it stands.
  if (delivered.duplicate) return readStatus(client, workflowId);
  return waitUntilSettled(client, workflowId, { afterStep: before, timeoutMs: options.timeoutMs, pollMs: options.pollMs, onStatus: options.onStatus });
}
