import { ActivityFailure, allHandlersFinished, condition, continueAsNew, log, setHandler, workflowInfo } from '@temporalio/workflow';
import type { ToolResultBlockParam } from '@anthropic-ai/sdk/resources/messages';
import { costOf } from '../context/accounting';
import { contextManagementEdits } from '../context/clearing';
import { appendAssistant, appendUserText, assistantMessage, EMPTY_REPLY_NUDGE, planReply } from '../context/replies';
import { customerText, toolResultMessage, toolUses } from '../context/transcript';
import { repairTranscript, requestProblems } from '../context/transcript-check';
import type { InboxMessage, InvestigationInput, InvestigationStatus } from '../schemas/investigation';
import { addUsage, type ModelReply } from '../schemas/model';
import { activitiesFor } from './activities';
import { buildRequest, liveTail, prepareContext } from './context-step';
import { handOff, installHandOffHandlers, resolveOnClose, resumeOnCustomerMessage } from './hand-off';
import { closeTicketSignal, customerMessageSignal, statusQuery } from './investigation-api';
import { installDecisionHandlers, pendingDecision, settleDecision, watchApproval } from './refund-approval';
import { publish, startingState, statusOf, type Run } from './state';
import { runTool } from './tool-dispatch';

/** What the customer is told when the step cap ends a turn. */
const STEP_CAP_REPLY = 'I have not been able to finish looking into this within my step limit, so I have passed your case to a colleague, who will reply to you here.';

/** Empty replies in a row a turn tolerates before a person takes over. */
const MAX_EMPTY_REPLIES = 2;

/** Why the model could not be asked: the failure's own words, for operators (never the customer). */
const failureText = (error: ActivityFailure) => (error.cause instanceof Error ? `${error.cause.name}: ${error.cause.message}` : error.message);

/**
 * One support investigation, `investigation-<ticketId>`. The workflow's history is the task
 * state: it keeps every message word for word, while each model call gets only the lean
 * context this step needs (cleared old results, compacted older chat, notes in fixed places).
 * Nothing ends it in silence: what cannot be retried is handed to a person (hand-off.ts).
 */
