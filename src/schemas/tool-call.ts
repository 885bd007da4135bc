import { CaseworkError, type ErrorKind } from '../errors';
import type { LogTarget } from './transcript-log';

/** Who a tool call is for. `customerId` is the authenticated customer from the ticket event. */
export interface ToolContext {
  customerId: string;
  ticketId: string;
  workflowId: string;
  toolUseId: string;
}

/** One tool call as the workflow hands it to its activity. `input` is validated in the activity. */
export interface ToolCall {
  name: string;
  input: unknown;
  context: ToolContext;
  /** Set when the activity writes its whole result to the transcript log itself and returns a preview (history by reference). */
  log?: LogTarget;
}

/** A tool's answer, ready to become a `tool_result` block. */
export interface ToolOutcome {
  content: string;
  is_error: boolean;
  /** Set when the activity wrote the whole result to the transcript log and `content` is its preview. */
  logged?: { seq: number; tokens: number };
}

/** A tool's answer with its result as an object too, for tools whose caller reads it (request_refund). */
export type TypedToolOutcome<R> = { is_error: false; content: string; result: R } | { is_error: true; content: string };

/**
 * A failure the model should see and can act on (unknown order, refund not approved): it becomes a
 * `tool_result` with `is_error: true` instead of failing the activity. Other errors retry.
 */
export class ToolError extends CaseworkError {
  constructor(message: string, kind: ErrorKind = 'refused') {
    super(kind, message);
  }
}
