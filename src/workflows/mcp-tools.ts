import { ActivityFailure, log, patched } from '@temporalio/workflow';
import type { Tool, ToolUseBlock } from '@anthropic-ai/sdk/resources/messages';
import { labelMcpDecisionNote } from '../context/wire';
import type { CarriedState, RefundDecision } from '../schemas/investigation';
import type { McpOffer } from '../schemas/mcp';
import type { ToolCall, ToolOutcome } from '../schemas/tool-call';
import type { Settled } from './refund-approval';
import { publish, type Run } from './state';

// The tools of the worker's MCP servers in a run (docs/mcp.md). The offers are recorded once, by
// an activity at the run's start, and carried through continue-as-new: every step offers the
// model the same definitions (a stable cached prefix), and replay reads them from history. A
// read-only tool runs as an activity like any other. A money-moving tool is never called on the
// model's word: its call is filed as a request a person decides through the refund approval's
// update, signal and timers, and the workflow makes the call itself once approved.

/** From this patch on, a run whose settings name MCP servers records the MCP tools offered at its start. */
export const MCP_TOOLS_PATCH = 'mcp-tools';

/** Records the MCP tools this run offers, once, at its start. A worker that cannot say offers none, and the run goes on with casework's own tools. */
export async function loadMcpOffers(run: Run): Promise<void> {
  const { s, settings } = run;
  if (!settings.mcpTools || s.mcp !== undefined || !patched(MCP_TOOLS_PATCH)) return;
  try {
    s.mcp = await run.acts.tools.offeredMcpTools();
  } catch (error) {
    if (!(error instanceof ActivityFailure)) throw error;
    log.warn('the MCP tools could not be read; this run offers none', { error: error.message });
    s.mcp = { tools: [], digest: '' };
  }
}

/** The MCP tool the model named, when this run offers it. */
export function mcpOffer(s: CarriedState, name: string): McpOffer | undefined {
  return s.mcp?.tools.find((t) => t.name === name);
}

/** The definitions of the run's MCP tools, in their recorded order: after casework's own in every request. */
export function mcpDefinitions(s: CarriedState): Tool[] {
  return s.mcp?.tools.map((t) => t.definition) ?? [];
}

/** The plan's field naming the run's MCP tools by digest, so the model activity sends the same definitions; empty when it offers none. */
export function mcpPlanField(s: CarriedState): { mcp?: string } {
  return s.mcp?.tools.length ? { mcp: s.mcp.digest } : {};
}

/** What the model is told when it calls a money-moving tool: nothing was called; a person decides the exact call. */
interface FiledCall {
  request_id: string;
  tool: string;
  arguments: Record<string, unknown>;
  status: 'awaiting_approval';
  called: false;
  next: string;
}

/**
 * Runs one MCP tool_use. A read-only tool is an activity (its result logged and shaped there).
 * A money-moving one is not called: its call is filed for a person's approval and the model is
 * told so; the workflow makes it once approved (settleMcpDecision). Activity failures are the
 * caller's to turn into a tool error.
 */
export async function runMcpTool(run: Run, use: ToolUseBlock, offer: McpOffer, call: ToolCall, summary: string): Promise<ToolOutcome> {
  const { s, settings } = run;
  if (offer.kind === 'read-only') return run.acts.tools.callMcpTool.executeWithOptions({ ...run.acts.toolOptions, summary }, [call]);
  if (s.pending) {
    return {
      is_error: true,
      content: `${offer.name} was not called: request ${s.pending.request_id} is already waiting for a person's decision; wait for it before asking for another.`,
    };
  }
  const filing = await run.acts.tools.requestMcpCall.executeWithOptions({ ...run.acts.toolOptions, summary }, [{ name: call.name, input: call.input, context: call.context }]);
  if ('refused' in filing) return { is_error: true, content: `${offer.name} was not called: ${filing.refused}` };
  const { request_id, tool, arguments: args, amount_cents } = filing.filed;
  s.pending = {
    request_id,
    order_id: typeof args.order_id === 'string' ? args.order_id : '',
    amount_cents: amount_cents ?? 0,
    // What the approver reads: the exact call they are asked to allow.
    reason: `${tool} ${JSON.stringify(args)}`.slice(0, 500),
    requested_at: new Date().toISOString(),
    tool_use_id: use.id,
    approvers: settings.approvers,
    reminded: false,
    mcp: { tool, arguments: args },
  };
  publish(run.id, s);
  const answer: FiledCall = {
    request_id,
    tool,
    arguments: args,
    status: 'awaiting_approval',
    called: false,
    next:
      `${tool} moves money, so casework did not call it: it asked a person to approve this exact call. ` +
      'You may tell the customer a colleague is reviewing it, but do not say it is done. You will be told the decision, and the result if it was called, in a later message.',
  };
  return { is_error: false, content: JSON.stringify(answer) };
}

