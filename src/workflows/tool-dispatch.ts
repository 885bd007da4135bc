import { ActivityFailure, ApplicationFailure } from '@temporalio/workflow';
import type { ToolUseBlock } from '@anthropic-ai/sdk/resources/messages';
import { applyNotesUpdate, renderNotes } from '../context/agent-notes';
import { notesUpdateOf, notesUpdateProblems } from '../schemas/notes-update';
import type { CarriedState } from '../schemas/investigation';
import type { ToolCall, ToolOutcome } from '../schemas/tool-call';
import { isOfferedTool, TOOL_DEFINITIONS } from '../schemas/tool-definitions';
import type { ToolName } from '../schemas/tool-specs';
import { requestRefund } from './refund-approval';
import type { Run } from './state';
import { isLocalActivityFailure } from './activities';
import { mcpOffer, runMcpTool } from './mcp-tools';

/** The tool definitions the model is offered, identical on every call (generated at build time: no schema is built per run). */
export const TOOLS = TOOL_DEFINITIONS;
const TOOL_NAMES = TOOLS.map((t) => t.name).join(', ');

/** Tools that are plain activities: everything but the workflow's own notes (runs: 'workflow') and request_refund. */
type ActivityToolName = Exclude<ToolName, 'read_notes' | 'write_notes' | 'request_refund'>;

/**
 * Tools that only read the shop's own records in Postgres and answer in milliseconds: run as
 * local activities, each leaves one marker event (with its summary) in the workflow task that
 * scheduled it, instead of a scheduled, started and completed event and a second workflow task.
 * Never a tool that writes (request_refund, issue_refund, remember) or calls the model.
 */
export const LOCAL_READ_TOOLS: ReadonlySet<string> = new Set<ToolName>(['get_order', 'list_orders', 'get_tracking_events', 'get_earlier_tickets', 'get_payments', 'lookup_policy']);

/**
 * Tools that change nothing another call of the same reply reads, so consecutive calls of
 * them run side by side: the local reads, plus recall and review_tickets (remote: a memory
 * search that may embed, a model call). Writes and the notes tools run alone, in order.
 */
const SIDE_BY_SIDE: ReadonlySet<string> = new Set<string>([...LOCAL_READ_TOOLS, 'recall', 'review_tickets']);

/**
 * One reply's calls in the groups they run in, in the reply's order: each run of consecutive
 * side-by-side calls is one group, every other call a group of its own.
 */
export function sideBySideGroups<T extends { name: string }>(uses: readonly T[]): T[][] {
  const groups: T[][] = [];
  for (const use of uses) {
    const last = groups[groups.length - 1];
    if (last && SIDE_BY_SIDE.has(use.name) && SIDE_BY_SIDE.has(last[0]!.name)) last.push(use);
    else groups.push([use]);
  }
  return groups;
}

/** A one-line summary of a tool call for the event history, e.g. "get_tracking_events: order 5102". */
export function callSummary(use: ToolUseBlock): string {
  const input = (use.input ?? {}) as Record<string, unknown>;
  const detail = ['order_id', 'request_id', 'topic', 'query', 'question', 'page']
    .filter((k) => input[k] !== undefined)
    .map((k) => `${k === 'order_id' ? 'order' : k.replace('_id', '')} ${String(input[k]).slice(0, 60)}`)
    .join(', ');
  return detail ? `${use.name}: ${detail}` : use.name;
}

/** A tool's outcome, or word that the tool's dependency stayed unreachable past the outage budget. */
export type DispatchOutcome = ToolOutcome & { unavailable?: string };

/** Runs a tool that is a plain activity, with its one-line summary shown in the UI. */
function runActivityTool(run: Run, name: ActivityToolName, call: ToolCall, summary: string): Promise<ToolOutcome> {
  // review_tickets is a model call inside: it heartbeats and may take as long as one.
  const options = name === 'review_tickets' ? run.acts.modelOptions : run.acts.toolOptions;
  return run.acts.tools[name].executeWithOptions({ ...options, summary }, [call]);
}

/** Runs a read-only tool as a local activity; the SDK puts its summary on the marker event, where the UI shows it. */
function runLocalTool(run: Run, name: ActivityToolName, call: ToolCall, summary: string): Promise<ToolOutcome> {
  return run.acts.localTools[name].executeWithOptions({ ...run.acts.localToolOptions, summary }, [call]);
}

/**
 * What a tool that failed after its retries tells the model. A failure casework raised on
 * purpose and marked final (bad input, not found…) says its own words; anything else — an
 * outage that outlasted the budget, a timeout — is never shown to the model or the customer:
 * no host, connection string or stack trace leaves casework. The case then goes to a person.
 */
