import {
  ActivityFailure,
  allHandlersFinished,
  condition,
  continueAsNew,
  log,
  proxyActivities,
  setHandler,
  upsertMemo,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import type { MessageParam, ToolResultBlockParam, ToolUseBlock } from '@anthropic-ai/sdk/resources/messages';
import type { Activities } from '../activities';
import type {
  CarriedState,
  CaseStatus,
  InboxMessage,
  InvestigationInput,
  InvestigationStatus,
  RefundDecision,
  RefundRequest,
} from '../schemas/investigation';
import { addUsage, NO_USAGE, type ModelReply } from '../schemas/model';
import { SA } from '../schemas/search-attributes';
import { isToolName, TOOL_SPECS, toolDefinitions } from '../tools/specs';
import type { ToolCall, ToolOutcome } from '../tools/types';
import { decisionProblem, describeDuration } from './approvals';
import { customerMessageSignal, closeTicketSignal, decideRefundSignal, decideRefundUpdate, statusQuery } from './investigation-api';
import { SYSTEM_PROMPT } from './prompt';
import { replyText, toolResultMessage, toParams, toolUses } from './transcript';
import {
  applyNotesUpdate,
  EMPTY_AGENT_NOTES,
  buildContext,
  chooseSplit,
  clearingTrigger,
  costOf,
  idsToClear,
  renderNotes,
  estimateMessagesTokens,
  contextManagementEdits,
  type CaseNotes,
} from './context';
import { describeIssues } from '../schemas/issues';

const { callModel } = proxyActivities<Activities>({
  startToCloseTimeout: '3 minutes',
  retry: { initialInterval: '2 seconds', backoffCoefficient: 2, maximumInterval: '1 minute', maximumAttempts: 8 },
});

const { compactConversation } = proxyActivities<Activities>({
  startToCloseTimeout: '3 minutes',
  retry: { initialInterval: '2 seconds', backoffCoefficient: 2, maximumInterval: '1 minute', maximumAttempts: 5 },
});

const TOOL_ACTIVITY_OPTIONS = {
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds', maximumAttempts: 5 },
} as const;
const tools = proxyActivities<Activities>(TOOL_ACTIVITY_OPTIONS);

const { loadMemory, recordCase, recordRefundDecision } = proxyActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds', maximumAttempts: 10 },
});

const TOOLS = toolDefinitions();
const TOOL_NAMES = TOOLS.map((t) => t.name).join(', ');

function freshState(): CarriedState {
  return {
    transcript: [],
    step: 0,
    turnSteps: 0,
    status: 'investigating',
    lastReply: null,
    totals: { ...NO_USAGE },
    costUsd: 0,
    steps: [],
    clearedIds: [],
    lastBatchStep: 0,
    lastModelCallAt: null,
    compactedThrough: 0,
    caseNotes: null,
    agentNotes: EMPTY_AGENT_NOTES,
    notesShown: EMPTY_AGENT_NOTES,
    memoryBlock: null,
    pending: null,
    decisions: [],
    inbox: [],
    seenEventIds: [],
    model: null,
    runsSoFar: 0,
  };
}

/** A one-line summary of a tool call for the event history, e.g. "get_tracking_events order 5102". */
function callSummary(use: ToolUseBlock): string {
  const input = (use.input ?? {}) as Record<string, unknown>;
  const detail = ['order_id', 'request_id', 'topic', 'query', 'question', 'page']
    .filter((k) => input[k] !== undefined)
    .map((k) => `${k === 'order_id' ? 'order' : k.replace('_id', '')} ${String(input[k]).slice(0, 60)}`)
    .join(', ');
  return detail ? `${use.name}: ${detail}` : use.name;
}

/**
 * One support investigation, `investigation-<ticketId>`. The workflow's history is the task
 * state: it keeps every message word for word, while each model call gets only the lean
 * context this step needs (cleared old results, compacted older chat, notes in fixed places).
 */
