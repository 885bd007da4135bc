import type { ContentBlockParam, MessageParam } from '@anthropic-ai/sdk/resources/messages';
import type { LayoutMessage, LogEntry } from '../schemas/transcript-log';
import { estimateBlockTokens } from './tokens';

// History by reference: the workflow keeps a lean skeleton of the live tail, each block
// numbered by its entry in the transcript log (src/db/transcript-log.ts), with large bodies cut
// to a preview; the model activity rebuilds the full messages from the log. Pure: the same
// functions number the skeleton in the workflow and rebuild it in the activity.

/** A block of the skeleton: the block (its body cut when large), its log entry and its token estimate. */
export type LeanBlock = ContentBlockParam & { seq?: number; tokens?: number };

/** Characters of a tool result or long text the skeleton keeps as a preview. */
export const PREVIEW_CHARS = 100;

/** What follows a preview in the skeleton: the rest is in the transcript log. */
export const PREVIEW_CUT = ' […]';

/** A message's blocks as the skeleton holds them (a plain-text message as one text block). */
export const blocksOf = (message: MessageParam): LeanBlock[] =>
  typeof message.content === 'string' ? [{ type: 'text', text: message.content }] : (message.content as LeanBlock[]);

/** The block as the log stores it: without the skeleton's own fields. */
export function bodyOf(block: LeanBlock): ContentBlockParam {
  const { seq: _seq, tokens: _tokens, ...body } = block;
  return body;
}

/** The first characters of a text, marked as cut when it is longer. */
export function previewOf(text: string, chars = PREVIEW_CHARS): string {
  return text.length <= chars ? text : `${text.slice(0, chars)}${PREVIEW_CUT}`;
}

/** A tool result's text, however its content is shaped. */
export function resultText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.map((c) => (c && typeof c === 'object' && 'text' in c ? String((c as { text: unknown }).text) : '')).join('\n');
}

/**
 * The skeleton's copy of a block: large tool results and texts cut to a preview (never empty,
 * so the transcript checks read it as they read the block), large tool inputs and thinking
 * emptied; ids, names, roles and is_error kept, so clearing, compaction splits and the
 * transcript checks decide on the skeleton exactly as on the whole transcript.
 */
export function leanBlock(block: ContentBlockParam, seq: number): LeanBlock {
  const tokens = estimateBlockTokens(block);
  switch (block.type) {
    case 'tool_result': {
      const text = resultText(block.content);
      const lean = { ...block, content: previewOf(text) || '(empty)' };
      return { ...lean, seq, tokens };
    }
    case 'text':
      return { ...block, text: previewOf(block.text), seq, tokens };
    case 'tool_use':
      return JSON.stringify(block.input ?? {}).length > PREVIEW_CHARS * 2 ? { ...block, input: {}, seq, tokens } : { ...block, seq, tokens };
    case 'thinking':
      return { ...block, thinking: '', signature: '', seq, tokens };
    case 'redacted_thinking':
      return { ...block, data: '', seq, tokens };
    default:
      return { ...block, seq, tokens };
  }
}

/** A message entry for one block. */
export function messageEntry(role: MessageParam['role'], block: ContentBlockParam, seq: number): LogEntry {
  const body = bodyOf(block);
  return { seq, kind: 'message', role, body, tokens: estimateBlockTokens(body) };
}

/**
 * Numbers every block of `messages` that has no entry yet, from `nextSeq`, in order: returns
 * the skeleton (numbered blocks cut to their lean copies), the new entries to write (the whole
 * blocks) and the next free number. Blocks already numbered are kept as they are.
 */
export function numberBlocks(messages: readonly MessageParam[], nextSeq: number): { messages: MessageParam[]; entries: LogEntry[]; nextSeq: number } {
  const entries: LogEntry[] = [];
  let seq = nextSeq;
  const lean = messages.map((message): MessageParam => {
    const content = blocksOf(message).map((block) => {
      if (block.seq !== undefined) return block;
      entries.push(messageEntry(message.role, block, seq));
      return leanBlock(bodyOf(block), seq++);
    });
    return { role: message.role, content } as MessageParam;
  });
  return { messages: lean, entries, nextSeq: seq };
}

/** The layout of a numbered skeleton: each message's role and its blocks' entries. A block without an entry is a bug. */
export function layoutOf(messages: readonly MessageParam[]): LayoutMessage[] {
  return messages.map((message, i) => ({
    role: message.role,
    seqs: blocksOf(message).map((block, j) => {
      if (block.seq === undefined) throw new Error(`message ${i}, block ${j} of the skeleton has no transcript entry`);
      return block.seq;
    }),
  }));
}

/** Every entry number a layout names, in order. */
export function layoutSeqs(layout: readonly LayoutMessage[]): number[] {
  return layout.flatMap((m) => m.seqs);
}

/** The whole messages of a layout, from the log's entries (keyed by number). A missing entry is a bug of the caller. */
export function messagesOfLayout(layout: readonly LayoutMessage[], entries: ReadonlyMap<number, LogEntry>): MessageParam[] {
  return layout.map(
    (m) =>
      ({
        role: m.role,
        content: m.seqs.map((seq) => {
          const entry = entries.get(seq);
          if (!entry || entry.kind !== 'message') throw new Error(`transcript entry ${seq} is not a message`);
          return entry.body as ContentBlockParam;
        }),
      }) as MessageParam,
  );
}

/** Estimated tokens of skeleton messages: each block's recorded estimate (of its whole body), else its own. */
export function leanTokens(messages: readonly MessageParam[]): number {
  return messages.reduce((sum, m) => sum + blocksOf(m).reduce((n, b) => n + (b.tokens ?? estimateBlockTokens(b)), 0), 0);
}

/** A short version tag of a JSON-safe value (FNV-1a of its JSON): tells whether a context block changed since it was written. */
export function versionOf(value: unknown): string {
  const text = JSON.stringify(value ?? null);
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return `${text.length.toString(36)}.${hash.toString(36)}`;
}