function failedOutcome(name: string, error: ActivityFailure): DispatchOutcome {
  return outcomeOfFailure(name, error.cause, error.message);
}

/** failedOutcome for the failure itself: a local activity's last attempt rejects with its own failure, not an ActivityFailure around it. */
function outcomeOfFailure(name: string, cause: Error | undefined, fallback: string): DispatchOutcome {
  if (cause instanceof ApplicationFailure && cause.nonRetryable) return { is_error: true, content: `The ${name} tool could not do this: ${cause.message}` };
  return {
    is_error: true,
    content: `The ${name} tool is not answering right now, so it was not run. A colleague has been asked to take over.`,
    unavailable: `the ${name} tool stayed unavailable past the outage budget (${cause?.message ?? fallback})`,
  };
}

/** read_notes and write_notes: the agent's notes live in the workflow, outside the context. */
function runNotesTool(s: CarriedState, use: ToolUseBlock): ToolOutcome {
  if (use.name === 'read_notes') return { is_error: false, content: renderNotes(s.agentNotes) };
  const input = use.input ?? {};
  const problems = notesUpdateProblems(input);
  if (problems.length) return { is_error: true, content: `Invalid input for write_notes: ${problems.join('; ')}` };
  s.agentNotes = applyNotesUpdate(s.agentNotes, notesUpdateOf(input as Record<string, unknown>));
  return { is_error: false, content: `Notes saved.\n${renderNotes(s.agentNotes)}` };
}

/** The call with the transcript-log entry its activity writes the result at (history by reference), when there is one. */
function withLogTarget(call: ToolCall, logSeq: number | undefined): ToolCall {
  return logSeq === undefined ? call : { ...call, log: { seq: logSeq } };
}

/**
 * Runs one tool_use block and returns what its tool_result says. An unknown tool, invalid
 * input or a tool's own refusal is an `is_error` result the model can act on; an activity
 * that failed after its retries becomes one too, so the conversation goes on.
 */
export async function runTool(run: Run, use: ToolUseBlock, options: { local?: boolean; logSeq?: number } = {}): Promise<DispatchOutcome> {
  // The run's MCP tools (recorded at its start): a remote activity each, or a request for a person's approval.
  const offer = mcpOffer(run.s, use.name);
  if (offer) {
    try {
      const call: ToolCall = { name: use.name, input: use.input, context: { ...run.id, toolUseId: use.id } };
      return await runMcpTool(run, use, offer, withLogTarget(call, offer.kind === 'read-only' ? options.logSeq : undefined), callSummary(use));
    } catch (error) {
      if (error instanceof ActivityFailure) return failedOutcome(use.name, error);
      throw error;
    }
  }
  if (!isOfferedTool(use.name)) {
    return { is_error: true, content: `Unknown tool "${use.name}". Available tools: ${TOOL_NAMES}.` };
  }
  const name = use.name;
  if (name === 'read_notes' || name === 'write_notes') return runNotesTool(run.s, use);
  const call: ToolCall = { name, input: use.input, context: { ...run.id, toolUseId: use.id } };
  const summary = callSummary(use);
  try {
    if (name === 'request_refund') return await requestRefund(run, use, call, summary);
    const logged = withLogTarget(call, options.logSeq);
    if (options.local && LOCAL_READ_TOOLS.has(name)) return await runLocalTool(run, name, logged, summary);
    return await runActivityTool(run, name, logged, summary);
  } catch (error) {
    if (error instanceof ActivityFailure) return failedOutcome(name, error);
    if (options.local && isLocalActivityFailure(error)) return outcomeOfFailure(name, error, error.message);
    throw error;
  }
}

/**
 * Runs one reply's tool calls and returns their outcomes in the reply's order: read-only tools
 * as local activities and consecutive read-only calls side by side, unless the run's settings
 * say localReadTools: false (then every call is a remote activity, each after the one before).
 */
export async function runTools(run: Run, uses: readonly ToolUseBlock[], logSeqs: readonly (number | undefined)[] = []): Promise<DispatchOutcome[]> {
  const outcomes: DispatchOutcome[] = [];
  if (run.settings.localReadTools === false) {
    for (const [i, use] of uses.entries()) outcomes.push(await runTool(run, use, { logSeq: logSeqs[i] }));
    return outcomes;
  }
  for (const group of sideBySideGroups(uses)) {
    const start = outcomes.length;
    outcomes.push(...(await Promise.all(group.map((use, j) => runTool(run, use, { local: true, logSeq: logSeqs[start + j] })))));
  }
  return outcomes;
}
