import { createHash, timingSafeEqual } from 'node:crypto';
import { BadInputError } from '../errors';
import type { IncomingMessage } from 'node:http';

// Who a request speaks for. The endpoint never takes a customer id from a message: it takes
// it from the credentials, and a body naming another customer is refused.
//
// CASEWORK_API_KEYS = "<key>:<grant>[|<grant>…][,<key>:<grant>[|<grant>…]…]", one entry per
// key; the caller sends `Authorization: Bearer <key>`. A grant is one of
//   *                 the ticketing system's trusted key: events for any customer, read any
//                     investigation, the memory routes of any customer
//   <customerId>      events, investigations and memory of that customer only (several with |)
//   approver:<name>   approve / deny refunds as <name> (the body's approver must be <name>),
//                     and read any investigation, to see what is pending
//   approver:*        approve / deny as any approver the body names (a support console that
//                     authenticates its own staff); the workflow's list and limits still apply
//   support           the support team in the console: read any investigation and any
//                     customer's memory, correct and forget notes; may not send events or decide
// Deciding refunds is a separate grant on purpose: the key that feeds tickets in cannot pay
// money out. One key may hold both (`*|approver:*`). Keys are at least 16 characters without
// ":", ",", "|" or spaces; only their SHA-256 digests are kept, compared in constant time.
// No keys configured: the endpoint refuses to start, unless CASEWORK_HTTP_OPEN=true (or
// `casework serve --open`) asks for open local mode, where every caller is trusted and the
// server listens on 127.0.0.1 only.

/** Shortest API key accepted: anything shorter is guessable. */
export const MIN_KEY_LENGTH = 16;

/** What one credential may do. */
export interface Principal {
  /** Names the key in logs and audit trails without revealing it: "key:<first 8 hex of its SHA-256>". */
  label: string;
  /** True for the ticketing system's key: it may speak for any customer. */
  anyCustomer: boolean;
  customers: ReadonlySet<string>;
  /** Approver names this key may decide refunds as; "*" for any. Empty: may not decide. */
  approvers: ReadonlySet<string>;
  /** True for the support team's grant: read cases and memory, correct and forget notes. */
  support: boolean;
}

/** CASEWORK_API_KEYS is malformed; the message names the entry by position, never the key. */
export class ApiKeyConfigError extends BadInputError {}

/** Turns a request's credentials into a principal, or undefined when they are missing or wrong. */
export interface Authenticator {
  /** "keys" when API keys are configured, "open" in open local mode. */
  mode: 'keys' | 'open';
  /** How many keys are configured (0 in open mode). */
  keyCount: number;
  authenticate(req: IncomingMessage): Principal | undefined;
  /** The principal of a key presented some other way (the console's sign-in form), or undefined. */
  authenticateKey(key: string): Principal | undefined;
  /** What the key labelled `label` may do now, or undefined once no configured key has that label (it was revoked). */
  principalOfLabel(label: string): Principal | undefined;
}

interface KeyEntry {
  digest: Buffer;
  principal: Principal;
}

const KEY_SHAPE = /^[^\s:,|]+$/;
const digestOf = (key: string) => createHash('sha256').update(key, 'utf8').digest();

/** Parses CASEWORK_API_KEYS (format above) into key digests and what each may do. */
export function parseApiKeys(spec: string): KeyEntry[] {
  const entries = spec
    .split(',')
    .map((e) => e.trim())
    .filter(Boolean);
  const seen = new Set<string>();
  return entries.map((entry, index) => {
    const where = `CASEWORK_API_KEYS entry ${index + 1}`;
    const colon = entry.indexOf(':');
    if (colon < 0) throw new ApiKeyConfigError(`${where} is not <key>:<grant>[|<grant>…] (grants: *, a customer id, approver:<name>, support)`);
    const key = entry.slice(0, colon);
    const grants = entry
      .slice(colon + 1)
      .split('|')
      .map((g) => g.trim())
      .filter(Boolean);
    if (!KEY_SHAPE.test(key)) throw new ApiKeyConfigError(`${where}: the key must not contain spaces, ",", ":" or "|"`);
    if (key.length < MIN_KEY_LENGTH) {
      throw new ApiKeyConfigError(`${where}: the key is ${key.length} characters; use at least ${MIN_KEY_LENGTH} (e.g. \`openssl rand -hex 24\`)`);
    }
    if (!grants.length) throw new ApiKeyConfigError(`${where} grants nothing; add *, a customer id or approver:<name> after the ":"`);
    const digest = digestOf(key);
    const hex = digest.toString('hex');
    if (seen.has(hex)) throw new ApiKeyConfigError(`${where} repeats an earlier key; give each key one entry`);
    seen.add(hex);
    const customers = new Set<string>();
    const approvers = new Set<string>();
    let anyCustomer = false;
    let support = false;
    for (const grant of grants) {
      if (grant === '*') anyCustomer = true;
      else if (grant === 'support') support = true;
      else if (grant.startsWith('approver:')) {
        const name = grant.slice('approver:'.length);
        if (!name) throw new ApiKeyConfigError(`${where}: "approver:" needs a name, or * for any approver`);
        approvers.add(name);
      } else customers.add(grant);
    }
    return { digest, principal: { label: `key:${hex.slice(0, 8)}`, anyCustomer, customers, approvers, support } };
  });
}

