import type { MessageParam } from '@anthropic-ai/sdk/resources/messages';
import type { PriceTable, TokenUsage } from './model';

/** The agent's own running notes for one investigation; they live in the workflow, outside the context. */
export interface AgentNotes {
  found: string[];
  ruled_out: string[];
  to_do: string[];
}

/** Where an investigation stands; also the CaseworkStatus search attribute. */
export type CaseStatus = 'investigating' | 'awaiting_approval' | 'waiting_for_customer' | 'closed';

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
  reason: string;
  requested_at: string;
  tool_use_id: string;
  approvers: Approver[];
  reminded: boolean;
}

/** A human's decision on a refund request, as recorded by the workflow. */
export interface RefundDecision {
  requestId: string;
  decision: 'approved' | 'denied';
  approver: string;
  reason?: string;
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

/** Everything a run carries into its continuation (continue-as-new). JSON-safe. */
export interface CarriedState {
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
  compactedThrough: number;
  caseNotes: unknown;
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
}

/** The one input object of the Investigation workflow. */
export interface InvestigationInput {
  ticketId: string;
  /** The authenticated customer from the ticket event; never taken from message text. */
  customerId: string;
  settings: InvestigationSettings;
  carried?: CarriedState;
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
  agentNotes: AgentNotes;
  caseNotes: unknown;
  transcriptMessages: number;
  continuedAsNew: number;
}
