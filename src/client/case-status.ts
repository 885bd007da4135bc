import { QueryNotRegisteredError, WorkflowNotFoundError, type Client } from '@temporalio/client';
import { defaultPayloadConverter, type LoadedDataConverter } from '@temporalio/common';
import type { temporal } from '@temporalio/proto';
import { NotFoundError } from '../errors';
import { EMPTY_AGENT_NOTES } from '../context/agent-notes';
import { CustomerErasedError } from '../temporal/codec/customer-keys';
import type { BrokenRun, InvestigationInput, InvestigationStatus } from '../schemas/investigation';
import { SA } from '../schemas/search-attributes';
import { decodeHistoryPayloads } from '../temporal/history-payloads';
import type { investigation } from '../workflows/investigation';
import { statusQuery } from '../workflows/investigation-api';
import { NoWorkerAnsweredError } from './investigations';
import { brokenRunOf } from './recovery';

// Reading a case without needing a worker where none is needed. A query is answered by a worker
// (for a closed run, one that replays it), so a closed case is read from what Temporal recorded
// when it ended: a run that ended well returned its final status as its result. Only a running
// case needs a live answer, and a reader waits a bounded time for it, then says no worker answered.

/** How long a reader waits for a worker to answer a query before saying none did. */
export const QUERY_WAIT_MS = 4_000;

/** gRPC codes Temporal answers a query with when no worker took it in time. */
const DEADLINE_EXCEEDED = 4;
const FAILED_PRECONDITION = 9;

/** How the latest run of a case stands, from describe alone. */
export interface CaseRun {
  workflowId: string;
  runId: string;
  taskQueue: string;
  /** `running`, `completed` (ended well: its result is its final status), or how it broke. */
  state: 'running' | 'completed' | BrokenRun;
  /** The customer and ticket the run's search attributes name (absent on a run that never set them). */
  customerId?: string;
  ticketId?: string;
}

/** The latest run of `workflowId`, as Temporal describes it; NotFoundError when there is none. */
export async function describeCase(client: Client, workflowId: string): Promise<CaseRun> {
  let description;
  try {
    description = await client.workflow.getHandle(workflowId).describe();
  } catch (error) {
    if (error instanceof WorkflowNotFoundError || (error as Error).name === 'WorkflowNotFoundError') throw new NotFoundError(`no investigation ${workflowId}`);
    // An erased customer's memo is under their destroyed key: what Temporal keeps in clear still says how the run stands.
    if (erasureBehind(error)) return describeUndecoded(client, workflowId);
    throw error;
  }
  const attributes = description.typedSearchAttributes;
  return caseRunOf(workflowId, description.runId, description.taskQueue, description.status.name, attributes.get(SA.customerId), attributes.get(SA.ticketId));
}

/** A CaseRun from what describe says, decoded or raw. */
function caseRunOf(workflowId: string, runId: string, taskQueue: string, status: string, customerId?: string, ticketId?: string): CaseRun {
  return {
    workflowId,
    runId,
    taskQueue,
    // A run between continue-as-new and its next run's start answers as the running case it is.
    state: status === 'COMPLETED' ? 'completed' : (brokenRunOf(status) ?? 'running'),
    ...(customerId ? { customerId } : {}),
    ...(ticketId ? { ticketId } : {}),
  };
}

/** Temporal's execution states by number, as the raw describe answers them. */
const EXECUTION_STATES: Readonly<Record<number, string>> = { 1: 'RUNNING', 2: 'COMPLETED', 3: 'FAILED', 4: 'CANCELLED', 5: 'TERMINATED', 6: 'CONTINUED_AS_NEW', 7: 'TIMED_OUT' };

/** describeCase from the raw describe, decoding nothing but the search attributes (never codec-encoded). */
async function describeUndecoded(client: Client, workflowId: string): Promise<CaseRun> {
  const { workflowExecutionInfo: info } = await client.workflowService.describeWorkflowExecution({ namespace: client.options.namespace, execution: { workflowId } });
  const fields = info?.searchAttributes?.indexedFields ?? {};
  const keyword = (name: string): string | undefined => {
    const payload = fields[name];
    const value: unknown = payload ? defaultPayloadConverter.fromPayload(payload) : undefined;
    return typeof value === 'string' ? value : Array.isArray(value) && typeof value[0] === 'string' ? value[0] : undefined;
  };
  const status = EXECUTION_STATES[Number(info?.status ?? 0)] ?? 'RUNNING';
  return caseRunOf(workflowId, info?.execution?.runId ?? '', info?.taskQueue ?? '', status, keyword(SA.customerId.name), keyword(SA.ticketId.name));
}

/** True when a query failed because no worker took it (none polls the task queue, or none answered in time). */
export function isNoWorker(error: unknown): boolean {
  let current: unknown = error;
  for (let depth = 0; current instanceof Error && depth < 8; depth++) {
    const code = (current as { code?: unknown }).code;
    if (code === DEADLINE_EXCEEDED || code === FAILED_PRECONDITION) return true;
    current = (current as { cause?: unknown }).cause;
  }
  return false;
}

/**
 * Runs query `ask` against a running case, waiting at most `waitMs` for a worker: none
 * answering is a NoWorkerAnsweredError (unavailable: 503 with Retry-After, exit 1) naming the
 * task queue. A run that has not finished its first task keeps its QueryNotRegisteredError.
 */
