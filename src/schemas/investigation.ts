import type { McpOffers, McpPendingCall } from './mcp';
import type { PostStatus } from './case-state';
import type { MessageParam } from '@anthropic-ai/sdk/resources/messages';
import type { CaseNotes } from './case-notes';
import type { PriceTable, TokenUsage } from './model';
import type { TranscriptLogState } from './transcript-log';
import type { OrderLedger, RefundKind } from './ledger';

/** The agent's own running notes for one investigation; they live in the workflow, outside the context. */
export interface AgentNotes {
  found: string[];
  ruled_out: string[];
  to_do: string[];
}

/** Where an investigation stands; also the CaseworkStatus search attribute. */
export type CaseStatus = 'investigating' | 'awaiting_approval' | 'waiting_for_customer' | 'needs_human' | 'closed';

/** Who the investigation waits for: the model (a step is due), the customer, or a person (needs_human). */
export type Awaiting = 'model' | 'customer' | 'person';

/** Why a person must take over, as recorded when the case was handed over. */
export interface HandOff {
  reason: string;
  at: string;
  step: number;
  /** How it ended: resumed or answered by a person, or still open. */
  resolution: { by: string; action: 'resumed' | 'replied' | 'closed'; at: string } | null;
}

/** A refund the workflow paid on a recorded approval. */
export interface PaidRefund {
  request_id: string;
  refund_id: string;
  order_id: string;
  amount_cents: number;
  approval_id: string;
  /** The order's currency (absent in runs from before the order ledger). */
  currency?: string;
}

/** A person allowed to decide refunds, up to a limit. */
export interface Approver {
  name: string;
  limit_cents: number;
}

/** Tunables of one investigation, fixed when it starts (so replays see the same values). */
export interface InvestigationSettings {
  /** Most model calls for one customer turn before the case is handed to a person. */
  maxSteps: number;
  /** Continue-as-new after this many steps in one run, even if the server has not suggested it. */
  maxStepsPerRun: number;
  /** Clear old tool results in a batch every this many steps. */
  clearEvery: number;
  /** Tool results kept word for word by clearing. */
  keepRecent: number;
  /** Prompt-cache lifetime; a longer gap since the last model call makes clearing free. */
  cacheTtlMs: number;
  /** Compact when the estimated context passes this many tokens. */
  compactAboveTokens: number;
  /** Messages kept word for word by compaction. */
  keepLastMessages: number;
  /** How long an answered ticket waits for a follow-up before it closes. */
  followUpWindowMs: number;
  /** A pending refund request gets a reminder after this long… */
  approvalReminderMs: number;
  /** …and is denied automatically after this long. */
  approvalTimeoutMs: number;
  approvers: Approver[];
  maxTokens: number;
  /** Ask for extended thinking; clearing then uses the API's own context editing. */
  thinking: boolean;
  /** What tokens cost, for the per-step and per-run figures. */
  prices: PriceTable;
  /** How long an activity keeps retrying an unreachable dependency before a person is told (absent in runs started before it existed). */
  outageBudgetMs?: number;
  /** Post the replies of tickets from POST /events to the generic outbound webhook (CASEWORK_DESKS lists webhook). Desk tickets always post. */
  deskWebhook?: boolean;
  /** false: every tool is a remote activity and one reply's calls run one at a time (tool-dispatch.ts); absent: read-only tools run locally, side by side. */
  localReadTools?: false;
  /** Clear by the cache-optimal schedule (src/context/cache-schedule-rule.ts) instead of every `clearEvery` steps; absent in runs started before it. */
  cacheSchedule?: CacheScheduleSettings;
  /** True when the worker is configured with MCP servers (CASEWORK_MCP_SERVERS): the run records the MCP tools offered at its start. */
  mcpTools?: true;
  /**
   * True in every run this release starts: the transcript is in the transcript log and the model activity gets the
   * step's plan. The workflow no longer reads it; it is written so the release before, which kept a transcript in the
   * workflow where it was absent, replays these runs after a rollback. Absent: a run of that retired mode, drained
   * before this release (docs/deploy.md, "Retiring the in-workflow transcript").
   */
  historyByReference?: true;
  /**
   * True runs the step's model call and compaction as local activities (CASEWORK_LOCAL_MODEL_CALLS): a step leaves
   * one marker event instead of an activity's three and a workflow task's three, and the steps of a turn share
   * workflow tasks. Absent: remote activities, as runs started before it.
   */
  localModelCalls?: true;
}

/** The cache-optimal clearing schedule's settings. */
export interface CacheScheduleSettings {
  /** Every request stays under this many tokens where clearing can keep it there. */
  peakTokens: number;
  /** Share of waits on a person answered within the hour, for the 1-hour cache decision. */
  withinHourShare: number;
}

