import type { ContentBlockParam, MessageParam, ToolResultBlockParam, ToolUseBlock } from '@anthropic-ai/sdk/resources/messages';
import type { ModelReply } from '../schemas/model';
import { notRunResult } from './transcript-check';
import { replyText, toParams, toolUses } from './transcript';

// What the workflow does with each reply the Messages API documents, decided in one pure
// function so every stop reason keeps the transcript valid for the next request
// (docs/architecture.md, "Model replies"):
//   end_turn, stop_sequence   the turn is over; its text is the reply to the customer
//   tool_use                  run every tool_use block; all results lead the next user message
//   pause_turn                send the reply back as it is and call again: the model goes on
//                             (tool calls it holds run first)
//   max_tokens                a cut-off tool_use is never run: it is answered with an error
//                             saying so, and the model calls again with more room to spare;
//                             cut-off text is continued the same way as a paused turn
//   model_context_window_exceeded  as max_tokens, and the context is shrunk before the next call
//   refusal                   the model declined: a person takes the case over
//   empty content             nothing is stored (the API refuses empty messages); the step is
//                             asked again, up to a limit, then a person takes over
// Thinking, redacted thinking and block types casework does not know are kept exactly as
// returned.

/** What a tool_use cut off by max_tokens is answered with. */
export const CUT_OFF_TOOL_USE =
  'This tool call was cut off by the reply length limit (max_tokens), so its input may be incomplete and it was not run. Call the tool again with shorter input.';

/** Said to the model when its reply was empty. */
export const EMPTY_REPLY_NUDGE = 'Your last reply was empty. Reply to the customer, or call a tool.';

/** What happens next, after one reply. */
export type ReplyPlan =
  /** Run these tools; their results lead the next user message. */
  | { kind: 'run_tools'; uses: ToolUseBlock[] }
  /** The reply was cut off or paused: store what came and call the model again at once. */
  | { kind: 'continue'; results: ToolResultBlockParam[]; shrinkContext: boolean }
  /** The turn is over; `text` is the reply to the customer. */
  | { kind: 'reply'; text: string }
  /** Nothing came back: ask again (the caller counts these). */
  | { kind: 'empty' }
  /** The model declined to answer: a person takes over. */
  | { kind: 'refused'; text: string };

/** The assistant message to store for a reply, or null when the reply holds nothing to store. */
export function assistantMessage(reply: ModelReply): MessageParam | null {
  const content = toParams(reply.content).filter((b) => !(b.type === 'text' && b.text.trim() === ''));
  return content.length ? { role: 'assistant', content } : null;
}

/** Decides what a reply means for the conversation. Pure. */
export function planReply(reply: ModelReply): ReplyPlan {
  const uses = toolUses(reply.content);
  const text = replyText(reply.content);
  const stored = assistantMessage(reply) !== null;
  switch (reply.stop_reason) {
    case 'tool_use':
      if (uses.length) return { kind: 'run_tools', uses };
      return stored && text ? { kind: 'reply', text } : { kind: 'empty' };
    case 'pause_turn':
      if (!stored) return { kind: 'empty' };
      // A paused turn's own tool calls are complete: they run before the turn goes on.
      if (uses.length) return { kind: 'run_tools', uses };
      return { kind: 'continue', results: [], shrinkContext: false };
    case 'max_tokens':
    case 'model_context_window_exceeded': {
      const shrinkContext = reply.stop_reason === 'model_context_window_exceeded';
      if (!stored) return shrinkContext ? { kind: 'continue', results: [], shrinkContext } : { kind: 'empty' };
      // Only the last block can have been cut off, but a reply that ran out of room is not
      // trusted to act: none of its tool calls run.
      return { kind: 'continue', results: uses.map((u) => notRunResult(u.id, CUT_OFF_TOOL_USE)), shrinkContext };
    }
    case 'refusal':
      return { kind: 'refused', text };
    default:
      // end_turn, stop_sequence, null, or a stop reason newer than this code.
      if (uses.length) return { kind: 'run_tools', uses };
      return text ? { kind: 'reply', text } : { kind: 'empty' };
  }
}

/**
 * Appends an assistant message to the transcript. After a paused or cut-off reply the
 * transcript already ends with the assistant: the continuation joins that message, so roles
 * keep alternating (the API reads consecutive assistant messages as one turn anyway).
 */
export function appendAssistant(transcript: MessageParam[], message: MessageParam): void {
  const last = transcript[transcript.length - 1];
  if (last?.role === 'assistant' && Array.isArray(last.content)) {
    transcript[transcript.length - 1] = { role: 'assistant', content: [...last.content, ...(message.content as ContentBlockParam[])] };
  } else {
    transcript.push(message);
  }
}

/**
 * Adds text blocks for the model to the next user message: to the last message when it is
 * the user's (after tool results, which stay first), or as a new user message.
 */
export function appendUserText(transcript: MessageParam[], blocks: ContentBlockParam[]): void {
  if (blocks.length === 0) return;
  const last = transcript[transcript.length - 1];
  if (last?.role === 'user') {
    const content: ContentBlockParam[] = typeof last.content === 'string' ? [{ type: 'text', text: last.content }] : last.content;
    transcript[transcript.length - 1] = { role: 'user', content: [...content, ...blocks] };
  } else {
    transcript.push({ role: 'user', content: blocks });
  }
}