/** The bearer token of a request, or undefined. */
export function bearerToken(req: IncomingMessage): string | undefined {
  const header = req.headers.authorization;
  const match = header ? /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(header) : null;
  return match ? match[1] : undefined;
}

/** The principal of open local mode: trusted for everything. */
export const OPEN_PRINCIPAL: Principal = {
  label: 'open-local-mode',
  anyCustomer: true,
  customers: new Set(),
  approvers: new Set(['*']),
  support: true,
};

/**
 * Builds the authenticator from configuration. Throws ApiKeyConfigError when no keys are
 * configured and open local mode was not asked for, so an endpoint never starts unprotected
 * by accident.
 */
export function createAuthenticator(options: { apiKeys?: string; open?: boolean }): Authenticator {
  const entries = options.apiKeys?.trim() ? parseApiKeys(options.apiKeys) : [];
  if (!entries.length) {
    if (!options.open) {
      throw new ApiKeyConfigError(
        'the ticket-event endpoint has no API keys: set CASEWORK_API_KEYS="<key>:*" for the ticketing system ' +
          '(format: key:grant|grant,… with grants *, a customer id, approver:<name>), ' +
          'or, for local development only, CASEWORK_HTTP_OPEN=true / `casework serve --open` (no authentication, 127.0.0.1 only)',
      );
    }
    return {
      mode: 'open',
      keyCount: 0,
      authenticate: () => OPEN_PRINCIPAL,
      authenticateKey: () => OPEN_PRINCIPAL,
      principalOfLabel: (label) => (label === OPEN_PRINCIPAL.label ? OPEN_PRINCIPAL : undefined),
    };
  }
  const byKey = (token: string): Principal | undefined => {
    // Digests have one length, and every entry is compared, so timing says nothing about which key came close.
    const presented = digestOf(token);
    let found: Principal | undefined;
    for (const entry of entries) {
      if (timingSafeEqual(presented, entry.digest) && !found) found = entry.principal;
    }
    return found;
  };
  return {
    mode: 'keys',
    keyCount: entries.length,
    authenticate(req) {
      const token = bearerToken(req);
      return token === undefined ? undefined : byKey(token);
    },
    authenticateKey: (key) => (key ? byKey(key) : undefined),
    principalOfLabel: (label) => entries.find((entry) => entry.principal.label === label)?.principal,
  };
}

/** True when the principal may speak for `customerId`. */
export function maySpeakFor(principal: Principal, customerId: string): boolean {
  return principal.anyCustomer || principal.customers.has(customerId);
}

/** True when the principal may read any customer's investigation (the ticketing system, approvers, support). */
export function mayReadAll(principal: Principal): boolean {
  return principal.anyCustomer || principal.approvers.size > 0 || principal.support;
}

/** True when the principal may decide refunds at all. */
export function mayDecide(principal: Principal): boolean {
  return principal.approvers.size > 0;
}

/** True when the principal may decide refunds as `approver`. */
export function mayDecideAs(principal: Principal, approver: string): boolean {
  return principal.approvers.has('*') || principal.approvers.has(approver);
}

/** The one customer a principal speaks for, when it speaks for exactly one; lets a body leave customerId out. */
export function soleCustomer(principal: Principal): string | undefined {
  return !principal.anyCustomer && principal.customers.size === 1 ? [...principal.customers][0] : undefined;
}

/** The one approver a principal decides as, when it names exactly one; lets a body leave approver out. */
export function soleApprover(principal: Principal): string | undefined {
  return principal.approvers.size === 1 && !principal.approvers.has('*') ? [...principal.approvers][0] : undefined;
}
