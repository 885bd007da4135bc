import { CASE_STATES, type CaseState } from '../schemas/case-state';

// The lifecycle each desk documents, as one pure table per desk: which of the desk's own
// statuses a case state sets. Defaults follow the vendors' documentation; an operator may
// change any entry (CASEWORK_<DESK>_STATUSES, "state=status,..."), validated at start.
//
//   Zendesk (Tickets API, "status"): new, open, pending (waiting on the requester), hold (waiting
//     on a third party inside or outside the team), solved; "closed" is Zendesk's own, after solved.
//   Freshdesk (Tickets API, "status"): 2 Open, 3 Pending, 4 Resolved, 5 Closed, custom statuses
//     from 6 on; 7 is "Waiting on Third Party" in a default account.
//   Intercom (Conversations API, "state"): open, snoozed, closed, set through "Manage a
//     conversation"; a snoozed conversation opens again when the customer replies.

/** Zendesk ticket statuses casework may set (closed is set by Zendesk itself, after solved). */
export const ZENDESK_STATUSES = ['new', 'open', 'pending', 'hold', 'solved'] as const;
/** One of ZENDESK_STATUSES. */
export type ZendeskStatus = (typeof ZENDESK_STATUSES)[number];
/** Intercom conversation states. */
export const INTERCOM_STATES = ['open', 'snoozed', 'closed'] as const;
/** One of INTERCOM_STATES. */
export type IntercomState = (typeof INTERCOM_STATES)[number];

/** A desk's status for each case state. */
export type StatusTable<S> = Readonly<Record<CaseState, S>>;

/** Zendesk: an internal wait is On-hold; waiting on the customer is Pending; a closed case is Solved. */
export const ZENDESK_LIFECYCLE: StatusTable<ZendeskStatus> = {
  working: 'open',
  awaiting_customer: 'pending',
  awaiting_approval: 'hold',
  with_person: 'hold',
  closed: 'solved',
};

/** Freshdesk: an internal wait is 7 (Waiting on Third Party); waiting on the customer 3 (Pending); a closed case 4 (Resolved). */
export const FRESHDESK_LIFECYCLE: StatusTable<number> = {
  working: 2,
  awaiting_customer: 3,
  awaiting_approval: 7,
  with_person: 7,
  closed: 4,
};

/**
 * Intercom: everything but a closed case stays open. Snoozing hides a conversation from the
 * team's inbox until it wakes, which a refund waiting for a person's approval must not be; an
 * operator who wants "waiting on the customer" snoozed sets awaiting_customer=snoozed.
 */
export const INTERCOM_LIFECYCLE: StatusTable<IntercomState> = {
  working: 'open',
  awaiting_customer: 'open',
  awaiting_approval: 'open',
  with_person: 'open',
  closed: 'closed',
};

/**
 * The defaults with the overrides in `spec` ("awaiting_customer=snoozed,closed=closed"), each
 * value read by `parse` (undefined: not one of the desk's). Throws naming `variable`, the state
 * or the value when one is wrong, so a mistyped status stops the process at start.
 */
export function statusTable<S>(defaults: StatusTable<S>, spec: string, variable: string, parse: (value: string) => S | undefined, allowed: string): StatusTable<S> {
  const table: Record<CaseState, S> = { ...defaults };
  for (const entry of spec
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    const [state, value, extra] = entry.split('=').map((s) => s.trim());
    if (!state || !value || extra !== undefined) throw new Error(`${variable}: "${entry}" is not state=status`);
    if (!(CASE_STATES as readonly string[]).includes(state)) throw new Error(`${variable}: "${state}" is not a case state (one of ${CASE_STATES.join(', ')})`);
    const status = parse(value);
    if (status === undefined) throw new Error(`${variable}: "${value}" for ${state} is not ${allowed}`);
    table[state as CaseState] = status;
  }
  return table;
}

/** Reads a Zendesk status name. */
export function parseZendeskStatus(value: string): ZendeskStatus | undefined {
  return (ZENDESK_STATUSES as readonly string[]).includes(value) ? (value as ZendeskStatus) : undefined;
}

/** Reads a Freshdesk status: 2 to 5, or a custom status id (6 and up). */
export function parseFreshdeskStatus(value: string): number | undefined {
  return /^\d{1,9}$/.test(value) && Number(value) >= 2 ? Number(value) : undefined;
}

/** Reads an Intercom conversation state. */
export function parseIntercomState(value: string): IntercomState | undefined {
  return (INTERCOM_STATES as readonly string[]).includes(value) ? (value as IntercomState) : undefined;
}
