import { ActivityFailure, allHandlersFinished, condition, continueAsNew, log, patched, setHandler, workflowInfo } from '@temporalio/workflow';
import { appendAssistant, appendUserText } from '../context/replies';
import { customerText } from '../context/transcript';
import type { InboxMessage, InvestigationInput, InvestigationStatus } from '../schemas/investigation';
import { activitiesFor } from './activities';
import { closeCase } from './close-case';
import { caseClosedNote } from './desk-notes';
import { flushDeskPosts, hasPendingPosts, queueNote, queueReply, startDeskPosts } from './desk-posts';
import { handOff, installHandOffHandlers, resolveOnClose, resumeByItself, resumeOnCustomerMessage } from './hand-off';
import { writeRetryMs } from './activities';
import { carriedStateQuery, closeTicketSignal, customerMessageSignal, statusQuery } from './investigation-api';
import { markRecovered } from './recovery';
import { handOverFailedRefunds, hasUnreportedFailure, installRefundFailureHandler, REFUND_FAILURE_REOPENS_PATCH } from './refund-failures';
import { loadMcpOffers } from './mcp-tools';
import { installDecisionHandlers, pendingDecision, settleDecision, watchApproval } from './refund-approval';
import { publish, startingState, statusOf, type Run } from './state';
import { afterReply, failureText, modelStep } from './turn';
import { carriedByReference, logState } from './by-reference';

/** What the customer is told when the step cap ends a turn. */
const STEP_CAP_REPLY = 'I have not been able to finish looking into this within my step limit, so I have passed your case to a colleague, who will reply to you here.';

/**
 * One support investigation, `investigation-<ticketId>`. The workflow's history and the
 * transcript log are the task state: every message is kept word for word in the log, the
 * workflow carries a lean skeleton of the live tail, and each model call gets only the lean
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
  // A run started over a closed one numbers its entries after what the earlier runs wrote (the input says from where).
  logState(run.s, input.logFrom);
  if (settings.cacheSchedule) run.cacheSchedule = settings.cacheSchedule;
  const { id, s, acts } = run;
  let closeRequested = false;
  let stepsThisRun = 0;

  setHandler(statusQuery, () => statusOf(id, s));
  setHandler(carriedStateQuery, () => s);
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
  startDeskPosts(run, input);
  installDecisionHandlers(s);
  installHandOffHandlers(run);
  installRefundFailureHandler(run);
  const watch = () => void watchApproval(s, settings);
  if (s.pending) watch();
  if (input.recovered) markRecovered(run, input.recovered);

  // A recovered run whose broken predecessor never loaded the customer's memory loads it now.
  if (!input.carried || (input.recovered && s.memoryBlock === null)) {
    publish(id, s);
    // The first event may be any ticket event (signal-with-start): wait for the customer's words,
    // or, for a closed case reopened because its refund failed at the provider, that failure.
    const failureReopens = patched(REFUND_FAILURE_REOPENS_PATCH);
    await condition(() => s.inbox.length > 0 || closeRequested || (failureReopens && hasUnreportedFailure(s)));
    try {
      s.memoryBlock = (await acts.loadMemory({ customerId: id.customerId, now: new Date().toISOString(), message: s.inbox[0]?.message })).block;
    } catch (error) {
      if (!(error instanceof ActivityFailure)) throw error;
      // Memory helps; it is not worth a customer's wait: the investigation goes on without it.
      log.warn('customer memory could not be loaded; investigating without it', { error: failureText(error) });
    }
  }

  // The MCP tools the run offers, recorded once (a continuation carries them).
  await loadMcpOffers(run);

  const drainInbox = (): string[] => s.inbox.splice(0, s.inbox.length).map((m) => m.message);
  const mustContinueAsNew = () => workflowInfo().continueAsNewSuggested || stepsThisRun >= settings.maxStepsPerRun;
  // A decision blocked on a failed write is retried on a timer (or when someone acts), not at once.
  const decisionReady = () => pendingDecision(s) !== undefined && !s.settleBlocked;
  let retrySettle = false;
  /** Posts what the turn queued for the desk; a desk that refuses for good hands the case to a person. */
  const postToDesk = async () => {
    const refused = await flushDeskPosts(run);
    if (refused) handOff(run, 'desk_refused', refused, { deskRefused: true });
  };

  // The conversation: turns of the customer, the model, people deciding refunds or taking over,
  // until the ticket closes.
  for (;;) {
    // A refund the provider reported failed goes to a person before anything else is said.
    handOverFailedRefunds(run);
    if (s.awaiting !== 'model') {
      await postToDesk();
      publish(id, s);
      // A post queued while waiting (a person's reply, a re-queued refused post) wakes the loop to send it.
      const waitFor = () => s.inbox.length > 0 || closeRequested || decisionReady() || s.awaiting === 'model' || hasPendingPosts(run) || hasUnreportedFailure(s);
      // A person's case, or one with a refund being decided, waits however long that takes (the
      // approval timer ends the latter); an answered one closes after the follow-up window.
      if (s.settleBlocked) retrySettle = !(await condition(waitFor, writeRetryMs(settings)));
      else if (s.awaiting === 'person' || s.pending) await condition(waitFor);
      else await condition(waitFor, settings.followUpWindowMs);
      if (s.awaiting === 'customer' && !waitFor() && !s.settleBlocked) break;
      // An accepted decision is never dropped: a ticket closing while it waits on a write still settles it first.
      if (closeRequested && s.inbox.length === 0 && !decisionReady() && !s.settleBlocked) break;
    }

    const decision = pendingDecision(s);
    if (decision && (!s.settleBlocked || retrySettle || closeRequested)) {
      retrySettle = false;
      const settled = await settleDecision(run, decision);
      if ('blocked' in settled) {
        // Told once: the customer gets the holding reply and the team a note; the retries are silent.
        if (!s.settleBlocked) handOff(run, 'decision_failed', `${settled.blocked}; casework retries it and carries on by itself once it succeeds`);
        s.settleBlocked = decision.requestId;
        continue;
      }
      if (s.settleBlocked) {
        s.settleBlocked = undefined;
        resumeByItself(run);
      }
      if ('failed' in settled) {
        handOff(run, 'decision_failed', settled.failed);
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
      // The recovery was this run's; its continuation only carries the record of it (s.recoveries).
      await continueAsNew<typeof investigation>({
        ticketId: input.ticketId,
        customerId: input.customerId,
        settings,
        carried: { ...carriedByReference(s), runsSoFar: s.runsSoFar + 1 },
      });
    }

    if (s.turnSteps >= settings.maxSteps) {
      s.lastReply = STEP_CAP_REPLY;
      appendAssistant(s.transcript, { role: 'assistant', content: [{ type: 'text', text: STEP_CAP_REPLY }] });
      queueReply(run, STEP_CAP_REPLY);
      s.awaiting = 'customer';
      continue;
    }

    s.turnSteps += 1;
    const hadPending = s.pending !== null;
    stepsThisRun += 1;
    const reply = await modelStep(run);
    if (reply) await afterReply(run, reply, drainInbox);
    if (!hadPending && s.pending) watch();
  }

  resolveOnClose(run);
  await closeCase(run);
  // A case casework closes (the follow-up window passed) closes the desk ticket too; one the desk closed is left as the desk set it.
  if (!closeRequested && run.postsToDesk) queueNote(run, caseClosedNote());
  await postToDesk();
  publish(id, s, true);
  return statusOf(id, s);
}
