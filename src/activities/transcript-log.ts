import type { MessageParam, ToolResultBlockParam } from '@anthropic-ai/sdk/resources/messages';
import { Context, type Info } from '@temporalio/activity';
import { assistantMessage } from '../context/replies';
import { planLayout, requestOfPlan, stepPlanSeqs } from '../context/plan-request';
import { layoutSeqs, messageEntry, messagesOfLayout, previewOf, resultText } from '../context/references';
import { SYSTEM_PROMPT } from '../context/system-prompt';
import { estimateBlockTokens } from '../context/tokens';
import { requestProblems } from '../context/transcript-check';
import type { ReplyKey, TranscriptLog } from '../db/transcript-log';
import { BadInputError } from '../errors';
import type { Model } from '../model/port';
import type { CaseNotes } from '../schemas/case-notes';
import type { ModelReply, TokenUsage } from '../schemas/model';
import type { ToolCall, ToolOutcome } from '../schemas/tool-call';
import { TOOL_DEFINITIONS } from '../schemas/tool-definitions';
import type { CompactionPlan, LogEntry, LoggedOutcome, StepPlan } from '../schemas/transcript-log';
import { createCompactionActivities } from './compaction';
import { failuresForTemporal } from './failures';
import { withHeartbeat } from './heartbeat';
import { writePatiently } from './patient-write';
import type { McpTools } from '../commerce/mcp/client';
import { offeredDefinitions } from './mcp';

// History by reference, the activities' half: the model and compaction activities receive the
// step's plan and read the messages from the transcript log; a tool activity writes its own
// result there and returns a preview. The request is built by the same pure buildContext the
// workflow used to run, so the model sees exactly what it saw before.

function need(log: TranscriptLog | undefined): TranscriptLog {
  if (!log) throw new BadInputError('this worker has no transcript log (createActivities needs transcriptLog): history-by-reference steps cannot run on it');
  return log;
}

/** The entries a plan names, by number, after writing the plan's new ones. */
async function entriesOf(log: TranscriptLog, workflowId: string, entries: readonly LogEntry[], seqs: readonly number[]): Promise<Map<number, LogEntry>> {
  await log.write(workflowId, entries);
  const read = await log.read(workflowId, seqs);
  return new Map(read.map((e) => [e.seq, e]));
}

/** The investigation a plan is for: the activity's own (a plan names none). */
function workflowOf(): string {
  const workflowId = Context.current().info.workflowExecution?.workflowId;
  if (!workflowId) throw new BadInputError('a compact plan names no investigation: it runs only as an activity of the investigation it is for');
  return workflowId;
}

/**
 * The model call this activity attempt is part of, whether an earlier attempt of it ran, and
 * whether it runs as a local activity; undefined outside an activity (nothing to keep a reply under).
 */
function modelCall(): { key: ReplyKey; retry: boolean; local: boolean } | undefined {
  let info: Info;
  try {
    info = Context.current().info;
  } catch {
    return undefined;
  }
  const { workflowId, runId } = info.workflowExecution ?? {};
  return workflowId && runId ? { key: { workflowId, runId, activityId: info.activityId }, retry: info.attempt > 1, local: info.isLocal } : undefined;
}

/**
 * The answer an earlier attempt of this call kept, logged when found (the context logger adds
 * the workflow id, activity type and attempt). A remote call's first attempt has no earlier one:
 * no read. A local call's may: a run evicted from the worker's cache while its task ran loses
 * that task, and the replay runs the call again as a first attempt, under the same id.
 */
async function keptAnswer<T>(log: TranscriptLog, call: ReturnType<typeof modelCall>, what: string, fields: (kept: T) => Record<string, unknown>): Promise<T | undefined> {
  if (!call || (!call.retry && !call.local)) return undefined;
  const kept = (await log.replyOf(call.key)) as T | undefined;
  if (kept) Context.current().log.info(`${what} kept by an earlier attempt, not asked again`, fields(kept));
  return kept;
}

/**
 * Asks the model for one step and keeps its reply under the call. The reply is paid for: a
 * Postgres blip while keeping it is waited out here, not by a retry that asks the model again;
 * when two attempts raced, the one kept first is returned.
 */
async function askModel(deps: { model: Model; mcp?: McpTools }, log: TranscriptLog, workflowId: string, plan: StepPlan, call: ReplyKey | undefined): Promise<ModelReply> {
  const entries = await entriesOf(log, workflowId, plan.entries, stepPlanSeqs(plan));
  // A run offering MCP tools names their digest; the definitions are this worker's, checked against it.
  const tools = plan.mcp ? [...TOOL_DEFINITIONS, ...offeredDefinitions(deps.mcp, plan.mcp)] : TOOL_DEFINITIONS;
  const built = requestOfPlan(plan, entries, { system: SYSTEM_PROMPT, tools });
  // The workflow checked its skeleton; the whole messages must pass too, or the log and the skeleton disagree.
  const problems = requestProblems(built);
  if (problems.length) throw new BadInputError(`the request rebuilt from the transcript log of ${workflowId} breaks the Messages API's rules: ${problems.join('; ')}`);
  const reply = await withHeartbeat(() => deps.model.create({ purpose: 'investigate', ...built, max_tokens: plan.max_tokens, extra: plan.extra }));
  return call ? writePatiently(() => log.keepReply(call, plan.replySeq, reply)) : reply;
}

