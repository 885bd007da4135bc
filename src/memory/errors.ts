import { BadInputError, NotFoundError } from '../errors';

/** A note id that is not one of this customer's notes (another customer's note looks the same). */
export class NoteNotFoundError extends NotFoundError {
  constructor(
    readonly noteId: number | string,
    readonly customerId: string,
  ) {
    super(`no note ${noteId} for customer ${customerId}`);
  }
}

/** Input memory cannot take (empty, oversized, sensitive, malformed); the message says what to fix. */
export class MemoryInputError extends BadInputError {}