export async function investigation(input: InvestigationInput): Promise<InvestigationStatus> {
  const { settings } = input;
  const run: Run = {
    id: { workflowId: workflowInfo().workflowId, ticketId: input.ticketId, customerId: input.customerId },
    s: startingState(input),
    settings,
    acts: activitiesFor(settings),
  };
  const { id, s, acts } = run;
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
  installHandOffHandlers(run);
  const watch = () => void watchApproval(s, settings);
  if (s.pending) watch();

  if (!input.carried) {
    publish(id, s);
    // The first event may be any ticket event (signal-with-start): wait for the customer's words.
    await condition(() => s.inbox.length > 0 || closeRequested);
    try {
      s.memoryBlock = (await acts.loadMemory({ customerId: id.customerId, now: new Date().toISOString(), message: s.inbox[0]?.message })).block;
    } catch (error) {
      if (!(error instanceof ActivityFailure)) throw error;
      // Memory helps; it is not worth a customer's wait: the investigation goes on without it.
      log.warn('customer memory could not be loaded; investigating without it', { error: failureText(error) });
    }
  }

  /** One model call on the lean context; the reply joins the transcript. Null when a person must take over. */
  const modelStep = async (): Promise<ModelReply | null> => {
    s.step += 1;
    stepsThisRun += 1;
    try {
      const contextEvent = await prepareContext(run);
      let built = buildRequest(s);
      if (requestProblems(built).length) {
        s.transcript = repairTranscript(s.transcript);
        built = buildRequest(s);
      }
      const problems = requestProblems(built);
      if (problems.length) {
        handOff(run, `the conversation breaks the Messages API's rules and could not be repaired: ${problems.join('; ')}`);
        return null;
      }
      const reply = await acts.callModel({
        purpose: 'investigate',
        ...built,
        max_tokens: settings.maxTokens,
        extra: settings.thinking ? { thinking: { type: 'enabled', budget_tokens: 1024 }, context_management: contextManagementEdits(settings.keepRecent) } : undefined,
      });
      s.lastModelCallAt = Date.now();
      s.model = reply.model;
      const cost = costOf(reply.usage, settings.prices);
      s.totals = addUsage(s.totals, reply.usage);
      s.costUsd += cost;
      s.steps.push({ step: s.step, tools: toolUses(reply.content).map((u) => u.name), usage: reply.usage, cost_usd: cost, context_event: contextEvent });
      const message = assistantMessage(reply);
      if (message) appendAssistant(s.transcript, message);
      return reply;
    } catch (error) {
      if (!(error instanceof ActivityFailure)) throw error;
      handOff(run, `the model could not be asked: ${failureText(error)}`);
      return null;
    }
  };

  /** Runs one reply's consequences: tools, a continuation, the end of the turn, or a hand-over. */
  const afterReply = async (reply: ModelReply): Promise<void> => {
    const plan = planReply(reply);
    if (plan.kind !== 'empty') s.emptyReplies = 0;
    switch (plan.kind) {
      case 'run_tools': {
        const results: ToolResultBlockParam[] = [];
        let unavailable: string | undefined;
        for (const use of plan.uses) {
          const outcome = await runTool(run, use);
          unavailable ??= outcome.unavailable;
          results.push({ type: 'tool_result', tool_use_id: use.id, content: outcome.content, ...(outcome.is_error ? { is_error: true } : {}) });
        }
        s.transcript.push(toolResultMessage(results, drainInbox()));
        if (unavailable) handOff(run, unavailable);
        else publish(id, s);
        return;
      }
      case 'continue':
        if (plan.results.length) s.transcript.push(toolResultMessage(plan.results, drainInbox()));
        if (plan.shrinkContext) s.shrinkContext = true;
        return;
      case 'empty':
        s.emptyReplies += 1;
        if (s.emptyReplies > MAX_EMPTY_REPLIES) {
          handOff(run, `the model gave ${s.emptyReplies} empty replies in a row`);
          return;
        }
        appendUserText(s.transcript, [{ type: 'text', text: EMPTY_REPLY_NUDGE }]);
        return;
      case 'refused':
        handOff(run, `the model declined to answer${plan.text ? `: ${plan.text.slice(0, 300)}` : ''}`);
        return;
      case 'reply':
        s.lastReply = plan.text;
        s.awaiting = 'customer';
        return;
    }
  };

  const drainInbox = (): string[] => s.inbox.splice(0, s.inbox.length).map((m) => m.message);
  const mustContinueAsNew = () => workflowInfo().continueAsNewSuggested || stepsThisRun >= settings.maxStepsPerRun;
  const decisionReady = () => pendingDecision(s) !== undefined;

  // The conversation: turns of the customer, the model, people deciding refunds or taking over,
  // until the ticket closes.
  for (;;) {
    if (s.awaiting !== 'model') {
      publish(id, s);
      const waitFor = () => s.inbox.length > 0 || closeRequested || decisionReady() || s.awaiting === 'model';
      // A person's case, or one with a refund being decided, waits however long that takes (the
      // approval timer ends the latter); an answered one closes after the follow-up window.
      if (s.awaiting === 'person' || s.pending) await condition(waitFor);
      else await condition(waitFor, settings.followUpWindowMs);
      if (s.awaiting === 'customer' && !waitFor()) break;
      if (closeRequested && s.inbox.length === 0 && !decisionReady()) break;
    }

    const decision = pendingDecision(s);
    if (decision) {
      const settled = await settleDecision(run, decision);
      if ('failed' in settled) {
        handOff(run, settled.failed);
        continue;
      }
      appendUserText(s.transcript, [{ type: 'text', text: settled.note }]);
      s.awaiting = 'model';
    }
    if (s.inbox.length > 0) {
      resumeOnCustomerMessage(run);
      appendUserText(s.transcript, drainInbox().map(customerText));
      s.awaiting = 'model';
      s.turnSteps = 0;
    }
    if (s.awaiting !== 'model') continue;
    publish(id, s);

    if (mustContinueAsNew()) {
      await condition(allHandlersFinished);
      await continueAsNew<typeof investigation>({ ...input, carried: { ...s, runsSoFar: s.runsSoFar + 1 } });
    }

    if (s.turnSteps >= settings.maxSteps) {
      s.lastReply = STEP_CAP_REPLY;
      appendAssistant(s.transcript, { role: 'assistant', content: [{ type: 'text', text: STEP_CAP_REPLY }] });
      s.awaiting = 'customer';
      continue;
    }

    s.turnSteps += 1;
    const hadPending = s.pending !== null;
    const reply = await modelStep();
    if (reply) await afterReply(reply);
    if (!hadPending && s.pending) watch();
  }

  resolveOnClose(run);
  await closeCase(run);
  publish(id, s, true);
  return statusOf(id, s);

  /** Records the case; while it cannot be recorded, the run waits for a person to resume it. */
  async function closeCase(run: Run): Promise<void> {
    for (;;) {
      try {
        await recordOutcome(run);
        return;
      } catch (error) {
        if (!(error instanceof ActivityFailure)) throw error;
        log.error('the case could not be recorded; waiting for a person to resume', { error: failureText(error) });
        run.s.handOffs.push({ reason: `the case could not be recorded: ${failureText(error)}`, at: new Date().toISOString(), step: run.s.step, resolution: null });
        run.s.awaiting = 'person';
        publish(run.id, run.s);
        await condition(() => run.s.awaiting === 'model');
      }
    }
  }
}

/** Records the case after the conversation: the rest of the chat compacted into notes, then the outcome. */
async function recordOutcome(run: Run): Promise<void> {
  const { id, s, acts } = run;
  if (s.transcript.length === 0) return;
  const rest = liveTail(s);
  try {
    if (rest.length > 0) s.caseNotes = (await acts.compactConversation({ messages: rest, previous: s.caseNotes })).notes;
  } catch (error) {
    if (!(error instanceof ActivityFailure)) throw error;
    log.warn('the rest of the conversation could not be summarised; the case is recorded from the notes so far', { error: failureText(error) });
  }
  const notes = s.caseNotes;
  const decided = s.decisions.map((d) => `refund ${d.requestId} ${d.decision} by ${d.approver}`);
  await acts.recordCase({
    customerId: id.customerId,
    workflowId: id.workflowId,
    ticketId: id.ticketId,
    orderIds: notes?.order_ids ?? [],
    summary: notes?.customer_problem || 'Support case',
    resolution: [s.lastReply ?? '', ...decided].filter(Boolean).join(' | ').slice(0, 2000),
    closedOn: new Date().toISOString().slice(0, 10),
  });
}