/** What the cache schedule remembers between steps. */
export interface CacheScheduleState {
  /** The context strategy this run uses, as the console names it. */
  strategy: string;
  /** The TTL the last request's breakpoints carried. */
  lastTtl: '5m' | '1h';
}

/** One message the customer sent, as the ticketing system delivered it. */
export interface InboxMessage {
  eventId: string;
  customerId: string;
  message: string;
  receivedAt: string;
}

/** A refund request waiting for, or given, a human decision. */
export interface RefundRequest {
  request_id: string;
  order_id: string;
  amount_cents: number;
  /** The order's currency (absent in runs from before it was recorded). */
  currency?: string;
  reason: string;
  requested_at: string;
  tool_use_id: string;
  approvers: Approver[];
  reminded: boolean;
  /** What the refund is for (absent in runs from before the order ledger). */
  kind?: RefundKind;
  /** The charge it reverses; null for an order-level refund. */
  charge_id?: string | null;
  /** Other pending requests asking for the same money when this one was filed. */
  overlaps?: string[];
  /** The order's ledger as last read: when filed, refreshed when another case pays on the order. */
  ledger?: OrderLedger;
  /** Set when the request is a money-moving MCP call, not a refund: the tool and its arguments, as the approver decides them. */
  mcp?: McpPendingCall;
}

/** A refund a person approved that the order's ledger could not honour: nothing was paid. */
export interface RefusedRefund {
  request_id: string;
  order_id: string;
  approver: string;
  /** The ledger's words, as the model, the desk note and the approver read them. */
  reason: string;
  at: string;
}

/** A refund the payment provider accepted and later reported failed or canceled (its webhook): nothing reached the customer. */
export interface FailedRefund {
  refund_id: string;
  request_id: string;
  order_id: string;
  provider: string;
  provider_refund_id: string;
  /** failed or canceled, as the provider reported it. */
  status: string;
  /** The provider's reason (e.g. lost_or_stolen_card), or null when it gave none. */
  reason: string | null;
  /** The provider event that reported it. */
  event_id: string;
  at: string;
  /** Set once the case was handed to a person for it. */
  handed_over?: boolean;
}

/** A human's decision on a refund request, as recorded by the workflow. */
export interface RefundDecision {
  requestId: string;
  decision: 'approved' | 'denied';
  /** The approver name the limits are checked against. */
  approver: string;
  reason?: string;
  /** The person as they named themselves (console sign-in); absent: the approver. */
  decidedBy?: string;
  /** Through what: the console key's label, "cli", "http". */
  via?: string;
}

/** What one step sent and cost. */
export interface StepRecord {
  step: number;
  tools: string[];
  usage: TokenUsage;
  cost_usd: number;
  /** Clearing or compaction done before this step, if any. */
  context_event?: string;
}

/** How a closed run ended when it did not end well: a bug (what casework expects becomes needs_human, not a broken run). */
export type BrokenRun = 'FAILED' | 'TERMINATED' | 'TIMED_OUT' | 'CANCELLED';

/** Where a recovered run came from: the broken run it replaces and how much of its conversation it carries. */
export interface RecoveredFrom {
  runId: string;
  runStatus: BrokenRun;
  /** When the next event started the recovered run. */
  at: string;
  /**
   * carried: the broken run's whole state (its status query, replayed); from_history: rebuilt
   * from its history (the last model request, the messages it received); unavailable: nothing
   * could be read, the conversation starts again.
   */
  transcript: 'carried' | 'from_history' | 'unavailable';
}

