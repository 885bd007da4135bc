import type { CacheControlEphemeral, ContentBlockParam, MessageParam, TextBlockParam, Tool } from '@anthropic-ai/sdk/resources/messages';

/** The cache_control marker every breakpoint carries (five-minute ephemeral cache). */
export const EPHEMERAL: CacheControlEphemeral = Object.freeze({ type: 'ephemeral' });

/** The API allows at most this many cache_control breakpoints in one request. */
export const MAX_BREAKPOINTS = 4;

/** A request's cacheable parts, in the order the API caches them: tools, system, messages. */
export interface CacheableParts {
  system: TextBlockParam[];
  tools: Tool[];
  messages: MessageParam[];
}

// Thinking blocks cannot carry cache_control; every other block a transcript holds can.
function acceptsCacheControl(block: ContentBlockParam): boolean {
  return block.type !== 'thinking' && block.type !== 'redacted_thinking';
}

function withoutMark<T extends object>(block: T): T {
  if (!('cache_control' in block)) return block;
  const { cache_control: _drop, ...rest } = block as T & { cache_control?: unknown };
  return rest as T;
}

/** Copies of `messages` without any cache_control mark: a transcript as it was before breakpoints were placed. */
export function withoutCacheMarks(messages: readonly MessageParam[]): MessageParam[] {
  return messages.map((m) => (typeof m.content === 'string' ? m : ({ ...m, content: m.content.map((b) => withoutMark(b)) } as MessageParam)));
}

/**
 * Copies of the parts with exactly three breakpoints: the last system block (the rules), the
 * last tool definition, and the last markable block of the last message (the end of the
 * stable prefix, so the next step reads all of this from the cache). Marks already present
 * are dropped first, so the request never exceeds MAX_BREAKPOINTS.
 */
export function withCacheBreakpoints(parts: CacheableParts): CacheableParts {
  const system = parts.system.map((b, i, all) => (i === all.length - 1 ? { ...withoutMark(b), cache_control: EPHEMERAL } : withoutMark({ ...b })));
  const tools = parts.tools.map((t, i, all) => (i === all.length - 1 ? { ...withoutMark(t), cache_control: EPHEMERAL } : withoutMark({ ...t })));
  const messages = parts.messages.map(
    (m) =>
      ({
        ...m,
        content: typeof m.content === 'string' ? [{ type: 'text', text: m.content }] : m.content.map((b) => withoutMark({ ...b })),
      }) as MessageParam,
  );
  const last = messages[messages.length - 1];
  if (last && Array.isArray(last.content)) {
    const blocks = last.content as ContentBlockParam[];
    for (let i = blocks.length - 1; i >= 0; i -= 1) {
      const block = blocks[i];
      if (block === undefined || !acceptsCacheControl(block)) continue;
      blocks[i] = { ...block, cache_control: EPHEMERAL } as ContentBlockParam;
      break;
    }
  }
  return { system, tools, messages };
}

/** How many cache_control breakpoints a request carries. */
export function countBreakpoints(parts: CacheableParts): number {
  const marked = (x: object) => ('cache_control' in x && (x as { cache_control?: unknown }).cache_control ? 1 : 0);
  return (
    parts.system.reduce((n, b) => n + marked(b), 0) +
    parts.tools.reduce((n, t) => n + marked(t), 0) +
    parts.messages.reduce((n, m) => n + (typeof m.content === 'string' ? 0 : m.content.reduce((k, b) => k + marked(b), 0)), 0)
  );
}