export async function askRunning<T>(client: Client, run: CaseRun, ask: () => Promise<T>, waitMs = QUERY_WAIT_MS): Promise<T> {
  const deadline = Date.now() + waitMs;
  try {
    return await client.withDeadline(deadline, ask);
  } catch (error) {
    if (error instanceof QueryNotRegisteredError) throw error;
    // Whatever code the call failed with once its wait was over, no worker answered within it.
    if (!isNoWorker(error) && Date.now() < deadline - 250) throw error;
    throw new NoWorkerAnsweredError(
      `no worker answered for ${run.workflowId} within ${waitMs / 1000} s: is \`casework worker\` running on task queue "${run.taskQueue}"? Retry once one is`,
      { cause: error },
    );
  }
}

/** The final status a run that ended well returned: read from its history, no worker needed. */
export function recordedStatus(client: Client, run: CaseRun): Promise<InvestigationStatus> {
  return client.workflow.getHandle<typeof investigation>(run.workflowId, run.runId).result();
}

/** The status of a case whose run broke: its own answer when a worker replays it in time, else what Temporal knows. */
async function brokenStatus(client: Client, run: CaseRun & { state: BrokenRun }, waitMs: number): Promise<InvestigationStatus & { brokenRun: BrokenRun }> {
  const handle = client.workflow.getHandle(run.workflowId, run.runId);
  const answered = await client.withDeadline(Date.now() + waitMs, () => handle.query(statusQuery)).catch(() => undefined);
  if (answered) return { ...answered, brokenRun: run.state };
  return { ...knownOnly(run, 'needs_human'), brokenRun: run.state };
}

/**
 * The status of an investigation, each kind of run read the cheapest way that is right: a
 * running one by its status query (a worker must answer within `waitMs`, else
 * NoWorkerAnsweredError); one that ended well from the final status it returned; one that broke
 * (FAILED, TERMINATED, TIMED_OUT, CANCELLED — a bug) with `brokenRun` set, from its own answer
 * when a worker gives one in time, else from what Temporal recorded of it.
 */
export async function readCaseStatus(
  client: Client,
  workflowId: string,
  options: { waitMs?: number; run?: CaseRun } = {},
): Promise<InvestigationStatus & { brokenRun?: BrokenRun }> {
  const waitMs = options.waitMs ?? QUERY_WAIT_MS;
  const run = options.run ?? (await describeCase(client, workflowId));
  if (run.state === 'running') return askRunning(client, run, () => client.workflow.getHandle(workflowId).query(statusQuery), waitMs);
  if (run.state === 'completed') return recordedStatus(client, run);
  return brokenStatus(client, { ...run, state: run.state }, waitMs);
}

/** The input the run started with (a continued run's carries the state before it; a reopened ticket's, where its log numbers start). */
export async function runInput(client: Client, run: CaseRun): Promise<InvestigationInput | undefined> {
  // Only the first event is read: the started event, whatever the history's length.
  const page = await client.workflowService.getWorkflowExecutionHistory({
    namespace: client.options.namespace,
    execution: { workflowId: run.workflowId, runId: run.runId },
    maximumPageSize: 1,
  });
  return inputOfHistory(client.options.loadedDataConverter, page.history?.events ?? []);
}

/** The input a run's history begins with (its started event), decoded; undefined when the first event is not that. */
export async function inputOfHistory(converter: LoadedDataConverter, events: readonly temporal.api.history.v1.IHistoryEvent[]): Promise<InvestigationInput | undefined> {
  const started = events[0]?.workflowExecutionStartedEventAttributes;
  if (!started) return undefined;
  const [input] = (await decodeHistoryPayloads(converter, started.input?.payloads)) as (InvestigationInput | undefined)[];
  return input;
}

/** The CustomerErasedError behind `error` (the SDK wraps what a storage driver throws), if any. */
export function erasureBehind(error: unknown): CustomerErasedError | undefined {
  for (let e: unknown = error, depth = 0; e instanceof Error && depth < 8; e = (e as Error & { cause?: unknown }).cause, depth++) {
    if (e instanceof CustomerErasedError) return e;
  }
  return undefined;
}

/**
 * What can still be said of a closed case whose customer was erased: its recorded status is under
 * the destroyed key, so only the ids Temporal keeps (workflow, ticket, customer) and that it closed.
 */
export function erasedStatus(run: CaseRun): InvestigationStatus {
  return knownOnly(run, 'closed');
}

/** A status holding only what Temporal knows of a run without its payloads: its ids, and `status`. */
function knownOnly(run: CaseRun, status: InvestigationStatus['status']): InvestigationStatus {
  return {
    workflowId: run.workflowId,
    ticketId: run.ticketId ?? '',
    customerId: run.customerId ?? '',
    status,
    step: 0,
    model: null,
    lastReply: null,
    pendingApproval: null,
    decisions: [],
    totals: { input_tokens: 0, output_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, cost_usd: 0 },
    steps: [],
    agentNotes: EMPTY_AGENT_NOTES,
    caseNotes: null,
    transcriptMessages: 0,
    continuedAsNew: 0,
    handOff: null,
    refunds: [],
  };
}
