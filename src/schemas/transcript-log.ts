import type { ContentBlockParam, MessageParam } from '@anthropic-ai/sdk/resources/messages';
import type { Pool } from 'pg';
import type { CaseNotes } from './case-notes';

// The transcript log's shapes (migrations/021_transcript_log.sql): what one entry holds, what
// the workflow sends the model and compaction activities instead of the messages (the step's
// plan), and what a tool activity that wrote its own result returns.

/** What an entry is: a content block of the conversation, a version of a context block, or a step record. */
export type LogKind = 'message' | 'memory' | 'agent_notes' | 'case_notes' | 'step';

/** One entry of the log, decoded. `role` is set for messages only. */
export interface LogEntry {
  seq: number;
  kind: LogKind;
  role?: MessageParam['role'];
  /** A ContentBlockParam for messages; the memory text, the notes or a step record otherwise. */
  body: unknown;
  /** Offline estimate of the tokens its text carries. */
  tokens: number;
}

/** A message entry: one content block, whose. */
export interface MessageEntry extends LogEntry {
  kind: 'message';
  role: MessageParam['role'];
  body: ContentBlockParam;
}

/** Whose content a body is, so a codec with per-customer keys encrypts it under that customer's key. */
export interface BodyScope {
  /** The investigation it belongs to (its ticket's owner is the customer). */
  workflowId?: string;
  /** The customer, when the caller knows it. */
  customerId?: string;
}

/** Encodes entry bodies for storage and back: the payload codec, injected where the log is opened. */
export interface BodyCodec {
  encode(value: unknown, scope?: BodyScope): Promise<Buffer>;
  decode(bytes: Uint8Array): Promise<unknown>;
  /**
   * The codec to use against one database, when it keeps per-customer keys there: the
   * transcript log opened on `pool` uses it, so every place that opens a log gets them.
   */
  forPool?(pool: Pool): BodyCodec;
}

/** One message of the live tail as the plan names it: whose, and the entries of its blocks in order. */
export interface LayoutMessage {
  role: MessageParam['role'];
  seqs: number[];
}

/** The context blocks of a step, by the entries holding their current versions (null: none). */
export interface ContextRefs {
  memory: number | null;
  agentNotes: number | null;
  caseNotes: number | null;
}

/**
 * What the model activity is sent for one investigation step instead of the messages: entries
 * to write first (each reaches the log once), the live tail's layout, the cleared results, the
 * context blocks' versions, and where the reply's blocks go in the log. The numbers travel
 * compact (src/context/plan-encoding.ts), and no workflow id: the activity's own.
 */
export interface StepPlan {
  /** The shape, 2: the first one (objects and ids, from runs before the compact plan) is retired (docs/deploy.md). */
  v: 2;
  entries: LogEntry[];
  /** encodeLayout of the live tail. */
  layout: string;
  /** encodeSeqs of the cleared tool_result blocks' entries. */
  cleared: string;
  context: ContextRefs;
  /** The reply's blocks are written at replySeq, replySeq + 1, … */
  replySeq: number;
  max_tokens: number;
  extra?: Record<string, unknown>;
  /** Where the request's cache breakpoints go and their TTL (the cache schedule's call); absent, the defaults. */
  cache?: { ttl?: '5m' | '1h'; writeTail?: boolean };
  /** The digest of the MCP tools the run offers (src/schemas/mcp.ts); absent: none. */
  mcp?: string;
}

/**
 * What the compaction activity is sent: entries to write first, the layout of the messages it
 * summarises (encodeLayout), the previous notes by entry (or inline when the log has no copy),
 * and the entry the new notes are written at.
 */
export interface CompactionPlan {
  /** The shape, 2: the first one (previous notes always inline) is retired. */
  v: 2;
  entries: LogEntry[];
  layout: string;
  /** The entry holding the previous notes (null: none, or see `previous`). */
  previousSeq: number | null;
  /** The previous notes inline, only when no entry holds them. */
  previous?: CaseNotes | null;
  /** Where the activity writes the notes it returns (kind `case_notes`). */
  notesSeq: number;
}

/** Where a tool activity writes its result: the entry's number (set on ToolCall.log by the workflow). */
export interface LogTarget {
  seq: number;
}

/** What a tool activity that wrote its own result returns: the outcome with a short preview, and where it is. */
export interface LoggedOutcome {
  is_error: boolean;
  /** The first characters of the result, for the workflow's evidence notes; the whole text is in the log. */
  content: string;
  logged: { seq: number; tokens: number };
}

/** The transcript log's part of the carried state (history by reference). */
export interface TranscriptLogState {
  /** The next free entry number; numbers are unique in the investigation, not always dense. */
  nextSeq: number;
  /** The first number this investigation's runs gave out, when earlier, closed runs of its workflow id wrote the ones before (a reopened ticket): readers of the log leave those out. */
  firstSeq?: number;
  /** Entries numbered but not yet written: the next model or compaction activity writes them. */
  pending: LogEntry[];
  /** Messages compacted out of the skeleton (they are in the log). */
  droppedMessages: number;
  /** Step records moved out of the carried state into the log. */
  stepsLogged: number;
  /** The entries holding the context blocks' current versions. */
  context: Partial<Record<keyof ContextRefs, { seq: number; version: string }>>;
  /** What the search attributes and memo last showed, and at which step (they are upserted when it changes, or every few steps). */
  published?: { key: string; step: number };
}
