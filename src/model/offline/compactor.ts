import type { ContentBlock } from '@anthropic-ai/sdk/resources/messages';
import type { CaseNotes } from '../../schemas/case-notes';
import { ENTRY_MARK } from '../../context/wire';
import type { ModelReply, ModelRequest } from '../../schemas/model';
import { estimateRequestTokens, estimateTokens } from '../../context/tokens';

// The offline model's answer to a compaction request: it fills CaseNotes from the rendered
// transcript by rule, deterministically, so the same conversation always gives the same notes.

/** The model name offline compaction replies carry. */
export const OFFLINE_COMPACTOR_MODEL = 'offline-investigator (deterministic compactor)';

interface Entry {
  kind: 'customer' | 'assistant' | 'user' | 'tool call' | 'tool result';
  tool?: string;
  isError: boolean;
  body: string;
}

const HEADER = /^(customer|assistant|user|tool call|tool result)(?: (\S+) \(([^)]*)\))?( error)?$/;

/** The entries of the rendered transcript in the request (see renderTranscriptForNotes). */
export function readEntries(text: string): Entry[] {
  const start = text.indexOf(ENTRY_MARK);
  if (start < 0) return [];
  return text
    .slice(start + ENTRY_MARK.length)
    .split(`\n${ENTRY_MARK}`)
    .flatMap((chunk): Entry[] => {
      const newline = chunk.indexOf('\n');
      const header = newline < 0 ? chunk : chunk.slice(0, newline);
      const match = HEADER.exec(header.trim());
      if (!match) return [];
      return [{ kind: match[1] as Entry['kind'], tool: match[2], isError: Boolean(match[4]), body: newline < 0 ? '' : chunk.slice(newline + 1) }];
    });
}

const ORDER_IN_TEXT = /\border(?:\s+(?:#|no\.?|number|id))?\s*[:#]?\s*(\d{4,6})\b/gi;
const ORDER_IN_JSON = /"order_id"\s*:\s*"?(\d{3,10})"?/g;
const OFFER = /\b(refund(?:ed|ing)?|replacement|replace|re-?send|re-?deliver(?:y)?|credit|voucher|compensation|call (?:you )?back)\b/i;
// A customer sentence that states a problem; pleasantries ("Thanks.") must not replace one.
const PROBLEM = /\b(never|not|didn'?t|hasn'?t|wrong|missing|lost|damaged|broken|late|charged|twice|again|stolen|problem|issue)\b/i;
const WANT = /\b(I want|I'd like|I would like|please|I need|can you|could you|I expect)\b/i;

function sentences(text: string): string[] {
  return text
    .split(/(?<=[.!?])\s+|\n+/)
    .map((s) => s.replace(/\s+/g, ' ').trim())
    .filter(Boolean);
}

function clip(text: string, max: number): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length <= max ? flat : `${flat.slice(0, max - 1).trimEnd()}…`;
}

function pushOnce(list: string[], item: string): void {
  if (item && !list.includes(item)) list.push(item);
}

const DETAIL_KEYS = ['description', 'status', 'summary', 'subject', 'text', 'excerpt', 'decision', 'name'];

function describeValue(value: unknown): string | undefined {
  if (value === null || value === undefined) return undefined;
  if (typeof value === 'string') return clip(value, 80);
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (Array.isArray(value)) {
    const first = value[0] as Record<string, unknown> | undefined;
    const detail = first && typeof first === 'object' ? DETAIL_KEYS.map((k) => first[k]).find((v) => typeof v === 'string') : undefined;
    return `${value.length} item${value.length === 1 ? '' : 's'}${detail ? `, first: ${clip(String(detail), 80)}` : ''}`;
  }
  return undefined;
}

/** One fact from one tool result, with its source: "status: delivered; events: 12 items, first: … (get_tracking_events)". */
export function factFromResult(tool: string, body: string): string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return `${clip(body, 200)} (${tool})`;
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) return `${clip(body, 200)} (${tool})`;
  const parts = Object.entries(parsed as Record<string, unknown>)
    .map(([k, v]) => [k, describeValue(v)] as const)
    .filter(([, v]) => v !== undefined)
    .slice(0, 6)
    .map(([k, v]) => `${k}: ${v}`);
  return `${clip(parts.join('; '), 300)} (${tool})`;
}

// The agent's own notes are not case facts: they already survive in their own block.
const NOT_FACTS = new Set(['write_notes', 'read_notes']);

/** Fills CaseNotes from a rendered transcript by rule. Pure and deterministic. */
export function notesFromTranscript(text: string): CaseNotes {
  const entries = readEntries(text);
  const notes: CaseNotes = { order_ids: [], customer_problem: '', facts_established: [], already_offered: [], customer_wants: '', open_questions: [] };
  for (const entry of entries) {
    const pattern = entry.kind === 'tool call' || entry.kind === 'tool result' ? ORDER_IN_JSON : ORDER_IN_TEXT;
    for (const [, orderId] of entry.body.matchAll(pattern)) if (orderId) pushOnce(notes.order_ids, orderId);
    if (entry.kind === 'customer') {
      const said = sentences(entry.body);
      const problem = said.filter((s) => PROBLEM.test(s) && !s.endsWith('?'));
      if (!notes.customer_problem && problem.length) notes.customer_problem = clip(problem.slice(0, 2).join(' '), 240);
      const wants = said.filter((s) => WANT.test(s));
      const lastWant = wants.at(-1);
      if (lastWant) notes.customer_wants = clip(lastWant, 200);
      for (const question of said.filter((s) => s.endsWith('?'))) pushOnce(notes.open_questions, clip(question, 200));
    } else if (entry.kind === 'assistant') {
      for (const offer of sentences(entry.body).filter((s) => OFFER.test(s) && !s.endsWith('?'))) pushOnce(notes.already_offered, clip(offer, 240));
    } else if (entry.kind === 'tool result' && entry.tool && !NOT_FACTS.has(entry.tool)) {
      if (entry.isError) pushOnce(notes.open_questions, `${entry.tool} failed: ${clip(entry.body, 160)}`);
      else pushOnce(notes.facts_established, factFromResult(entry.tool, entry.body));
    }
  }
  return notes;
}

function requestText(request: ModelRequest): string {
  return request.messages.map((m) => (typeof m.content === 'string' ? m.content : m.content.map((b) => (b.type === 'text' ? b.text : '')).join('\n'))).join('\n');
}

function stableId(text: string): string {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i += 1) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193) >>> 0;
  return hash.toString(16).padStart(8, '0');
}

/** The offline model's reply to a 'compact' request: the CaseNotes JSON as one text block. */
export function offlineCompact(request: ModelRequest): ModelReply {
  const text = requestText(request);
  const json = JSON.stringify(notesFromTranscript(text));
  const content: ContentBlock[] = [{ type: 'text', text: json, citations: null }];
  return {
    id: `msg_off_compact_${stableId(text)}`,
    model: OFFLINE_COMPACTOR_MODEL,
    content,
    stop_reason: 'end_turn',
    usage: { input_tokens: estimateRequestTokens(request), output_tokens: estimateTokens(json), cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
  };
}
