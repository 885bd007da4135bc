import type { ContentBlockParam, MessageParam } from '@anthropic-ai/sdk/resources/messages';
import type { Client } from '@temporalio/client';
import type { temporal } from '@temporalio/proto';
import { withoutCacheMarks } from '../context/cache-breakpoints';
import { decodeLayout, PlanEncodingError } from '../context/plan-encoding';
import { layoutSeqs, messagesOfLayout } from '../context/references';
import { textOfMessages } from '../context/transcript';
import { MissingEntryError, type TranscriptLog } from '../db/transcript-log';
import type { BrokenRun, CarriedState, InboxMessage, InvestigationInput, RecoveredFrom } from '../schemas/investigation';
import type { LogEntry, StepPlan } from '../schemas/transcript-log';
import { carriedStateQuery } from '../workflows/investigation-api';
import { decodeHistoryPayloads, localActivityOf } from '../temporal/history-payloads';
import { freshState } from '../workflows/state';

// Recovering a broken run (FAILED, TERMINATED, TIMED_OUT, CANCELLED: a bug, since casework turns
// what it expects into needs_human). The ticket's next event starts a new run that carries what
// can be read of the broken one, best source first:
//   1. its carriedState query: Temporal replays the closed run on a worker and the run answers
//      with its whole state, word for word (needs a worker, and code that replays);
//   2. its history: the last model step's plan, whose messages (what the model last saw) are read
//      back from the transcript log, the model's reply to it, and every customer message the run
//      received;
//   3. nothing (the history holds nothing to carry): the run starts fresh, still marked
//      recovered ("transcript unavailable").

/**
 * How long the closed run's query may take: it needs a worker to replay the run. Short, so the
 * history can still be read within the HTTP route's own Temporal deadline (5 s).
 */
const QUERY_TIMEOUT_MS = 4_000;

/** The broken-run statuses, as Temporal's client names them (CANCELLED with two Ls). */
export const BROKEN_RUNS: readonly BrokenRun[] = ['FAILED', 'TERMINATED', 'TIMED_OUT', 'CANCELLED'];

/** The broken status of a closed run, or undefined for a run that ended well (or runs). */
export function brokenRunOf(status: string): BrokenRun | undefined {
  return BROKEN_RUNS.find((s) => s === status);
}

/** What a recovered run starts from. */
export interface Recovery {
  carried: CarriedState;
  recovered: RecoveredFrom;
}

/** What a broken run's history tells, decoded: the facts stateFromHistory rebuilds a state from. */
export interface HistoryFacts {
  /** The run's input (a continued run's carries the state before it). */
  input?: InvestigationInput;
  /** The messages of the last model step, read back from the transcript log (requestOfPlan). */
  lastRequest?: MessageParam[];
  /** The plan of the last model step, whose messages are in the transcript log. */
  lastPlan?: StepPlan;
  /** The model's reply to that request, when it came back. */
  lastReply?: ContentBlockParam[];
  /** Every customer message the run received, in order. */
  received: InboxMessage[];
}

/**
 * A state rebuilt from a broken run's history, or null when it holds nothing to carry. Pure.
 * The transcript is the last model request (plus its reply), else the carried transcript the
 * run started with; customer messages it received that the transcript does not hold wait in the
 * inbox, so the recovered run answers them with the new one.
 */
export function stateFromHistory(facts: HistoryFacts): CarriedState | null {
  const base: CarriedState = { ...freshState(), ...(facts.input?.carried ?? {}) };
  if (!facts.input?.carried && !facts.lastRequest && facts.received.length === 0) return null;
  let transcript = base.transcript;
  if (facts.lastRequest && facts.lastRequest.length >= transcript.length) {
    transcript = withoutCacheMarks(facts.lastRequest);
    if (facts.lastReply?.length) transcript = [...transcript, { role: 'assistant', content: facts.lastReply }];
  }
  const held = textOfMessages(transcript);
  const seen = new Set(base.seenEventIds);
  const inbox = [...base.inbox];
  for (const message of facts.received) {
    if (seen.has(message.eventId)) continue;
    seen.add(message.eventId);
    if (!held.includes(message.message) && !inbox.some((m) => m.eventId === message.eventId)) inbox.push(message);
  }
  return { ...base, transcript, inbox, seenEventIds: [...seen] };
}