const why = (error: ActivityFailure) => (error.cause instanceof Error ? error.cause.message : error.message);

/** What the model is told once a money-moving call is decided. */
interface McpDecisionNote {
  request_id: string;
  tool: string;
  arguments: Record<string, unknown>;
  decision: RefundDecision['decision'];
  decided_by: string;
  reason: string | null;
  called: boolean;
  result: string | null;
  result_is_error?: true;
  next: string;
}

/**
 * Settles the pending money-moving call: records the decision, and when approved makes the call
 * (at most once per approval, recorded in Postgres by the activity). `blocked` when a write or
 * the call could not be made within the outage budget (the caller retries it with a person
 * told); `failed` when the call may or may not have happened and a person must check.
 */
export async function settleMcpDecision(run: Run, decision: RefundDecision): Promise<Settled> {
  const { s, id } = run;
  const request = s.pending!;
  const { tool, arguments: args } = request.mcp!;
  let recorded: { approvalId: string | null };
  try {
    recorded = await run.acts.tools.recordMcpDecision({
      customerId: id.customerId,
      requestId: decision.requestId,
      decision: decision.decision,
      approver: decision.approver,
      ...(decision.decidedBy ? { decidedBy: decision.decidedBy } : {}),
      ...(decision.via ? { decidedVia: decision.via } : {}),
      reason: decision.reason,
      decidedAt: new Date().toISOString(),
    });
  } catch (error) {
    if (!(error instanceof ActivityFailure)) throw error;
    return { blocked: `the ${decision.decision} decision on the ${tool} call ${request.request_id} could not be recorded: ${why(error)}` };
  }
  let outcome: (ToolOutcome & { call?: string }) | null = null;
  if (recorded.approvalId) {
    const call = { name: tool, input: args, context: { ...id, toolUseId: `approval-${request.request_id}` }, approval: { requestId: request.request_id } };
    try {
      outcome = await run.acts.tools.callMcpTool.executeWithOptions({ ...run.acts.toolOptions, summary: `${tool}: request ${request.request_id} (approved)` }, [call]);
    } catch (error) {
      if (!(error instanceof ActivityFailure)) throw error;
      return { blocked: `the approved ${tool} call ${request.request_id} could not be made yet: ${why(error)}` };
    }
    if (outcome.call === 'unknown') {
      s.pending = null;
      return { failed: `the approved ${tool} call ${request.request_id} may or may not have happened: ${outcome.content}` };
    }
  }
  s.pending = null;
  const called = outcome !== null && outcome.call !== undefined;
  const note: McpDecisionNote = {
    request_id: decision.requestId,
    tool,
    arguments: args,
    decision: decision.decision,
    decided_by: decision.approver,
    reason: decision.reason ?? null,
    called,
    result: outcome?.content ?? null,
    ...(outcome?.is_error ? { result_is_error: true as const } : {}),
    next: !recorded.approvalId
      ? `Not approved, so ${tool} was not called. Do not promise it; tell the customer honestly and offer the next step.`
      : outcome?.is_error
        ? `Approved, but the call did not succeed (see result); casework will not repeat it. Tell the customer honestly; do not say it is done.`
        : `Approved by a person, and casework made the call once; the result is its answer. Tell the customer; there is no need to call ${tool} again.`,
  };
  return { note: labelMcpDecisionNote(JSON.stringify(note)) };
}
