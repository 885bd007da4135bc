import type { MessageParam, TextBlockParam, Tool } from '@anthropic-ai/sdk/resources/messages';
import type { CaseNotes } from '../schemas/case-notes';
import { notesAreEmpty, renderNotes, type AgentNotes } from './agent-notes';
import { withCacheBreakpoints, type CacheHints } from './cache-breakpoints';
import { applyClearing } from './clearing';
import { AGENT_NOTES_TAG, CASE_NOTES_TAG, EARLIER_LEFT_OUT } from './wire';

/** What one step's context is assembled from. */
export interface ContextInput {
  /** The rules: the system prompt, sent unchanged on every call. */
  system: string | readonly TextBlockParam[];
  tools: readonly Tool[];
  /** The transcript tail after compaction (from the compaction split onwards). */
  messages: readonly MessageParam[];
  /** Tool results to send as placeholders, fixed at the last clearing batch. */
  clearedIds?: readonly string[];
  /** The labelled customer memory block (already tagged by the memory renderer). */
  memoryBlock?: string | null;
  agentNotes?: AgentNotes | null;
  caseNotes?: CaseNotes | null;
  /** What the cache schedule asks of this request's breakpoints (TTL, whether the tail is written). */
  cache?: CacheHints;
}

/** What is sent for one step: the rules, tool definitions and the lean messages, with cache breakpoints. */
export interface BuiltContext {
  system: TextBlockParam[];
  tools: Tool[];
  messages: MessageParam[];
}

/** The rules as system blocks. Pure and total, so the same rules give byte-identical blocks on every call. */
export function systemBlocks(rules: string | readonly TextBlockParam[]): TextBlockParam[] {
  return typeof rules === 'string' ? [{ type: 'text', text: rules }] : rules.map((b) => ({ ...b }));
}

/** The agent-notes block as the model reads it. */
export function agentNotesBlock(notes: AgentNotes): TextBlockParam {
  return {
    type: 'text',
    text: `<${AGENT_NOTES_TAG}>\nYour own running notes for this investigation (written with write_notes; they survive clearing):\n${renderNotes(notes)}\n</${AGENT_NOTES_TAG}>`,
  };
}

/** The case-notes block as the model reads it (docs/architecture.md: "Case notes so far:" + the fields as JSON). */
export function caseNotesBlock(notes: CaseNotes): TextBlockParam {
  return {
    type: 'text',
    text: `<${CASE_NOTES_TAG}>\nCase notes so far (the earlier part of this conversation, summarised into fields):\n${JSON.stringify(notes, null, 1)}\n</${CASE_NOTES_TAG}>`,
  };
}

/** The labelled blocks that lead the first user message, in their fixed order: memory, agent notes, case notes. */
export function contextBlocks(input: Pick<ContextInput, 'memoryBlock' | 'agentNotes' | 'caseNotes'>): TextBlockParam[] {
  const blocks: TextBlockParam[] = [];
  if (input.memoryBlock) blocks.push({ type: 'text', text: input.memoryBlock });
  if (input.agentNotes && !notesAreEmpty(input.agentNotes)) blocks.push(agentNotesBlock(input.agentNotes));
  if (input.caseNotes) blocks.push(caseNotesBlock(input.caseNotes));
  return blocks;
}

const EARLIER_LEFT_OUT_BLOCK: TextBlockParam = { type: 'text', text: EARLIER_LEFT_OUT };

/**
 * Assembles what is sent for one step. Pure: the rules go out unchanged as the system prompt
 * (never cleared, compacted or moved); old tool results named in `clearedIds` become
 * placeholders; the labelled blocks lead the first user message (a new one when the tail
 * starts with the assistant, since a request must open with the user); and cache breakpoints
 * mark the rules and the prefixes the next steps read (cache-breakpoints.ts). The transcript is never mutated.
 */
export function buildContext(input: ContextInput): BuiltContext {
  const messages = applyClearing(input.messages, input.clearedIds ?? []);
  const lead = contextBlocks(input);
  const first = messages[0];
  if (!first || first.role === 'assistant') {
    messages.unshift({ role: 'user', content: lead.length ? lead : [EARLIER_LEFT_OUT_BLOCK] });
  } else if (lead.length) {
    const content = typeof first.content === 'string' ? [{ type: 'text' as const, text: first.content }] : first.content;
    messages[0] = { ...first, content: [...lead, ...content] } as MessageParam;
  }
  return withCacheBreakpoints({ system: systemBlocks(input.system), tools: [...input.tools], messages }, input.cache, new Set(input.clearedIds ?? []));
}
