import type { Client } from '@temporalio/client';
import { askRunning, describeCase, erasedStatus, erasureBehind, readCaseStatus, runInput, type CaseRun } from '../../client/case-status';
import { NoWorkerAnsweredError } from '../../client/investigations';
import { messagesOfEntries, wholeTranscript } from '../../context/log-messages';
import type { TranscriptLog } from '../../db/transcript-log';
import { CustomerErasedError } from '../../temporal/codec/customer-keys';
import { openInvestigationsQuery } from '../../observability/visibility';
import type { CarriedState, InvestigationStatus } from '../../schemas/investigation';
import { carriedStateQuery } from '../../workflows/investigation-api';

// What the console reads from Temporal: the investigations awaiting approval (visibility, by
// the CaseworkStatus search attribute) and, for one investigation, its status query, its
// transcript and its current run id (for the web UI link). A run carries a skeleton of
// 100-character previews (its state query, which recovery uses too): its whole transcript is
// read back from the transcript log, so the inbox and the timeline show every word. A closed
// case needs no worker: its status is the result its run returned, its conversation the log.

/** Most pending investigations the inbox lists. */
export const INBOX_LIMIT = 200;
/** Queries run at once when the inbox reads its cases. */
const PARALLEL_READS = 8;

/** One investigation as the console shows it. */
export interface CaseView {
  workflowId: string;
  runId: string;
  status: InvestigationStatus;
  /** The run's full transcript; null when the run or the transcript log could not answer: the status only then. */
  transcript: CarriedState['transcript'] | null;
  /** The day the customer was erased, when their data key is destroyed: the conversation is shown as erased, not unavailable. */
  erasedOn?: string;
}

/** The ids of running investigations on `taskQueue` whose CaseworkStatus is awaiting_approval. */
export async function pendingWorkflowIds(client: Client, taskQueue: string): Promise<{ workflowId: string; runId: string }[]> {
  const out: { workflowId: string; runId: string }[] = [];
  for await (const execution of client.workflow.list({ query: openInvestigationsQuery(taskQueue, 'awaiting_approval'), pageSize: 100 })) {
    out.push({ workflowId: execution.workflowId, runId: execution.runId });
    if (out.length >= INBOX_LIMIT) break;
  }
  return out;
}

/** Running investigations on `taskQueue` handed to a person (CaseworkStatus needs_human), read from visibility and their status, the latest hand-over first. */
export async function withPersonCases(source: CaseSource, taskQueue: string): Promise<CaseView[]> {
  const ids: { workflowId: string; runId: string }[] = [];
  for await (const execution of source.client.workflow.list({ query: openInvestigationsQuery(taskQueue, 'needs_human'), pageSize: 100 })) {
    ids.push({ workflowId: execution.workflowId, runId: execution.runId });
    if (ids.length >= INBOX_LIMIT) break;
  }
  const cases = await mapLimited(ids, PARALLEL_READS, (id) => readCase(source, id.workflowId, { runId: id.runId, taskQueue }));
  return cases.filter((c): c is CaseView => c !== null && c.status.status === 'needs_human').sort((a, b) => (b.status.handOff?.at ?? '').localeCompare(a.status.handOff?.at ?? ''));
}

/** Where the console reads cases: Temporal, and the transcript log for their conversations. */
export interface CaseSource {
  client: Client;
  log: TranscriptLog;
}

/** The whole transcript of a running run's carried state, rebuilt from the log; null when the log cannot be read. */
async function transcriptOf(log: TranscriptLog, workflowId: string, carried: CarriedState): Promise<CarriedState['transcript'] | CustomerErasedError | null> {
  try {
    // Entries before the run's first number are earlier, closed runs' (a reopened ticket): not this case's conversation.
    const written = await log.all(workflowId, ['message'], { from: carried.log?.firstSeq });
    // Entries the run has numbered but not written yet are whole in its pending queue.
    return wholeTranscript(carried.transcript, [...written, ...(carried.log?.pending ?? [])]);
  } catch (error) {
    return error instanceof CustomerErasedError ? error : null;
  }
}

