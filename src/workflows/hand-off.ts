import { log, setHandler } from '@temporalio/workflow';
import { countHandOff, type HandOffKind } from './case-metrics';
import { needsHumanNote } from './desk-notes';
import { appendAssistant, appendUserText } from '../context/replies';
import { repairTranscript } from '../context/transcript-check';
import { queueNote, queueReply, requeueRefused } from './desk-posts';
import { humanReplyUpdate, resumeUpdate } from './investigation-api';
import { openHandOff, publish, type Run } from './state';

// needs_human: when something cannot be retried (a model error, an outage past its budget, a
// transcript the code cannot repair), the investigation does not fail. It records what went
// wrong, tells the customer honestly that a colleague will pick the case up, keeps the whole
// transcript, and waits in the same run for a person (`casework resume` / `casework reply`),
// the customer's next message, or the ticket's close.

/** What the customer is told when a person takes the case over. */
export const HOLDING_REPLY =
  'Thank you for your patience. I could not finish looking into this myself, so I have passed your case to a colleague, who will pick it up and reply to you here.';

/** How a hand-over's reason starts when the reply it follows was held back from the customer (the console reads it). */
export const REPLY_HELD_REASON = 'a reply was held back';

/** How a hand-over's reason starts when the model declined: its words were not sent (the console reads it). */
export const MODEL_DECLINED_REASON = 'the model declined to answer';

/**
 * Hands the case to a person: records why, tells the customer (and the team, in an internal
 * note on the desk ticket), and waits for a person. When the desk itself refused casework's
 * posts (`deskRefused`), nothing more is queued for it: the status, the memo and the log say so.
 */
export function handOff(run: Run, kind: HandOffKind, reason: string, options: { deskRefused?: boolean } = {}): void {
  const { s } = run;
  log.warn('investigation needs a person', { kind, reason, step: s.step });
  countHandOff(kind);
  s.handOffs.push({ reason, at: new Date().toISOString(), step: s.step, resolution: null });
  // Any tool_use left without its result is answered, so the transcript stays valid.
  s.transcript = repairTranscript(s.transcript);
  appendAssistant(s.transcript, { role: 'assistant', content: [{ type: 'text', text: HOLDING_REPLY }] });
  s.lastReply = HOLDING_REPLY;
  s.awaiting = 'person';
  if (!options.deskRefused) {
    queueReply(run, HOLDING_REPLY);
    queueNote(run, needsHumanNote({ workflowId: run.id.workflowId, reason }));
  }
  publish(run.id, s);
}

/** Closes the open hand-over with what the person did. */
function resolve(run: Run, by: string, action: 'resumed' | 'replied' | 'closed'): void {
  const open = openHandOff(run.s);
  if (open) open.resolution = { by, action, at: new Date().toISOString() };
  // Whatever the desk refused goes out again now that a person has looked (e.g. fixed the credentials).
  if (action !== 'closed') requeueRefused(run);
}

/** The hand-over ends because the customer wrote again: the model tries once more. */
export function resumeOnCustomerMessage(run: Run): void {
  if (run.s.awaiting === 'person') resolve(run, 'customer', 'resumed');
}

/** The hand-over ends because the write it waited on succeeded: casework carries on by itself. */
export function resumeByItself(run: Run): void {
  if (run.s.awaiting === 'person') resolve(run, 'casework', 'resumed');
}

/** The hand-over ends because the ticket closed. */
export function resolveOnClose(run: Run): void {
  if (openHandOff(run.s)) resolve(run, 'ticket closed', 'closed');
}

const mustBeWaiting = (run: Run) => {
  if (run.s.awaiting !== 'person') throw new Error('this investigation is not waiting for a person; nothing to resume or answer');
};

/** Registers `resume` (try again) and `reply` (a person answers the customer), both validated updates. */
export function installHandOffHandlers(run: Run): void {
  setHandler(
    resumeUpdate,
    ({ by, note }) => {
      resolve(run, by, 'resumed');
      const words = note?.trim() ? ` They wrote: ${note.trim()}` : '';
      appendUserText(run.s.transcript, [{ type: 'text', text: `(casework: ${by}, a colleague, asked you to carry on with this case.${words})` }]);
      run.s.awaiting = 'model';
      run.s.turnSteps = 0;
      publish(run.id, run.s);
      return { resumed: true as const };
    },
    {
      validator: ({ by }) => {
        if (typeof by !== 'string' || !by.trim()) throw new Error('by is required: who resumes the case');
        mustBeWaiting(run);
      },
    },
  );
  setHandler(
    humanReplyUpdate,
    ({ by, text }) => {
      resolve(run, by, 'replied');
      appendAssistant(run.s.transcript, { role: 'assistant', content: [{ type: 'text', text }] });
      run.s.lastReply = text;
      run.s.awaiting = 'customer';
      // A person has answered: the ticket now waits on the customer, as after casework's own reply.
      queueReply(run, text, run.s.pending ? undefined : 'awaiting_customer');
      publish(run.id, run.s);
      return { replied: true as const };
    },
    {
      validator: ({ by, text }) => {
        if (typeof by !== 'string' || !by.trim()) throw new Error('by is required: who writes the reply');
        if (typeof text !== 'string' || !text.trim()) throw new Error('text is required: the reply to the customer');
        mustBeWaiting(run);
      },
    },
  );
}
