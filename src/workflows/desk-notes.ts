import type { DeskStatus } from '../desk/client';
import { formatMoney } from '../context/money';

// The internal notes casework leaves on the desk ticket when the case changes state, written
// once here so every desk shows the team the same words. Pure string functions, so workflow
// code may build them (they are deterministic). Amounts are in the order's own currency. Each
// note names the case state it moves the ticket to; the desk adapters map that state to their
// desk's own status (src/desk/lifecycle.ts).

/** A note to post: kind "note" in postToDesk, with the tags and status it sets. */
export interface DeskNote {
  body: string;
  tags: string[];
  status?: DeskStatus;
}

/** A refund waits for a person: amount, order, the evidence, and exactly how to decide it. */
export function refundAwaitingNote(input: {
  workflowId: string;
  requestId: string;
  orderId: string;
  amountCents: number;
  currency?: string;
  reason: string;
  evidence: string[];
  approvers: string[];
}): DeskNote {
  const lines = [
    `casework: refund of ${formatMoney(input.amountCents, input.currency)} for order ${input.orderId} awaits approval.`,
    `Reason: ${input.reason}`,
    ...(input.evidence.length ? ['Evidence:', ...input.evidence.map((e) => `- ${e}`)] : []),
    `Who may decide: ${input.approvers.join(', ') || 'an approver with a high enough limit'}.`,
    `To decide: casework approve ${input.workflowId} --request ${input.requestId} --approver <your name>  (or: casework deny ${input.workflowId} --request ${input.requestId} --approver <your name> --reason "...")`,
    `Over HTTP: POST /investigations/${input.workflowId}/approve {"requestId": "${input.requestId}"}`,
  ];
  return { body: lines.join('\n'), tags: ['casework_awaiting_approval'], status: 'awaiting_approval' };
}

/** The refund was issued (after a recorded approval): the wait for approval is over. */
export function refundIssuedNote(input: { requestId: string; orderId: string; amountCents: number; currency?: string; approver: string }): DeskNote {
  return {
    body: `casework: refund ${input.requestId} of ${formatMoney(input.amountCents, input.currency)} for order ${input.orderId} was issued, approved by ${input.approver}.`,
    tags: ['casework_refund_issued'],
    status: 'working',
  };
}

/** The refund was denied (by a person, or by the approval timer): by whom and why. The wait for approval is over, so the ticket is open again. */
export function refundDeniedNote(input: { requestId: string; orderId: string; amountCents: number; currency?: string; approver: string; reason?: string | null }): DeskNote {
  const why = input.reason?.trim() ? `: ${input.reason.trim()}` : '';
  return {
    body: `casework: refund ${input.requestId} of ${formatMoney(input.amountCents, input.currency)} for order ${input.orderId} was denied by ${input.approver}${why}. Nothing was paid; casework tells the customer.`,
    tags: ['casework_refund_denied'],
    status: 'working',
  };
}

/** The case needs a person: why, and where its transcript is. */
export function needsHumanNote(input: { workflowId: string; reason: string }): DeskNote {
  return {
    body: `casework: this case needs a person. ${input.reason}\nThe full transcript stays in investigation ${input.workflowId} (casework status ${input.workflowId}).`,
    tags: ['casework_needs_human'],
    status: 'with_person',
  };
}

/** A reply held back because it would have shown the customer internal details: what, and the words, for a person to rewrite. */
export function replyHeldNote(input: { what: string; text: string }): DeskNote {
  return {
    body: `casework: a reply was held back from the customer because it showed ${input.what}. A person should answer instead. The reply as written:\n\n${input.text}`,
    tags: ['casework_reply_held'],
  };
}

/** casework closed the case (no word from the customer within the follow-up window): the ticket is solved. */
export function caseClosedNote(): DeskNote {
  return {
    body: 'casework: the case is closed; the customer did not write again within the follow-up window. A new message from them opens it again.',
    tags: ['casework_closed'],
    status: 'closed',
  };
}