/** The whole conversation of a closed run, from the log alone; null when it holds none or the log cannot be read. */
async function closedTranscript(source: CaseSource, run: CaseRun): Promise<CarriedState['transcript'] | CustomerErasedError | null> {
  try {
    // A reopened ticket's run numbers its entries after the earlier runs'; its input says from where.
    const input = await runInput(source.client, run);
    const from = input?.carried?.log?.firstSeq ?? input?.logFrom ?? 1;
    const written = await source.log.all(run.workflowId, ['message'], { from });
    return written.length ? messagesOfEntries(written) : null;
  } catch (error) {
    return error instanceof CustomerErasedError ? error : null;
  }
}

/**
 * One investigation's status, transcript and run. A running one is asked (its worker must answer
 * in time, else NoWorkerAnsweredError); a closed one is read from what its run recorded, with no
 * worker: the status it returned and its conversation in the log. `running`
 * (the inbox lists running cases, with their run and task queue) saves a describe.
 */
export async function readCase(source: CaseSource, workflowId: string, running?: { runId: string; taskQueue: string }): Promise<CaseView> {
  const { client } = source;
  const run: CaseRun = running ? { workflowId, ...running, state: 'running' } : await describeCase(client, workflowId);
  let status: InvestigationStatus;
  try {
    status = await readCaseStatus(client, workflowId, { run });
  } catch (error) {
    // A closed case's recorded status is under its customer's key: once erased, the page says so.
    const erasure = run.state === 'running' ? undefined : erasureBehind(error);
    if (!erasure) throw error;
    return erased(workflowId, run.runId, erasedStatus(run), erasure);
  }
  if (run.state !== 'running') {
    const logged = await closedTranscript(source, run);
    if (logged instanceof CustomerErasedError) return erased(workflowId, run.runId, status, logged);
    return { workflowId, runId: run.runId, status, transcript: logged };
  }
  const carried = await askRunning(client, run, () => client.workflow.getHandle(workflowId).query(carriedStateQuery)).catch(() => null);
  const transcript = carried ? await transcriptOf(source.log, workflowId, carried) : null;
  if (transcript instanceof CustomerErasedError) return erased(workflowId, run.runId, status, transcript);
  return { workflowId, runId: run.runId, status, transcript };
}

/** A case whose customer was erased: the status, and the day in place of the conversation. */
function erased(workflowId: string, runId: string, status: InvestigationStatus, error: CustomerErasedError): CaseView {
  return { workflowId, runId, status, transcript: null, erasedOn: error.erasedAt.slice(0, 10) };
}

/** Runs `fn` over `items`, at most `limit` at once, keeping order; a failed item becomes null. */
async function mapLimited<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>): Promise<(R | null)[]> {
  const out: (R | null)[] = new Array<R | null>(items.length).fill(null);
  let next = 0;
  const lane = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i] as T).catch(() => null);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
  return out;
}

/**
 * True while the pending request has no decision. A decision is recorded the moment its update
 * is accepted; the request stays pending until the workflow acts on it, a moment later.
 */
export function awaitingDecision(status: InvestigationStatus): boolean {
  const request = status.pendingApproval;
  return request !== null && !status.decisions.some((d) => d.requestId === request.request_id);
}

/**
 * The investigations awaiting a decision, oldest request first. Visibility is eventually
 * consistent, so each listed run's own status decides: one decided or no longer pending is left out.
 */
export async function pendingCases(source: CaseSource, taskQueue: string): Promise<CaseView[]> {
  const ids = await pendingWorkflowIds(source.client, taskQueue);
  // Every listed case runs on this one task queue: once no worker answers for one, the rest are not asked (each would wait as long).
  let noWorker: NoWorkerAnsweredError | undefined;
  const cases = await mapLimited(ids, PARALLEL_READS, async (id) => {
    if (noWorker) throw noWorker;
    return readCase(source, id.workflowId, { runId: id.runId, taskQueue }).catch((error: unknown) => {
      if (error instanceof NoWorkerAnsweredError) noWorker = error;
      throw error;
    });
  });
  // Requests are waiting, but no one could be read: an empty inbox would say nothing waits.
  if (noWorker && cases.every((c) => c === null)) throw noWorker;
  return cases
    .filter((c): c is CaseView => c !== null && awaitingDecision(c.status))
    .sort((a, b) => (a.status.pendingApproval?.requested_at ?? '').localeCompare(b.status.pendingApproval?.requested_at ?? ''));
}