/** What compaction returns: the new case notes and what the model call cost. */
type Compacted = { notes: CaseNotes; usage: TokenUsage };

/** Reads what a compaction plan summarises from the log, asks the model, and keeps the result under the call. */
async function summarise(
  compact: (input: { messages: MessageParam[]; previous: CaseNotes | null }) => Promise<Compacted>,
  log: TranscriptLog,
  workflowId: string,
  plan: CompactionPlan,
  call: ReplyKey | undefined,
): Promise<Compacted> {
  const layout = planLayout(plan);
  const { previousSeq } = plan;
  const entries = await entriesOf(log, workflowId, plan.entries, [...layoutSeqs(layout), ...(previousSeq === null ? [] : [previousSeq])]);
  const previous = previousSeq === null ? (plan.previous ?? null) : (entries.get(previousSeq)?.body as CaseNotes);
  const result = await compact({ messages: messagesOfLayout(layout, entries), previous });
  return call ? writePatiently(() => log.keepReply(call, plan.notesSeq, result)) : result;
}

/** Builds the model step and compaction activities over the transcript log. */
export function createTranscriptActivities(deps: { model: Model; log?: TranscriptLog; mcp?: McpTools }) {
  const { compactConversation } = createCompactionActivities({ model: deps.model });
  return failuresForTemporal({
    /**
     * One investigation step from its plan: the request rebuilt from the log, the reply kept
     * under this model call and its blocks written back. A retry of a call already answered
     * (the worker died after keeping the reply, before Temporal heard) returns that reply
     * without asking the model.
     */
    async callModelOnPlan(plan: StepPlan): Promise<ModelReply & { sent?: StepPlan }> {
      const log = need(deps.log);
      const workflowId = workflowOf();
      const call = modelCall();
      const kept = await keptAnswer<ModelReply>(log, call, 'model reply', (r) => ({ replySeq: plan.replySeq, stop_reason: r.stop_reason }));
      const reply = kept ?? (await askModel(deps, log, workflowId, plan, call?.key));
      const message = assistantMessage(reply);
      if (message && Array.isArray(message.content)) {
        const entries = message.content.map((block, i) => messageEntry('assistant', block, plan.replySeq + i));
        await writePatiently(() => log.write(workflowId, entries));
      }
      // A local activity's marker records its result but not its input: the plan goes with the reply, so the
      // history still says what the step sent (the codec server rebuilds it for the web UI). Its new entries are
      // in the log by now, so they are left out.
      return call?.local ? { ...reply, sent: { ...plan, entries: [] } } : reply;
    },

    /**
     * Compaction from its plan: the messages it summarises read from the log. The result is
     * kept under this model call like a step's reply, so a retry after a lost completion returns
     * it instead of asking the model to summarise again.
     */
    async compactFromLog(plan: CompactionPlan) {
      const log = need(deps.log);
      const workflowId = workflowOf();
      const call = modelCall();
      const kept = await keptAnswer<Compacted>(log, call, 'compaction', () => ({ notesSeq: plan.notesSeq }));
      const result = kept ?? (await summarise(compactConversation, log, workflowId, plan, call?.key));
      // The notes are written here, once: a retry whose model wrote other notes returns the ones already stored, so the log and the workflow agree.
      const [stored] = await writePatiently(() => log.write(workflowId, [{ seq: plan.notesSeq, kind: 'case_notes', body: result.notes, tokens: 0 }], 'keep-stored'));
      return stored ? { ...result, notes: stored.body as CaseNotes } : result;
    },
  });
}

type ActivityFn = (...args: never[]) => Promise<unknown>;

const isOutcome = (value: unknown): value is ToolOutcome =>
  typeof value === 'object' && value !== null && typeof (value as ToolOutcome).content === 'string' && typeof (value as ToolOutcome).is_error === 'boolean';

/**
 * Tool activities that, when the call names a log entry (ToolCall.log), write their whole
 * result there and return a preview and the entry instead. A retry that computes a different
 * result (the records changed meanwhile) returns the one already written: the model and the
 * log never disagree. Calls without a target behave as before.
 */
export function withResultLogging<T extends Record<string, ActivityFn>>(tools: T, log: TranscriptLog | undefined): T {
  if (!log) return tools;
  const wrapped: Record<string, ActivityFn> = {};
  for (const [name, fn] of Object.entries(tools)) {
    wrapped[name] = async (...args: never[]) => {
      const outcome = await fn(...args);
      const call = args[0] as unknown as ToolCall | undefined;
      if (!call?.log || !isOutcome(outcome)) return outcome;
      const block: ToolResultBlockParam = { type: 'tool_result', tool_use_id: call.context.toolUseId, content: outcome.content, ...(outcome.is_error ? { is_error: true } : {}) };
      const [stored] = await log.write(call.context.workflowId, [messageEntry('user', block, call.log.seq)], 'keep-stored');
      const result = (stored?.body as ToolResultBlockParam | undefined) ?? block;
      const logged: LoggedOutcome = {
        is_error: result.is_error === true,
        content: previewOf(resultText(result.content)),
        logged: { seq: call.log.seq, tokens: estimateBlockTokens(result) },
      };
      return logged;
    };
  }
  return failuresForTemporal(wrapped) as T;
}
