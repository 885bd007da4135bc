import type { MessageParam } from '@anthropic-ai/sdk/resources/messages';

/** Messages compaction keeps word for word (docs/architecture.md: keep_last=8). */
export const KEEP_LAST_MESSAGES = 8;

function toolUseIds(message: MessageParam): string[] {
  if (message.role !== 'assistant' || typeof message.content === 'string') return [];
  return message.content.flatMap((b) => (b.type === 'tool_use' ? [b.id] : []));
}

function toolResultIds(message: MessageParam): string[] {
  if (message.role !== 'user' || typeof message.content === 'string') return [];
  return message.content.flatMap((b) => (b.type === 'tool_result' ? [b.tool_use_id] : []));
}

/**
 * Every index `i` (0 < i < length) where the history may be cut into `messages[0, i)` and a
 * kept tail `messages[i, …)` without separating a tool_use from its tool_result: the tail
 * starts with an assistant message or a user message holding no tool_result, and no tool_use
 * before the cut has its result after it.
 */
export function safeSplitPoints(messages: readonly MessageParam[]): number[] {
  const answeredAt = new Map<string, number>();
  messages.forEach((m, index) => toolResultIds(m).forEach((id) => answeredAt.set(id, index)));
  const points: number[] = [];
  // The furthest message any tool_use so far is answered in; a cut at or before it splits a pair.
  let openUntil = -1;
  messages.forEach((head, i) => {
    const previous = messages[i - 1];
    if (previous === undefined) return; // nothing to cut before the first message
    for (const id of toolUseIds(previous)) openUntil = Math.max(openUntil, answeredAt.get(id) ?? -1);
    const startsClean = head.role === 'assistant' || toolResultIds(head).length === 0;
    if (startsClean && openUntil < i) points.push(i);
  });
  return points;
}

/**
 * Where compaction cuts: the latest safe split that still keeps at least `keepLast` messages
 * word for word, or null when there is none (the history is too short to compact).
 */
export function chooseSplit(messages: readonly MessageParam[], keepLast = KEEP_LAST_MESSAGES): number | null {
  const limit = messages.length - keepLast;
  const points = safeSplitPoints(messages).filter((i) => i <= limit);
  return points.at(-1) ?? null;
}
