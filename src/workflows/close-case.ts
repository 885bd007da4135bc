import { patched, ActivityFailure, condition, log } from '@temporalio/workflow';
import { writeRetryMs } from './activities';
import { resumeByItself } from './hand-off';
import { countHandOff, recordCaseCost } from './case-metrics';
import { needsHumanNote } from './desk-notes';
import { compactionPlan, notesLogged, written } from './by-reference';
import { flushDeskPosts, queueNote } from './desk-posts';
import { publish, type Run } from './state';
import { failureText, isModelCallFailure } from './turn';

// Closing a case: the rest of the conversation summarised into case notes and the outcome
// recorded in the customer's memory. A case that cannot be recorded waits for a person.

/** A retried record waits for its summary too: the summary reads the transcript log, on the Postgres the record waited for. */
export const CLOSE_SUMMARY_WAITS_PATCH = 'close-summary-waits';

/** Records the case; while it cannot be recorded, a person is told and the write is retried until it succeeds. */
export async function closeCase(run: Run): Promise<void> {
  let waiting = false;
  for (;;) {
    try {
      await recordOutcome(run, waiting);
      recordCaseCost(run.s.costUsd);
      // Handed over only because the write failed: the write is done, so nobody needs to act.
      if (waiting) resumeByItself(run);
      return;
    } catch (error) {
      if (!(error instanceof ActivityFailure) && !isModelCallFailure(run, error)) throw error;
      if (!waiting) {
        log.error('the case could not be recorded; retrying, and waiting for a person meanwhile', { error: failureText(error) });
        const reason = `the case could not be recorded: ${failureText(error)}`;
        run.s.handOffs.push({ reason, at: new Date().toISOString(), step: run.s.step, resolution: null });
        countHandOff('record_failed');
        run.s.awaiting = 'person';
        queueNote(run, needsHumanNote({ workflowId: run.id.workflowId, reason }));
        publish(run.id, run.s);
        // The team hears of it on the ticket; a desk refusing too changes nothing: the case already waits for a person.
        await flushDeskPosts(run);
      }
      // Tried again on a timer; once the write succeeds the case carries on by itself.
      waiting = true;
      await condition(() => run.s.awaiting === 'model', writeRetryMs(run.settings));
    }
  }
}

/** Records the case after the conversation: the rest of the chat compacted into notes, then the outcome. */
async function recordOutcome(run: Run, retrying: boolean): Promise<void> {
  const { id, s, acts } = run;
  if (s.transcript.length === 0) return;
  try {
    const plan = compactionPlan(run, s.transcript.length);
    s.caseNotes = (await acts.compactFromLog(plan)).notes;
    // The skeleton stays: a case whose recording fails is retried from the same conversation.
    written(s, plan.entries);
    notesLogged(s, plan, s.caseNotes);
  } catch (error) {
    if (!isModelCallFailure(run, error)) throw error;
    // Retrying after a failed record (Postgres away): the summary is retried with it, not given up while the record goes through.
    if (retrying && patched(CLOSE_SUMMARY_WAITS_PATCH)) throw error;
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
