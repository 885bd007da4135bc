import { BadInputError } from '../errors';
import { z } from 'zod';
import { issueList } from './issues';
import { idProblem, isInvisible, textProblem } from './text';

/** Largest customer message accepted in one ticket event, in characters. */
export const MAX_MESSAGE_CHARS = 20_000;

/** The kinds of ticket event casework reacts to. */
export const TicketEventType = z.enum(['ticket.created', 'ticket.message', 'ticket.closed']);

/** An id string that is not blank and holds only bytes Postgres stores as sent (schemas/text.ts). */
function storableId(schema: z.ZodString) {
  return schema.superRefine((value, ctx) => {
    const problem = idProblem(value);
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  });
}

/**
 * A support-ticket event from the ticketing system. `customerId` is the customer the
 * ticketing system authenticated; casework never takes a customer id from message text.
 */
export const TicketEvent = z.object({
  eventId: storableId(z.string().min(1).max(200)),
  type: TicketEventType,
  ticketId: z.string().regex(/^[A-Za-z0-9_-]{1,100}$/, 'letters, digits, "-" and "_" only (1-100 characters)'),
  customerId: storableId(z.string().min(1).max(100)),
  message: z
    .string()
    .max(MAX_MESSAGE_CHARS, `at most ${MAX_MESSAGE_CHARS} characters`)
    .superRefine((value, ctx) => {
      const problem = textProblem(value);
      if (problem) ctx.addIssue({ code: 'custom', message: problem });
    })
    .default(''),
  receivedAt: z.iso.datetime({ offset: true }),
});
/** A validated ticket event. */
export type TicketEvent = z.infer<typeof TicketEvent>;

/** Raised when an event fails validation; `issues` names each bad field. */
export class InvalidEventError extends BadInputError {
  constructor(readonly issues: string[]) {
    super(`invalid ticket event: ${issues.join('; ')}`);
  }
}

/** Parses an unknown value as a ticket event, or throws InvalidEventError naming the bad fields. */
export function parseTicketEvent(value: unknown): TicketEvent {
  const parsed = TicketEvent.safeParse(value);
  if (!parsed.success) throw new InvalidEventError(issueList(parsed.error, '(event)'));
  if (parsed.data.type !== 'ticket.closed' && parsed.data.message.trim() === '') {
    throw new InvalidEventError(['message: must not be empty for ' + parsed.data.type]);
  }
  // Zero-width characters and exotic blanks are text to zod but nothing to the customer or the model.
  if (parsed.data.type !== 'ticket.closed' && isInvisible(parsed.data.message)) {
    throw new InvalidEventError([`message: holds only invisible characters (zero-width or blank), nothing to answer for ${parsed.data.type}`]);
  }
  return parsed.data;
}

/** The workflow id of the investigation for a ticket. */
export function investigationId(ticketId: string): string {
  return `investigation-${ticketId}`;
}

/** The ticket an investigation's workflow id names (investigationId's inverse); undefined for any other workflow id. */
export function ticketIdOf(workflowId: string): string | undefined {
  const prefix = investigationId('');
  return workflowId.startsWith(prefix) ? workflowId.slice(prefix.length) : undefined;
}
