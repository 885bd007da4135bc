import { log } from '@temporalio/workflow';
import { appendUserText } from '../context/replies';
import { repairTranscript } from '../context/transcript-check';
import type { RecoveredFrom } from '../schemas/investigation';
import { publish, type Run } from './state';

// A run that FAILED, was TERMINATED or TIMED_OUT is a bug: casework turns what it expects into
// needs_human, not a broken run. The ticket's next event starts a new run carrying what could
// be read of the broken one (client/recovery.ts). This run says so where everyone looks: the
// status (recoveredFrom), a warning log, the next step's context event, and a note to the model
// so its reply does not pretend nothing happened.

/** What the model is told in the conversation when its run was recovered. */
export function recoveryNote(from: RecoveredFrom): string {
  const what =
    from.transcript === 'unavailable'
      ? 'The earlier conversation could not be recovered: if what the customer needs is not clear from their message, ask them to say it again, and apologise for the trouble.'
      : from.transcript === 'from_history'
        ? 'The conversation above was rebuilt from the record of the stopped run; a step in progress when it stopped may be missing, so check before relying on it.'
        : 'The conversation above is complete up to where it stopped.';
  return (
    `(casework: this investigation stopped unexpectedly (its run was ${from.runStatus}) and was recovered when the customer wrote again. ${what} ` +
    'Tell the customer plainly that there was a delay on our side; do not act as if nothing happened.)'
  );
}

/** Marks the run as recovered: recorded, logged, shown to the model; the transcript is made valid first. */
export function markRecovered(run: Run, from: RecoveredFrom): void {
  const { s } = run;
  log.warn('investigation recovered from a broken run', { fromRunId: from.runId, runStatus: from.runStatus, transcript: from.transcript });
  s.recoveries.push(from);
  // The broken run may have stopped between a tool_use and its result.
  s.transcript = repairTranscript(s.transcript);
  appendUserText(s.transcript, [{ type: 'text', text: recoveryNote(from) }]);
  s.contextEventDue = `recovered from ${from.runStatus} run ${from.runId} (transcript ${from.transcript.replace('_', ' ')})`;
  // What the broken run was doing is lost with it; the customer's new message starts the next turn.
  if (s.awaiting === 'model') s.awaiting = 'customer';
  s.turnSteps = 0;
  s.emptyReplies = 0;
  publish(run.id, s);
}
