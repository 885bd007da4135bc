import type { RefundDecision, RefundRequest } from '../schemas/investigation';
import { ledgerProblem } from '../context/ledger';

/**
 * Why a refund decision cannot be accepted, or null when it can: the request must be the one
 * pending, still undecided, and the approver must be on the list with a limit covering the
 * amount; an approval must be one the order's ledger, as this case last saw it, can honour.
 * Shared by the update validator (which rejects before history), the signal handler and the console.
 */
export function decisionProblem(pending: RefundRequest | null, decided: readonly RefundDecision[], decision: RefundDecision): string | null {
  if (!decision || typeof decision.requestId !== 'string' || !decision.requestId) return 'requestId is required';
  if (decision.decision !== 'approved' && decision.decision !== 'denied') return 'decision must be "approved" or "denied"';
  if (typeof decision.approver !== 'string' || !decision.approver.trim()) return 'approver is required';
  if (decided.some((d) => d.requestId === decision.requestId)) {
    return `refund request ${decision.requestId} has already been decided`;
  }
  if (!pending || pending.request_id !== decision.requestId) {
    return pending
      ? `unknown refund request ${decision.requestId}; the pending request is ${pending.request_id}`
      : `unknown refund request ${decision.requestId}; no refund is waiting for approval`;
  }
  const approver = pending.approvers.find((a) => a.name === decision.approver);
  if (!approver) {
    return `${decision.approver} may not decide refunds; allowed: ${pending.approvers.map((a) => a.name).join(', ') || 'nobody'}`;
  }
  if (decision.decision === 'approved' && pending.amount_cents > approver.limit_cents) {
    return `${decision.approver} may approve up to ${approver.limit_cents} cents; this refund is ${pending.amount_cents} cents`;
  }
  // The ledger as this case last saw it (filed, or refreshed when another case paid on the order).
  // Deterministic, so the validator may ask; the database checks again when it pays.
  if (decision.decision === 'approved' && pending.ledger && pending.kind) {
    const problem = ledgerProblem(pending.ledger, { request_id: pending.request_id, amount_cents: pending.amount_cents, kind: pending.kind, charge_id: pending.charge_id ?? null });
    if (problem) return problem;
  }
  return null;
}

/** A wait as a person says it: "72 h", "90 min", "5 s". */
export function describeDuration(ms: number): string {
  if (ms >= 3_600_000) return `${Math.round((ms / 3_600_000) * 10) / 10} h`;
  if (ms >= 60_000) return `${Math.round(ms / 60_000)} min`;
  return `${Math.round(ms / 1000)} s`;
}
