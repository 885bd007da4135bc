import type { InboundDeskName } from './types';

// Which casework customer a desk requester is. The answer comes only from configuration (or a
// lookup the operator supplies) keyed by the desk's own authenticated ids: never from anything
// a customer typed, so a message saying "I am customer C-1002" changes nothing.

/** The desk's identity of whoever wrote the message. */
export interface Requester {
  desk: InboundDeskName;
  /** The desk's user / contact id. */
  id?: string;
  /** The requester's email, as the desk verified it (Freshdesk keys on this). */
  email?: string;
  /** The desk's external id for the user (set by the operator's own sign-in integration), when present. */
  externalId?: string | null;
}

/** The casework customer id of a requester, or undefined when casework does not know them. */
export type CustomerLookup = (requester: Requester) => string | undefined;

const CUSTOMER_ID = /^[A-Za-z0-9_.:@-]{1,100}$/;

/**
 * Parses "zendesk:123=C-1001,freshdesk:jane@example.com=C-1003" into a map keyed
 * "desk:requester" (emails lower-cased). Throws naming the entry that is wrong.
 */
export function parseDeskCustomers(spec: string): Map<string, string> {
  const map = new Map<string, string>();
  for (const raw of spec.split(',')) {
    const entry = raw.trim();
    if (!entry) continue;
    const match = /^(zendesk|intercom|freshdesk):([^=\s]+)=(\S+)$/.exec(entry);
    if (!match || !CUSTOMER_ID.test(match[3]!)) {
      throw new Error(`CASEWORK_DESK_CUSTOMERS: "${entry}" is not desk:<requester>=<customer id> (desk one of zendesk, intercom, freshdesk)`);
    }
    map.set(`${match[1]}:${match[2]!.toLowerCase()}`, match[3]!);
  }
  return map;
}

/**
 * The lookup configuration defines: the explicit map first (by id, then email), then, only
 * when the operator said the desk's external id is their customer id, that external id.
 */
export function configuredCustomerLookup(options: { customers: Map<string, string>; trustExternalId: boolean }): CustomerLookup {
  return (requester) => {
    for (const key of [requester.id, requester.email]) {
      if (!key) continue;
      const found = options.customers.get(`${requester.desk}:${key.toLowerCase()}`);
      if (found) return found;
    }
    if (options.trustExternalId && requester.externalId && CUSTOMER_ID.test(requester.externalId)) return requester.externalId;
    return undefined;
  };
}
