// The wire formats of casework's context: every prefix, tag, marker and placeholder the model,
// the offline investigator, the summariser and the benches read or write. One home each, so a
// change to how a block is labelled cannot leave a reader behind.

/** What a cleared tool result says instead of its content (docs/architecture.md: STUB). */
export const STUB = '[Older result cleared to save space. Call the tool again if you need it.]';

/** The label on every customer message in the transcript, so the model can tell it from tool output. */
export const CUSTOMER_PREFIX = 'Customer message:\n';

/** The tag around the customer's long-term memory block. */
export const MEMORY_TAG = 'customer_memory';

/** The tag around the agent's own notes in the first message. */
export const AGENT_NOTES_TAG = 'agent_notes';

/** The tag around the compacted case notes in the first message. */
export const CASE_NOTES_TAG = 'case_notes';

/** Said in place of the conversation's start when compaction left none and there are no notes. */
export const EARLIER_LEFT_OUT = '(The earlier part of this conversation is not shown.)';

/** Starts each ticket in what the bulk-read helper reads: "### ticket T-1001". */
export const TICKET_MARK = '### ticket ';

/** Starts the question line the bulk-read helper answers. */
export const QUESTION_PREFIX = 'Question: ';

/** Starts each entry of the transcript the summariser reads: "### customer", "### tool result get_order (id)". */
export const ENTRY_MARK = '### ';

/** A customer's words as the transcript labels them. */
export function labelCustomerText(message: string): string {
  return `${CUSTOMER_PREFIX}${message}`;
}

/** The customer's words of a labelled text, or undefined when the text is not a customer message. */
export function customerWords(text: string): string | undefined {
  return text.startsWith(CUSTOMER_PREFIX) ? text.slice(CUSTOMER_PREFIX.length) : undefined;
}

/** True when a tool result's text is the clearing placeholder. */
export function isClearedText(text: string): boolean {
  return text === STUB;
}

/** The label on the note that tells the model a refund request was decided. */
export const DECISION_PREFIX = 'Refund decision, recorded by casework:\n';

/** A decision note as the transcript labels it. */
export function labelDecisionNote(json: string): string {
  return `${DECISION_PREFIX}${json}`;
}

/** The label on the note that tells the model a money-moving MCP call was decided (and, when approved, what it answered). */
export const MCP_DECISION_PREFIX = 'Decision on a money-moving tool call, recorded by casework:\n';

/** An MCP decision note as the transcript labels it. */
export function labelMcpDecisionNote(json: string): string {
  return `${MCP_DECISION_PREFIX}${json}`;
}
