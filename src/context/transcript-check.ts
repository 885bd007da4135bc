import type { ContentBlockParam, MessageParam, ToolResultBlockParam } from '@anthropic-ai/sdk/resources/messages';
import { countBreakpoints, MAX_BREAKPOINTS, type CacheableParts } from './cache-breakpoints';

// The Messages API's rules for a conversation, checked in code before every model call: a
// request that breaks one is a bug casework repairs or reports, never a request it sends.
//   - the first message is the user's, and roles alternate;
//   - no message, and no text block, is empty;
//   - every tool_use is answered by a tool_result with its id in the very next user message,
//     tool results first in it, and no tool_result answers a tool_use that is not there;
//   - at most MAX_BREAKPOINTS cache_control breakpoints in the whole request.
// A transcript may end with the assistant: a paused or cut-off reply is continued from there.

function blocksOf(message: MessageParam): ContentBlockParam[] {
  return typeof message.content === 'string' ? [{ type: 'text', text: message.content }] : message.content;
}

function isEmptyContent(message: MessageParam): boolean {
  return typeof message.content === 'string' ? message.content.trim() === '' : message.content.length === 0;
}

/** The tool_use ids of an assistant message, in order. */
export function toolUseIdsOf(message: MessageParam): string[] {
  return message.role === 'assistant' ? blocksOf(message).flatMap((b) => (b.type === 'tool_use' ? [b.id] : [])) : [];
}

/** Every rule the messages break, as sentences naming the message; empty when valid. */
export function transcriptProblems(messages: readonly MessageParam[]): string[] {
  const problems: string[] = [];
  if (messages.length === 0) return ['the conversation has no messages'];
  if (messages[0]?.role !== 'user') problems.push('message 0: the conversation must start with the user');
  messages.forEach((message, i) => {
    const previous = messages[i - 1];
    if (previous && previous.role === message.role) problems.push(`message ${i}: two ${message.role} messages in a row`);
    if (isEmptyContent(message)) problems.push(`message ${i}: empty content`);
    const blocks = blocksOf(message);
    blocks.forEach((block, j) => {
      if (block.type === 'text' && block.text.trim() === '') problems.push(`message ${i}, block ${j}: empty text`);
      if (block.type === 'tool_result' && message.role !== 'user') problems.push(`message ${i}: a tool_result outside a user message`);
    });
    const expected = previous ? toolUseIdsOf(previous) : [];
    const results = blocks.filter((b): b is ToolResultBlockParam => b.type === 'tool_result');
    if (message.role === 'user') {
      const leading = blocks.slice(0, expected.length);
      const leadingIds = leading.map((b) => (b.type === 'tool_result' ? b.tool_use_id : undefined));
      for (const id of expected) {
        if (!leadingIds.includes(id)) problems.push(`message ${i}: tool_use ${id} is not answered by a tool_result first in the next user message`);
      }
      for (const result of results) {
        if (!expected.includes(result.tool_use_id)) problems.push(`message ${i}: tool_result ${result.tool_use_id} answers no tool_use of the message before`);
      }
      const ids = results.map((r) => r.tool_use_id);
      if (new Set(ids).size !== ids.length) problems.push(`message ${i}: a tool_use is answered twice`);
    }
  });
  const last = messages[messages.length - 1];
  if (last && toolUseIdsOf(last).length > 0) problems.push(`message ${messages.length - 1}: its tool_use blocks have no tool_result yet`);
  return problems;
}

/** Every rule a whole request breaks: its messages, and its cache breakpoints. */
export function requestProblems(request: CacheableParts): string[] {
  const problems = transcriptProblems(request.messages);
  const breakpoints = countBreakpoints(request);
  if (breakpoints > MAX_BREAKPOINTS) problems.push(`the request has ${breakpoints} cache breakpoints; at most ${MAX_BREAKPOINTS} are allowed`);
  return problems;
}

/** The tool_result that answers a tool_use casework did not run. */
export function notRunResult(id: string, why: string): ToolResultBlockParam {
  return { type: 'tool_result', tool_use_id: id, content: why, is_error: true };
}

/** Why a repaired tool_use has an error result. */
export const NOT_RUN = 'This tool call was not run, so it has no result.';

/**
 * A copy of the messages that keeps the API's rules, changing as little as it can: empty
 * messages and empty text blocks are dropped, messages of the same role in a row are merged
 * (as the API itself would read them), a tool_use without its result gets an error result
 * first in the next user message, and a tool_result that answers nothing is dropped. Words the
 * customer, the model or a tool wrote are never changed.
 */
export function repairTranscript(messages: readonly MessageParam[]): MessageParam[] {
  const kept: MessageParam[] = [];
  for (const message of messages) {
    const blocks = blocksOf(message).filter((b) => !(b.type === 'text' && b.text.trim() === ''));
    if (blocks.length === 0) continue;
    const last = kept[kept.length - 1];
    if (last && last.role === message.role) {
      kept[kept.length - 1] = { role: message.role, content: [...blocksOf(last), ...blocks] } as MessageParam;
    } else {
      kept.push({ role: message.role, content: blocks } as MessageParam);
    }
  }
  if (kept[0]?.role === 'assistant') kept.unshift({ role: 'user', content: [{ type: 'text', text: '(The start of this conversation is not shown.)' }] });
  const repaired: MessageParam[] = [];
  for (const message of kept) {
    const previous = repaired[repaired.length - 1];
    const expected = previous ? toolUseIdsOf(previous) : [];
    if (message.role === 'assistant') {
      if (expected.length) repaired.push({ role: 'user', content: expected.map((id) => notRunResult(id, NOT_RUN)) });
      repaired.push(message);
      continue;
    }
    const blocks = blocksOf(message);
    const results = new Map(blocks.flatMap((b) => (b.type === 'tool_result' && expected.includes(b.tool_use_id) ? [[b.tool_use_id, b] as const] : [])));
    const rest = blocks.filter((b) => b.type !== 'tool_result');
    const lead = expected.map((id) => results.get(id) ?? notRunResult(id, NOT_RUN));
    const content = [...lead, ...rest];
    if (content.length) repaired.push({ role: 'user', content });
  }
  const last = repaired[repaired.length - 1];
  const open = last ? toolUseIdsOf(last) : [];
  if (open.length) repaired.push({ role: 'user', content: open.map((id) => notRunResult(id, NOT_RUN)) });
  return repaired;
}
