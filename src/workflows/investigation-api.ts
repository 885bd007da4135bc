import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { CarriedState, FailedRefund, InboxMessage, InvestigationStatus, RefundDecision } from '../schemas/investigation';
import type { OrderLedger } from '../schemas/ledger';

/** A customer's message (the first one starts the case; later ones are follow-ups). */
export const customerMessageSignal = defineSignal<[InboxMessage]>('customerMessage');
/** The ticket was closed in the ticketing system: finish up and record the case. */
export const closeTicketSignal = defineSignal<[{ eventId: string; customerId: string }]>('closeTicket');
/** A human's refund decision, for tools that can only signal. Invalid ones are ignored and logged. */
export const decideRefundSignal = defineSignal<[RefundDecision]>('decideRefund');
/** A human's refund decision, validated before it reaches history; the caller hears why it was refused. */
export const decideRefundUpdate = defineUpdate<{ accepted: true; requestId: string; decision: string }, [RefundDecision]>('decideRefund');
/** Another case paid (or was refused) on an order: the fresh ledger, so this case's approval is checked against it. */
export const ledgerChangedSignal = defineSignal<[OrderLedger]>('ledgerChanged');
/** The payment provider reported a refund this case paid failed or canceled (its verified webhook): a person must take over. */
export const refundFailedSignal = defineSignal<[FailedRefund]>('refundFailed');
/** Where the investigation stands: step, state, last reply, pending approval, token totals. */
export const statusQuery = defineQuery<InvestigationStatus>('status');
/** A person asks a case that needs a person to carry on (the model tries again). */
export const resumeUpdate = defineUpdate<{ resumed: true }, [{ by: string; note?: string }]>('resume');
/** A person answers the customer of a case that needs a person; the reply is the customer's answer. */
export const humanReplyUpdate = defineUpdate<{ replied: true }, [{ by: string; text: string }]>('reply');
/** The whole state a run would carry into its continuation: read from a broken run (replayed) to recover it. Named to sort after `status`, the query the web UI's Queries tab offers first. */
export const carriedStateQuery = defineQuery<CarriedState>('transcriptForRecovery');
