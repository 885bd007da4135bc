import { allHandlersFinished, condition, continueAsNew, log, setHandler, workflowInfo } from '@temporalio/workflow';
import type { ToolResultBlockParam } from '@anthropic-ai/sdk/resources/messages';
import { costOf } from '../context/accounting';
import { contextManagementEdits } from '../context/clearing';
import { customerText, replyText, toolResultMessage, toParams, toolUses } from '../context/transcript';
import type { CarriedState, InboxMessage, InvestigationInput, InvestigationStatus } from '../schemas/investigation';
import { addUsage, type ModelReply } from '../schemas/model';
import { callModel, compactConversation, loadMemory, recordCase } from './activities';
import { buildRequest, liveTail, prepareContext } from './context-step';
import { closeTicketSignal, customerMessageSignal, statusQuery } from './investigation-api';
import { installDecisionHandlers } from './refund-approval';
import { publish, startingState, statusOf, type RunIdentity } from './state';
import { runTool } from './tool-dispatch';

/** What the customer is told when the step cap ends a turn. */
const STEP_CAP_REPLY =
  'I have not been able to finish looking into this within my step limit, so I have passed your case to a colleague, who will reply to you here.';

/**
 * One support investigation, `investigation-<ticketId>`. The workflow's history is the task
 * state: it keeps every message word for word, while each model call gets only the lean
 * context this step needs (cleared old results, compacted older chat, notes in fixed places).
 */
export async function investigation(input: InvestigationInput): Promise<InvestigationStatus> {
  const { settings } = input;
  const id: RunIdentity = { workflowId: workflowInfo().workflowId, ticketId: input.ticketId, customerId: input.customerId };
  const s = startingState(input);
  let closeRequested = false;
  let stepsThisRun = 0;

  setHandler(statusQuery, () => statusOf(id, s));
  setHandler(customerMessageSignal, (message: InboxMessage) => {
    if (s.seenEventIds.includes(message.eventId)) return;
    if (message.customerId !== id.customerId) {
      log.warn('ignored a message for another customer', { eventId: message.eventId });
      return;
    }
    s.seenEventIds.push(message.eventId);
    s.inbox.push(message);
  });
  setHandler(closeTicketSignal, (event) => {
    if (event.customerId === id.customerId) closeRequested = true;
  });
  installDecisionHandlers(s);

  if (!input.carried) {
    publish(id, s, 'investigating');
    // The first event may be any ticket event (signal-with-start): wait for the customer's words.
    await condition(() => s.inbox.length > 0 || closeRequested);
    s.memoryBlock = (await loadMemory({ customerId: id.customerId, now: new Date().toISOString() })).block;
  }

  const drainInbox = (): string[] => s.inbox.splice(0, s.inbox.length).map((m) => m.message);

  /** One model call on the lean context; the reply joins the transcript. */
  const modelStep = async (): Promise<ModelReply> => {
    s.step += 1;
    stepsThisRun += 1;
    const contextEvent = await prepareContext(s, settings);
    const built = buildRequest(s);
    const reply = await callModel({
      purpose: 'investigate',
      ...built,
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
        publish(id, s, 'waiting_for_customer');
        await condition(() => s.inbox.length > 0 || closeRequested, settings.followUpWindowMs);
      }
      if (s.inbox.length === 0) break;
      s.transcript.push({ role: 'user', content: drainInbox().map(customerText) });
      s.turnSteps = 0;
      publish(id, s, 'investigating');
    }

    if (mustContinueAsNew()) {
      await condition(allHandlersFinished);
      await continueAsNew<typeof investigation>({ ...input, carried: { ...s, runsSoFar: s.runsSoFar + 1 } });
    }

    if (s.turnSteps >= settings.maxSteps) {
      s.lastReply = STEP_CAP_REPLY;
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
        const outcome = await runTool(id, s, settings, use);
        results.push({ type: 'tool_result', tool_use_id: use.id, content: outcome.content, ...(outcome.is_error ? { is_error: true } : {}) });
      }
      s.transcript.push(toolResultMessage(results, drainInbox()));
      publish(id, s, 'investigating');
      continue;
    }
    // end_turn, refusal, max_tokens, or a tool_use stop without tools: the turn is over.
    s.lastReply = replyText(reply.content) || (reply.stop_reason === 'refusal' ? 'The model declined to answer this request.' : '');
    s.status = 'waiting_for_customer';
  }

  await closeCase(id, s);
  publish(id, s, 'closed');
  return statusOf(id, s);
}

/** Records the case after the conversation: the rest of the chat compacted into notes, then the outcome. */
async function closeCase(id: RunIdentity, s: CarriedState): Promise<void> {
  if (s.transcript.length === 0) return;
  const rest = liveTail(s);
  if (rest.length > 0) s.caseNotes = (await compactConversation({ messages: rest, previous: s.caseNotes })).notes;
  const notes = s.caseNotes;
  const decided = s.decisions.map((d) => `refund ${d.requestId} ${d.decision} by ${d.approver}`);
  await recordCase({
    customerId: id.customerId,
    workflowId: id.workflowId,
    ticketId: id.ticketId,
    orderIds: notes?.order_ids ?? [],
    summary: notes?.customer_problem || 'Support case',
    resolution: [s.lastReply ?? '', ...decided].filter(Boolean).join(' | ').slice(0, 2000),
    closedOn: new Date().toISOString().slice(0, 10),
  });
}
