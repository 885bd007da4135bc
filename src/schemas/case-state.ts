// The states of a case casework tells a desk about, in casework's own words. The workflow names
// the state with each post; each desk adapter maps it to what its desk documents (src/desk/
// lifecycle.ts), so the workflow never carries a desk's status values and a changed mapping
// never changes what a recorded history replays.

/** Every case state a post can carry. */
export const CASE_STATES = ['working', 'awaiting_customer', 'awaiting_approval', 'with_person', 'closed'] as const;

/**
 * working: casework is on it (a refund decided, the wait over); awaiting_customer: casework
 * answered and waits for the customer; awaiting_approval: a refund waits for a person inside the
 * team; with_person: the case was handed to a person; closed: casework closed the case.
 */
export type CaseState = (typeof CASE_STATES)[number];

/** The names posts carried before case states existed, still found in outboxes carried by running investigations. */
export type LegacyDeskStatus = 'open' | 'pending' | 'solved';

/** What a queued post may carry: a case state, or a legacy name. */
export type PostStatus = CaseState | LegacyDeskStatus;

const LEGACY: Record<LegacyDeskStatus, CaseState> = {
  // Before case states, "pending" was set only by the refund-awaiting-approval note.
  pending: 'awaiting_approval',
  open: 'working',
  solved: 'closed',
};

/** The case state a post's status names; a legacy name maps to the state it was used for. */
export function caseStateOf(status: PostStatus): CaseState {
  return (CASE_STATES as readonly string[]).includes(status) ? (status as CaseState) : LEGACY[status as LegacyDeskStatus];
}