/** Everything a run carries into its continuation (continue-as-new). JSON-safe. */
export interface CarriedState {
  /** The live tail as a lean skeleton numbered by transcript-log entry (the log holds every message whole). */
  transcript: MessageParam[];
  step: number;
  /** Model calls since the customer last wrote; the step cap applies to these. */
  turnSteps: number;
  status: CaseStatus;
  lastReply: string | null;
  totals: TokenUsage;
  costUsd: number;
  steps: StepRecord[];
  clearedIds: string[];
  lastBatchStep: number;
  lastModelCallAt: number | null;
  caseNotes: CaseNotes | null;
  agentNotes: AgentNotes;
  /** The notes as the context shows them: refreshed at clearing batches so the cached prefix holds between them. */
  notesShown: AgentNotes;
  memoryBlock: string | null;
  pending: RefundRequest | null;
  decisions: RefundDecision[];
  inbox: InboxMessage[];
  seenEventIds: string[];
  model: string | null;
  runsSoFar: number;
  /** Who the run waits for. */
  awaiting: Awaiting;
  /** Every hand-over to a person, the open one last. */
  handOffs: HandOff[];
  /** Refunds the workflow paid on approvals. */
  refunds: PaidRefund[];
  /** Approved refunds the order's ledger refused (absent in runs from before the ledger). */
  refusedRefunds?: RefusedRefund[];
  /** Paid refunds the payment provider later reported failed (absent until one does). */
  failedRefunds?: FailedRefund[];
  /** The MCP tools this run offers, recorded once at its start (absent: none, or a run from before them). */
  mcp?: McpOffers;
  /**
   * The request whose decision could not be settled (recorded or paid) because a write failed
   * past the outage budget: the case waits for a person and retries the write on a timer,
   * carrying on by itself once it succeeds.
   */
  settleBlocked?: string;
  /** Set by a reply that ran out of context: the next step clears and compacts first. */
  shrinkContext: boolean;
  /** Empty replies in a row this turn; past a few, a person takes over. */
  emptyReplies: number;
  /** Every recovery from a broken run, the latest last. */
  recoveries: RecoveredFrom[];
  /** The context strategy and the cache TTL of the last request (absent in runs from before they were recorded). */
  cache?: CacheScheduleState;
  /** Shown as the next step's context event (e.g. the run was recovered), then cleared. */
  contextEventDue: string | null;
  /** Replies and notes for the desk ticket (absent in runs from before desks were wired). */
  desk?: DeskOutbox;
  /**
   * Where the transcript log stands; `steps` holds the latest step records, older ones are in the
   * log. Set at every run's start (absent only in a fresh state before it, and in states carried
   * by runs of the retired in-workflow mode, which are drained before this build: docs/deploy.md).
   */
  log?: TranscriptLogState;
}

/** One reply or internal note waiting to be posted to the desk ticket. Its kind and number make its idempotency key. */
export interface DeskPostItem {
  kind: 'reply' | 'note';
  /** The reply's (or note's) number in the investigation, counted per kind: 1, 2, 3… */
  sequence: number;
  body: string;
  tags?: string[];
  /** The case state the post tells the desk (each desk maps it to its own status); legacy names in outboxes carried from before. */
  status?: PostStatus;
}

/** The desk outbox: what was numbered, what waits to be posted, and what a desk refused. Carried across continue-as-new. */
export interface DeskOutbox {
  replies: number;
  notes: number;
  /** Queued in order; the first is posted (or retried) before the next. */
  pending: DeskPostItem[];
  /** Posts the desk refused for good (credentials, a missing ticket); queued again when a person resumes the case. */
  failed: (DeskPostItem & { error: string })[];
  /** Posts the desk has (or had already, from an earlier attempt). */
  posted: number;
}

/** The one input object of the Investigation workflow. */
export interface InvestigationInput {
  ticketId: string;
  /** The authenticated customer from the ticket event; never taken from message text. */
  customerId: string;
  settings: InvestigationSettings;
  carried?: CarriedState;
  /** Set when this run replaces a broken one (FAILED, TERMINATED, …); `carried` then holds what could be read of it. */
  recovered?: RecoveredFrom;
  /**
   * The first free entry number of the investigation's transcript log when this run was started
   * over a closed one (a reopened ticket, a recovery): earlier runs of the same workflow id wrote
   * below it, so this run numbers its entries from here. Unset: from 1, as before.
   */
  logFrom?: number;
  /**
   * How many replies and notes the investigation's closed runs numbered, when this run was started
   * over them (a closed case reopened because its refund failed): this run numbers its desk posts
   * after theirs, so no post's idempotency key is one an earlier run already used. Unset: from 1.
   */
  deskFrom?: { replies: number; notes: number };
}

/** The status query's answer. */
export interface InvestigationStatus {
  workflowId: string;
  ticketId: string;
  customerId: string;
  status: CaseStatus;
  step: number;
  model: string | null;
  lastReply: string | null;
  pendingApproval: RefundRequest | null;
  decisions: RefundDecision[];
  totals: TokenUsage & { cost_usd: number };
  steps: StepRecord[];
  /** Older step records moved to the transcript log (history by reference); `steps` holds the rest. */
  stepsInLog?: number;
  agentNotes: AgentNotes;
  caseNotes: CaseNotes | null;
  transcriptMessages: number;
  continuedAsNew: number;
  /** The open hand-over, when a person must act (status needs_human). */
  handOff: HandOff | null;
  /** Every hand-over to a person with how it ended, the latest last (absent in answers of runs from before it was given). */
  handOffs?: HandOff[];
  refunds: PaidRefund[];
  /** Approved refunds the order's ledger refused: nothing was paid. */
  refusedRefunds?: RefusedRefund[];
  /** Refunds the payment provider reported failed after accepting them: nothing reached the customer. */
  failedRefunds?: FailedRefund[];
  /** The broken run this investigation was last recovered from, if any. */
  recoveredFrom?: RecoveredFrom | null;
  /** The desk outbox, for runs that post to a desk: pending, posted and refused posts. */
  desk?: DeskOutbox;
  /** The context strategy the run clears by (absent in runs from before it was recorded). */
  contextStrategy?: string;
}
