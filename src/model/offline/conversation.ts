import type { ContentBlockParam, MessageParam } from '@anthropic-ai/sdk/resources/messages';
import { CUSTOMER_PREFIX, DECISION_PREFIX, STUB } from '../../context/wire';

/** A tool input or result field as text: strings and numbers as they are, objects as JSON, nothing as `fallback`. */
export function asText(value: unknown, fallback = ''): string {
  if (value === undefined || value === null) return fallback;
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return String(value);
  return JSON.stringify(value) ?? fallback;
}

/** One tool call the model made, with its result if visible. */
export interface SeenCall {
  id: string;
  name: string;
  input: Record<string, unknown>;
  /** Parsed JSON result, the raw text when it is not JSON, or undefined while unanswered. */
  result?: unknown;
  isError: boolean;
  cleared: boolean;
}

/** What the offline investigator can read from one request: the customer's words, calls, blocks. */
export interface ConversationView {
  /** Text of the customer's messages in the current turn (since the last reply), in order. */
  turnMessages: string[];
  /** Every customer message visible, oldest first. */
  allMessages: string[];
  /** Calls made in the current turn, oldest first. */
  turnCalls: SeenCall[];
  /** Every call visible in the request, oldest first. */
  calls: SeenCall[];
  /** The labelled memory, notes and case-notes blocks of the first message, joined. */
  contextBlocks: string;
  /** How many replies to the customer (assistant end-of-turn texts) are visible. */
  repliesSoFar: number;
}

function blocks(message: MessageParam): ContentBlockParam[] {
  return typeof message.content === 'string' ? [{ type: 'text', text: message.content }] : message.content;
}

function parseResult(content: unknown): { value: unknown; cleared: boolean } {
  const text =
    typeof content === 'string'
      ? content
      : Array.isArray(content)
        ? content.map((b) => (b && typeof b === 'object' && 'text' in b ? String((b as { text: unknown }).text) : '')).join('')
        : '';
  if (text === STUB) return { value: undefined, cleared: true };
  try {
    return { value: JSON.parse(text), cleared: false };
  } catch {
    return { value: text, cleared: false };
  }
}

/** Reads a Messages request as the offline investigator sees it. Pure. */
export function readConversation(messages: MessageParam[]): ConversationView {
  const calls: SeenCall[] = [];
  const byId = new Map<string, SeenCall>();
  const allMessages: string[] = [];
  let turnStartCall = 0;
  let turnMessages: string[] = [];
  // A refund decision continues the turn that asked for it (the reply in between said a
  // colleague is reviewing it), so the turn is restored to where it was before that reply.
  let before = { turnStartCall, turnMessages, repliesSoFar: 0 };
  let contextBlocks = '';
  let repliesSoFar = 0;
  messages.forEach((message, index) => {
    const content = blocks(message);
    if (message.role === 'assistant') {
      const uses = content.filter((b) => b.type === 'tool_use');
      if (uses.length === 0) {
        before = { turnStartCall, turnMessages, repliesSoFar };
        repliesSoFar += 1;
        turnMessages = [];
        turnStartCall = calls.length;
      }
      for (const use of uses) {
        if (use.type !== 'tool_use') continue;
        const call: SeenCall = { id: use.id, name: use.name, input: (use.input ?? {}) as Record<string, unknown>, isError: false, cleared: false };
        calls.push(call);
        byId.set(use.id, call);
      }
      return;
    }
    for (const block of content) {
      if (block.type === 'tool_result') {
        const call = byId.get(block.tool_use_id);
        if (!call) continue;
        const parsed = parseResult(block.content);
        call.result = parsed.value;
        call.cleared = parsed.cleared;
        call.isError = Boolean(block.is_error);
      } else if (block.type === 'text') {
        if (block.text.startsWith(DECISION_PREFIX)) {
          const note = parseResult(block.text.slice(DECISION_PREFIX.length)).value as Record<string, unknown> | undefined;
          const request = calls.find((c) => c.name === 'request_refund' && !c.isError && (c.cleared || (c.result as { request_id?: unknown })?.request_id === note?.request_id));
          if (note && request) {
            request.result = { ...(request.result ?? {}), ...note };
            request.cleared = false;
            const refund = note.refund as Record<string, unknown> | null;
            if (refund) {
              const paid: SeenCall = {
                id: `decision-${String(note.request_id)}`,
                name: 'issue_refund',
                input: { request_id: note.request_id },
                result: { ...refund, request_id: note.request_id },
                isError: false,
                cleared: false,
              };
              calls.push(paid);
            }
            ({ turnStartCall, turnMessages, repliesSoFar } = before);
          }
        } else if (block.text.startsWith(CUSTOMER_PREFIX)) {
          const text = block.text.slice(CUSTOMER_PREFIX.length);
          allMessages.push(text);
          turnMessages.push(text);
        } else if (index === 0) {
          contextBlocks += `${block.text}\n`;
        }
      }
    }
  });
  return { turnMessages, allMessages, turnCalls: calls.slice(turnStartCall), calls, contextBlocks, repliesSoFar };
}

/** The latest visible, uncleared, successful result of a tool (optionally for an order). */
export function latestResult<T = Record<string, unknown>>(calls: SeenCall[], name: string, orderId?: string): T | undefined {
  for (const call of [...calls].reverse()) {
    if (call.name !== name || call.isError || call.cleared || call.result === undefined) continue;
    if (orderId !== undefined && call.input.order_id !== undefined && asText(call.input.order_id) !== orderId) continue;
    return call.result as T;
  }
  return undefined;
}

/** True when the tool was called (answered, cleared or failed) in these calls, optionally for an order. */
export function called(calls: SeenCall[], name: string, orderId?: string): boolean {
  return calls.some((c) => c.name === name && (orderId === undefined || asText(c.input.order_id) === orderId));
}