export async function investigation(input: InvestigationInput): Promise<InvestigationStatus> {
  const { settings, customerId, ticketId } = input;
  const info = workflowInfo();
  const s: CarriedState = input.carried ?? freshState();
  let closeRequested = false;
  let stepsThisRun = 0;

  const status = (): InvestigationStatus => ({
    workflowId: info.workflowId,
    ticketId,
    customerId,
    status: s.status,
    step: s.step,
    model: s.model,
    lastReply: s.lastReply,
    pendingApproval: s.pending,
    decisions: s.decisions,
    totals: { ...s.totals, cost_usd: s.costUsd },
    steps: s.steps,
    agentNotes: s.agentNotes,
    caseNotes: s.caseNotes,
    transcriptMessages: s.transcript.length,
    continuedAsNew: s.runsSoFar,
  });

  const publish = (state: CaseStatus) => {
    s.status = state;
    upsertSearchAttributes([
      { key: SA.customerId, value: customerId },
      { key: SA.ticketId, value: ticketId },
      { key: SA.status, value: state },
      { key: SA.step, value: s.step },
      { key: SA.inputTokens, value: s.totals.input_tokens + s.totals.cache_creation_input_tokens + s.totals.cache_read_input_tokens },
    ]);
    const pending = s.pending ? `; refund ${s.pending.request_id} (${s.pending.amount_cents} cents, order ${s.pending.order_id}) awaiting approval` : '';
    upsertMemo({ summary: `Ticket ${ticketId} for ${customerId}: ${state}, step ${s.step}${pending}` });
  };

  setHandler(statusQuery, status);
  setHandler(customerMessageSignal, (message: InboxMessage) => {
    if (s.seenEventIds.includes(message.eventId)) return;
    if (message.customerId !== customerId) {
      log.warn('ignored a message for another customer', { eventId: message.eventId });
      return;
    }
    s.seenEventIds.push(message.eventId);
    s.inbox.push(message);
  });
  setHandler(closeTicketSignal, (event) => {
    if (event.customerId === customerId) closeRequested = true;
  });
  const accept = (decision: RefundDecision) => {
    s.decisions.push({ requestId: decision.requestId, decision: decision.decision, approver: decision.approver, reason: decision.reason });
  };
  setHandler(decideRefundSignal, (decision: RefundDecision) => {
    const problem = decisionProblem(s.pending, s.decisions, decision);
    if (problem) log.warn('ignored a refund decision', { problem });
    else accept(decision);
  });
  setHandler(
    decideRefundUpdate,
    (decision: RefundDecision) => {
      accept(decision);
      return { accepted: true as const, requestId: decision.requestId, decision: decision.decision };
    },
    {
      validator: (decision: RefundDecision) => {
        const problem = decisionProblem(s.pending, s.decisions, decision);
        if (problem) throw new Error(problem);
      },
    },
  );

  if (!input.carried) {
    publish('investigating');
    // The first event may be any ticket event (signal-with-start): wait for the customer's words.
    await condition(() => s.inbox.length > 0 || closeRequested);
    // The first message picks the notes most relevant to it for the start block.
    const memory = await loadMemory({ customerId, now: new Date().toISOString(), message: s.inbox[0]?.message });
    s.memoryBlock = memory.block;
  }

  const toolContext = (use: ToolUseBlock): ToolCall['context'] => ({
    customerId,
    ticketId,
    workflowId: info.workflowId,
    toolUseId: use.id,
  });

  const waitForDecision = async (request: RefundRequest): Promise<RefundDecision> => {
    const decided = () => s.decisions.find((d) => d.requestId === request.request_id);
    const elapsed = () => Date.now() - Date.parse(request.requested_at);
    if (!request.reminded) {
      const remindIn = Math.max(0, settings.approvalReminderMs - elapsed());
      if (!(await condition(() => decided() !== undefined, remindIn))) {
        request.reminded = true;
        log.warn('refund request still awaiting approval', { requestId: request.request_id });
        upsertMemo({ reminder: `refund ${request.request_id} waiting since ${request.requested_at}` });
      }
    }
    const timeoutIn = Math.max(0, settings.approvalTimeoutMs - elapsed());
    if (!(await condition(() => decided() !== undefined, timeoutIn))) {
      s.decisions.push({
        requestId: request.request_id,
        decision: 'denied',
        approver: 'casework-timer',
        reason: `no decision within ${describeDuration(settings.approvalTimeoutMs)}; denied automatically`,
      });
    }
    return decided()!;
  };

  const runRefundRequest = async (use: ToolUseBlock, call: ToolCall): Promise<ToolOutcome> => {
    const outcome = await tools.request_refund.executeWithOptions({ ...TOOL_ACTIVITY_OPTIONS, summary: callSummary(use) }, [call]);
    if (outcome.is_error) return outcome;
    const request = JSON.parse(outcome.content) as { request_id: string; order_id: string; amount_cents: number; reason: string };
    s.pending = {
      ...request,
      requested_at: new Date().toISOString(),
      tool_use_id: use.id,
      approvers: settings.approvers,
      reminded: false,
    };
    publish('awaiting_approval');
    const decision = await waitForDecision(s.pending);
    const recorded = await recordRefundDecision({
      customerId,
      requestId: decision.requestId,
      decision: decision.decision,
      approver: decision.approver,
      reason: decision.reason,
      decidedAt: new Date().toISOString(),
    });
    s.pending = null;
    publish('investigating');
    return {
      is_error: false,
      content: JSON.stringify({
        request_id: decision.requestId,
        decision: decision.decision,
        decided_by: decision.approver,
        reason: decision.reason ?? null,
        approval_id: decision.decision === 'approved' ? recorded.approvalId : null,
        next:
          decision.decision === 'approved'
            ? 'Approved by a human. Call issue_refund with this request_id.'
            : 'Not approved. Do not promise a refund; tell the customer honestly and offer the next step.',
      }),
    };
  };

  const runTool = async (use: ToolUseBlock): Promise<ToolOutcome> => {
    if (!isToolName(use.name)) {
      return { is_error: true, content: `Unknown tool "${use.name}". Available tools: ${TOOL_NAMES}.` };
    }
    const spec = TOOL_SPECS[use.name];
    if (spec.runs === 'workflow') {
      if (use.name === 'read_notes') return { is_error: false, content: renderNotes(s.agentNotes) };
      const parsed = TOOL_SPECS.write_notes.input.safeParse(use.input ?? {});
      if (!parsed.success) return { is_error: true, content: `Invalid input for write_notes: ${describeIssues(parsed.error)}` };
      s.agentNotes = applyNotesUpdate(s.agentNotes, parsed.data);
      return { is_error: false, content: `Notes saved.\n${renderNotes(s.agentNotes)}` };
    }
    const call: ToolCall = { name: use.name, input: use.input, context: toolContext(use) };
    try {
      if (use.name === 'request_refund') return await runRefundRequest(use, call);
      const activity = (tools as unknown as Record<string, unknown>)[use.name] as {
        executeWithOptions(options: object, args: [ToolCall]): Promise<ToolOutcome>;
      };
      return await activity.executeWithOptions({ ...TOOL_ACTIVITY_OPTIONS, summary: callSummary(use) }, [call]);
    } catch (error) {
      if (!(error instanceof ActivityFailure)) throw error;
      const cause = error.cause instanceof Error ? error.cause.message : error.message;
      return { is_error: true, content: `The ${use.name} tool failed after retries: ${cause}. Try another approach or tell the customer what you could not check.` };
    }
  };

  const drainInbox = (): string[] => s.inbox.splice(0, s.inbox.length).map((m) => m.message);

  /** Clearing in batches and compaction, both changing only what is sent, never the transcript. */
  const prepareContext = async (): Promise<string | undefined> => {
    const events: string[] = [];
    const tail = s.transcript.slice(s.compactedThrough);
    if (!settings.thinking) {
      const trigger = clearingTrigger({
        step: s.step,
        lastBatchStep: s.lastBatchStep,
        clearEvery: settings.clearEvery,
        lastModelCallAt: s.lastModelCallAt,
        now: Date.now(),
        cacheTtlMs: settings.cacheTtlMs,
      });
      if (trigger) {
        s.clearedIds = idsToClear(tail, settings.keepRecent);
        s.notesShown = s.agentNotes;
        s.lastBatchStep = s.step;
        events.push(`cleared ${s.clearedIds.length} old results (${trigger})`);
      }
    }
    if (estimateMessagesTokens(tail) > settings.compactAboveTokens) {
      const split = chooseSplit(tail, settings.keepLastMessages);
      if (split !== null && split > 0) {
        const older = tail.slice(0, split);
        const { notes, usage } = await compactConversation({ messages: older, previous: (s.caseNotes as CaseNotes | null) ?? null });
        s.caseNotes = notes;
        s.compactedThrough += split;
        // The prefix changes here anyway, so the context's copy of the notes catches up for free.
        s.notesShown = s.agentNotes;
        s.totals = addUsage(s.totals, usage);
        s.costUsd += costOf(usage, settings.prices);
        events.push(`compacted ${split} messages into case notes`);
      }
    }
    return events.length ? events.join('; ') : undefined;
  };

  const modelStep = async (): Promise<ModelReply> => {
    s.step += 1;
    stepsThisRun += 1;
    const contextEvent = await prepareContext();
    const built = buildContext({
      system: SYSTEM_PROMPT,
      tools: TOOLS,
      messages: s.transcript.slice(s.compactedThrough),
      clearedIds: s.clearedIds,
      memoryBlock: s.memoryBlock,
      agentNotes: s.notesShown,
      caseNotes: (s.caseNotes as CaseNotes | null) ?? null,
    });
    const reply = await callModel({
      purpose: 'investigate',
      system: built.system,
      tools: built.tools,
      messages: built.messages,
      max_tokens: settings.maxTokens,
      extra: settings.thinking
        ? { thinking: { type: 'enabled', budget_tokens: 1024 }, context_management: contextManagementEdits(settings.keepRecent) }
        : undefined,
    });
    s.lastModelCallAt = Date.now();
    s.model = reply.model;
    const cost = costOf(reply.usage, settings.prices);
    s.totals = addUsage(s.totals, reply.usage);
    s.costUsd += cost;
    s.steps.push({ step: s.step, tools: toolUses(reply.content).map((u) => u.name), usage: reply.usage, cost_usd: cost, context_event: contextEvent });
    s.transcript.push({ role: 'assistant', content: toParams(reply.content) });
    return reply;
  };

  const mustContinueAsNew = () => workflowInfo().continueAsNewSuggested || stepsThisRun >= settings.maxStepsPerRun;

  // The conversation: one customer turn after another until the ticket closes.
  for (;;) {
    if (s.status === 'waiting_for_customer' || s.transcript.length === 0) {
      if (s.inbox.length === 0 && !closeRequested) {
        publish('waiting_for_customer');
        await condition(() => s.inbox.length > 0 || closeRequested, settings.followUpWindowMs);
      }
      if (s.inbox.length === 0) break;
      s.transcript.push({ role: 'user', content: drainInbox().map((m) => ({ type: 'text', text: `Customer message:\n${m}` })) });
      s.turnSteps = 0;
      publish('investigating');
    }

    if (mustContinueAsNew()) {
      await condition(allHandlersFinished);
      await continueAsNew<typeof investigation>({ ...input, carried: { ...s, runsSoFar: s.runsSoFar + 1 } });
    }

    if (s.turnSteps >= settings.maxSteps) {
      s.lastReply =
        'I have not been able to finish looking into this within my step limit, so I have passed your case to a colleague, who will reply to you here.';
      s.transcript.push({ role: 'assistant', content: [{ type: 'text', text: s.lastReply }] });
      s.status = 'waiting_for_customer';
      continue;
    }

    s.turnSteps += 1;
    const reply = await modelStep();
    const uses = toolUses(reply.content);
    if (reply.stop_reason === 'tool_use' && uses.length > 0) {
      const results: ToolResultBlockParam[] = [];
      for (const use of uses) {
        const outcome = await runTool(use);
        results.push({ type: 'tool_result', tool_use_id: use.id, content: outcome.content, ...(outcome.is_error ? { is_error: true } : {}) });
      }
      s.transcript.push(toolResultMessage(results, drainInbox()));
      publish('investigating');
      continue;
    }
    // end_turn, refusal, max_tokens, or a tool_use stop without tools: the turn is over.
    s.lastReply = replyText(reply.content) || (reply.stop_reason === 'refusal' ? 'The model declined to answer this request.' : '');
    s.status = 'waiting_for_customer';
  }

  await closeCase();
  publish('closed');
  return status();

  async function closeCase(): Promise<void> {
    if (s.transcript.length === 0) return;
    let notes = (s.caseNotes as CaseNotes | null) ?? null;
    const rest = s.transcript.slice(s.compactedThrough);
    if (rest.length > 0) {
      const compacted = await compactConversation({ messages: rest, previous: notes });
      notes = compacted.notes;
      s.caseNotes = notes;
    }
    const decided = s.decisions.map((d) => `refund ${d.requestId} ${d.decision} by ${d.approver}`);
    await recordCase({
      customerId,
      workflowId: info.workflowId,
      ticketId,
      orderIds: notes?.order_ids ?? [],
      summary: notes?.customer_problem || 'Support case',
      resolution: [s.lastReply ?? '', ...decided].filter(Boolean).join(' | ').slice(0, 2000),
      closedOn: new Date().toISOString().slice(0, 10),
    });
  }
}