/** Decodes the facts stateFromHistory needs from one run's history: stored payloads fetched, then decrypted. */
async function readHistory(client: Client, workflowId: string, runId: string): Promise<HistoryFacts> {
  const converter = client.options.loadedDataConverter;
  const history = await client.workflow.getHandle(workflowId, runId).fetchHistory();
  const facts: HistoryFacts = { received: [] };
  let lastRequestEvent: string | undefined;
  for (const event of (history.events ?? []) as temporal.api.history.v1.IHistoryEvent[]) {
    const started = event.workflowExecutionStartedEventAttributes;
    if (started) [facts.input] = (await decodeHistoryPayloads(converter, started.input?.payloads)) as InvestigationInput[];
    const signalled = event.workflowExecutionSignaledEventAttributes;
    if (signalled?.signalName === 'customerMessage') {
      const [message] = (await decodeHistoryPayloads(converter, signalled.input?.payloads)) as InboxMessage[];
      if (message) facts.received.push(message);
    }
    const scheduled = event.activityTaskScheduledEventAttributes;
    if (scheduled?.activityType?.name === 'callModelOnPlan') {
      const [plan] = (await decodeHistoryPayloads(converter, scheduled.input?.payloads)) as StepPlan[];
      if (plan) {
        facts.lastPlan = plan;
        facts.lastReply = undefined;
        lastRequestEvent = String(event.eventId);
      }
    }
    // A local model call (the default) leaves one marker: its reply, with the plan it was sent beside it.
    const marker = event.markerRecordedEventAttributes;
    if (marker && (await localActivityOf(converter, event))?.activity_type === 'callModelOnPlan') {
      const [reply] = (await decodeHistoryPayloads(converter, marker.details?.result?.payloads)) as ({ content?: ContentBlockParam[]; sent?: StepPlan } | undefined)[];
      if (reply?.sent) {
        facts.lastPlan = reply.sent;
        facts.lastReply = reply.content;
        lastRequestEvent = undefined;
      }
    }
    const completed = event.activityTaskCompletedEventAttributes;
    if (completed && lastRequestEvent !== undefined && String(completed.scheduledEventId) === lastRequestEvent) {
      const [reply] = (await decodeHistoryPayloads(converter, completed.result?.payloads)) as { content?: ContentBlockParam[] }[];
      facts.lastReply = reply?.content;
    }
  }
  return facts;
}

/**
 * The messages a by-reference step plan names, read back from the transcript log (the plan's own
 * new entries first: the step may have stopped before its activity wrote them). Undefined when
 * the log no longer holds them or the plan does not decode (as one of the retired first shape does not); a log that cannot be reached now
 * throws, so the delivery is retried rather than the conversation dropped.
 */
export async function requestOfPlan(log: TranscriptLog, workflowId: string, plan: StepPlan): Promise<MessageParam[] | undefined> {
  let layout;
  try {
    layout = decodeLayout(plan.layout);
  } catch (error) {
    if (error instanceof PlanEncodingError) return undefined;
    throw error;
  }
  const entries = new Map<number, LogEntry>(plan.entries.map((e) => [e.seq, e]));
  const missing = layoutSeqs(layout).filter((seq) => !entries.has(seq));
  try {
    for (const entry of await log.read(workflowId, missing)) entries.set(entry.seq, entry);
  } catch (error) {
    if (error instanceof MissingEntryError) return undefined;
    throw error;
  }
  return messagesOfLayout(layout, entries);
}

/**
 * What the run that replaces broken run `runId` starts from: the broken run's own state when it
 * answers its carriedState query, else a state rebuilt from its history, else a fresh one.
 */
export async function recoverBrokenRun(
  client: Client,
  workflowId: string,
  runId: string,
  runStatus: BrokenRun,
  options: { now?: Date; log?: TranscriptLog } = {},
): Promise<Recovery> {
  const now = options.now ?? new Date();
  const from = (transcript: RecoveredFrom['transcript']): RecoveredFrom => ({ runId, runStatus, at: now.toISOString(), transcript });
  const queried = await client.withDeadline(Date.now() + QUERY_TIMEOUT_MS, () => client.workflow.getHandle(workflowId, runId).query(carriedStateQuery)).catch(() => undefined);
  if (queried && Array.isArray(queried.transcript)) return { carried: { ...freshState(), ...queried }, recovered: from('carried') };
  // A history Temporal cannot serve now fails the delivery (retryable): starting the run without
  // it would lose a conversation that is still there.
  const facts = await readHistory(client, workflowId, runId);
  if (facts.lastPlan && options.log) facts.lastRequest = await requestOfPlan(options.log, workflowId, facts.lastPlan);
  const rebuilt = stateFromHistory(facts);
  if (rebuilt) return { carried: rebuilt, recovered: from('from_history') };
  return { carried: freshState(), recovered: from('unavailable') };
}
