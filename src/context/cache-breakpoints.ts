import type { CacheControlEphemeral, ContentBlockParam, MessageParam, TextBlockParam, Tool } from '@anthropic-ai/sdk/resources/messages';
import type { CacheTtl } from './cache-cost';

/** The cache_control marker every breakpoint carries (five-minute ephemeral cache). */
export const EPHEMERAL: CacheControlEphemeral = Object.freeze({ type: 'ephemeral' });

/** The one-hour marker, for the step before a wait on a person. */
export const EPHEMERAL_1H: CacheControlEphemeral = Object.freeze({ type: 'ephemeral', ttl: '1h' });

/** The API allows at most this many cache_control breakpoints in one request. */
export const MAX_BREAKPOINTS = 4;

/** A request's cacheable parts, in the order the API caches them: tools, system, messages. */
export interface CacheableParts {
  system: TextBlockParam[];
  tools: Tool[];
  messages: MessageParam[];
}

/** What the cache schedule asks of one request's breakpoints. */
export interface CacheHints {
  /** The TTL of every breakpoint ('1h' before a wait on a person; the API wants 1h entries first, so all or none). */
  ttl?: CacheTtl;
  /** False when the next step clears: the tail written now would never be read, so it is sent as plain input. */
  writeTail?: boolean;
}

/** A block's shape as far as placing breakpoints goes. */
export interface BlockShape {
  type: string;
  /** A tool_result whose content is the clearing placeholder. */
  cleared?: boolean;
}

/** A message's shape as far as placing breakpoints goes. */
export interface MessageShape {
  role: MessageParam['role'];
  blocks: readonly BlockShape[];
}

/** A block's place: message index, block index. */
export type BlockAt = readonly [message: number, block: number];

// Thinking blocks cannot carry cache_control; every other block a transcript holds can.
function markable(block: BlockShape): boolean {
  return block.type !== 'thinking' && block.type !== 'redacted_thinking';
}

/** The last markable block at or before message `m`, block `b` (walking back across messages). */
function markableAtOrBefore(messages: readonly MessageShape[], m: number, b: number): BlockAt | null {
  for (let i = m; i >= 0; i -= 1) {
    const blocks = messages[i]!.blocks;
    for (let j = i === m ? Math.min(b, blocks.length - 1) : blocks.length - 1; j >= 0; j -= 1) if (markable(blocks[j]!)) return [i, j];
  }
  return null;
}

/**
 * Where the message breakpoints go (at most three: the fourth is the system prompt's, which
 * also covers the tools before it, since the rules never change while the tools stay put):
 *
 * - the end of the previous request (the last block before the latest assistant reply): the
 *   API reads a cached prefix only within 20 blocks of a breakpoint, so a step that adds more
 *   (a reply with ten parallel tool calls and their results) would otherwise read nothing but
 *   the tools and rules. Marked exactly, the previous request is read however the step grew;
 * - the clearing frontier (the last block before the first result not yet cleared): the next
 *   clearing batch changes the prefix only from there, so that batch still reads everything
 *   before it, however many steps ago it was written;
 * - the end (what the next step reads), unless the next step clears anyway.
 */
export function messageBreakpoints(messages: readonly MessageShape[], hints: CacheHints = {}): BlockAt[] {
  const at: BlockAt[] = [];
  const last = messages.length - 1;
  if (last < 0) return at;
  let firstKept: BlockAt | null = null;
  for (let i = 0; i <= last && !firstKept; i += 1) {
    messages[i]!.blocks.forEach((block, j) => {
      if (!firstKept && block.type === 'tool_result' && !block.cleared) firstKept = [i, j];
    });
  }
  if (firstKept) {
    const [m, b] = firstKept as BlockAt;
    const frontier = b > 0 ? markableAtOrBefore(messages, m, b - 1) : m > 0 ? markableAtOrBefore(messages, m - 1, Number.MAX_SAFE_INTEGER) : null;
    if (frontier) at.push(frontier);
  }
  let reply = -1;
  for (let i = last; i >= 0; i -= 1) {
    if (messages[i]!.role === 'assistant') {
      reply = i;
      break;
    }
  }
  if (messages[last]!.role === 'user' && reply > 0) {
    const previousEnd = markableAtOrBefore(messages, reply - 1, Number.MAX_SAFE_INTEGER);
    if (previousEnd) at.push(previousEnd);
  }
  if (hints.writeTail !== false) {
    const end = markableAtOrBefore(messages, last, Number.MAX_SAFE_INTEGER);
    if (end) at.push(end);
  }
  const seen = new Set<string>();
  return at
    .filter(([m, b]) => {
      const key = `${m}:${b}`;
      if (seen.has(key)) return false;
      seen.add(key);
      return true;
    })
    .sort((x, y) => x[0] - y[0] || x[1] - y[1]);
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

/** The shape of real messages; `cleared` names the results sent as placeholders. */
export function shapeOf(messages: readonly MessageParam[], cleared: ReadonlySet<string>): MessageShape[] {
  return messages.map((m) => ({
    role: m.role,
    blocks:
      typeof m.content === 'string'
        ? [{ type: 'text' }]
        : m.content.map((b) => ({ type: b.type, ...(b.type === 'tool_result' && cleared.has(b.tool_use_id) ? { cleared: true } : {}) })),
  }));
}

/**
 * Copies of the parts with at most four breakpoints: the last system block (the rules, and the
 * tools before them) and the message breakpoints of messageBreakpoints. Marks already present
 * are dropped first, so the request never exceeds MAX_BREAKPOINTS. `cleared` names the results
 * the messages carry as placeholders.
 */
export function withCacheBreakpoints(parts: CacheableParts, hints: CacheHints = {}, cleared: ReadonlySet<string> = new Set()): CacheableParts {
  const mark = hints.ttl === '1h' ? EPHEMERAL_1H : EPHEMERAL;
  const tools = parts.tools.map((t) => withoutMark({ ...t }));
  const system = parts.system.map((b, i, all) => (i === all.length - 1 ? { ...withoutMark(b), cache_control: mark } : withoutMark({ ...b })));
  if (system.length === 0 && tools.length > 0) tools[tools.length - 1] = { ...tools[tools.length - 1]!, cache_control: mark };
  const messages = parts.messages.map(
    (m) =>
      ({
        ...m,
        content: typeof m.content === 'string' ? [{ type: 'text', text: m.content }] : m.content.map((b) => withoutMark({ ...b })),
      }) as MessageParam,
  );
  for (const [m, b] of messageBreakpoints(shapeOf(messages, cleared), hints)) {
    const blocks = messages[m]!.content as ContentBlockParam[];
    blocks[b] = { ...blocks[b]!, cache_control: mark } as ContentBlockParam;
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
