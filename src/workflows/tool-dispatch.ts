import { ActivityFailure, ApplicationFailure } from '@temporalio/workflow';
import type { ToolUseBlock } from '@anthropic-ai/sdk/resources/messages';
import { applyNotesUpdate, renderNotes } from '../context/agent-notes';
import { describeIssues } from '../schemas/issues';
import type { CarriedState } from '../schemas/investigation';
import type { ToolCall, ToolOutcome } from '../schemas/tool-call';
import { isToolName, TOOL_SPECS, toolDefinitions, type ToolName } from '../schemas/tool-specs';
import { requestRefund } from './refund-approval';
import type { Run } from './state';

/** The tool definitions the model is offered, identical on every call. */
export const TOOLS = toolDefinitions();
const TOOL_NAMES = TOOLS.map((t) => t.name).join(', ');

/** Tools that are plain activities: everything but the workflow's own notes (runs: 'workflow') and request_refund. */
type ActivityToolName = Exclude<ToolName, 'read_notes' | 'write_notes' | 'request_refund'>;

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

/**
 * What a tool that failed after its retries tells the model. A failure casework raised on
 * purpose and marked final (bad input, not found…) says its own words; anything else — an
 * outage that outlasted the budget, a timeout — is never shown to the model or the customer:
 * no host, connection string or stack trace leaves casework. The case then goes to a person.
 */
function failedOutcome(name: string, error: ActivityFailure): DispatchOutcome {
  const cause = error.cause;
  if (cause instanceof ApplicationFailure && cause.nonRetryable) return { is_error: true, content: `The ${name} tool could not do this: ${cause.message}` };
  return {
    is_error: true,
    content: `The ${name} tool is not answering right now, so it was not run. A colleague has been asked to take over.`,
    unavailable: `the ${name} tool stayed unavailable past the outage budget (${cause?.message ?? error.message})`,
  };
}

/** read_notes and write_notes: the agent's notes live in the workflow, outside the context. */
function runNotesTool(s: CarriedState, use: ToolUseBlock): ToolOutcome {
  if (use.name === 'read_notes') return { is_error: false, content: renderNotes(s.agentNotes) };
  const parsed = TOOL_SPECS.write_notes.input.safeParse(use.input ?? {});
  if (!parsed.success) return { is_error: true, content: `Invalid input for write_notes: ${describeIssues(parsed.error)}` };
  s.agentNotes = applyNotesUpdate(s.agentNotes, parsed.data);
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
export async function runTool(run: Run, use: ToolUseBlock, logSeq?: number): Promise<DispatchOutcome> {
  if (!isToolName(use.name)) {
    return { is_error: true, content: `Unknown tool "${use.name}". Available tools: ${TOOL_NAMES}.` };
  }
  const name = use.name;
  if (name === 'read_notes' || name === 'write_notes') return runNotesTool(run.s, use);
  const call: ToolCall = { name, input: use.input, context: { ...run.id, toolUseId: use.id } };
  const summary = callSummary(use);
  try {
    if (name === 'request_refund') return await requestRefund(run, use, call, summary);
    return await runActivityTool(run, name, withLogTarget(call, logSeq), summary);
  } catch (error) {
    if (!(error instanceof ActivityFailure)) throw error;
    return failedOutcome(name, error);
  }
}
