import { randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { TLSSocket } from 'node:tls';
import type { Principal } from '../auth';

// Console sessions: a signed-in person's principal (from the API key they signed in with, which
// is never kept), their name for the audit trail and approvals, and the session's CSRF token.
// Held in this process's memory: a restart signs everyone out, which is the safe way to fail.
// The cookie carries only a random id: HttpOnly, SameSite=Strict, and Secure over TLS.

/** The session cookie's name. */
export const SESSION_COOKIE = 'casework_console';
/** How long a session lasts without use. */
export const SESSION_IDLE_MS = 8 * 60 * 60_000;
/** Most sessions held at once; the longest idle go first. */
const MAX_SESSIONS = 10_000;

/** One signed-in person. */
export interface Session {
  id: string;
  principal: Principal;
  /** Who the person said they are; the approver name when the key decides as one person. */
  person: string;
  csrf: string;
  lastSeen: number;
  /** One message for the next page (what the last form did), then cleared. */
  flash?: { kind: 'ok' | 'error'; text: string };
}

/** Where sessions live. */
export interface SessionStore {
  create(principal: Principal, person: string): Session;
  /** The session a request's cookie names, if it exists and is not idle too long; touching it. */
  of(req: IncomingMessage): Session | undefined;
  end(id: string): void;
}

/** The cookies of a request, by name (the first of each). */
export function cookiesOf(req: IncomingMessage): Record<string, string> {
  const out: Record<string, string> = {};
  for (const pair of (req.headers.cookie ?? '').split(';')) {
    const eq = pair.indexOf('=');
    if (eq < 0) continue;
    const name = pair.slice(0, eq).trim();
    if (name && !(name in out)) out[name] = pair.slice(eq + 1).trim();
  }
  return out;
}

/** True when the request reached casework over TLS (directly, or through a proxy that says so). */
export function overTls(req: IncomingMessage): boolean {
  return Boolean((req.socket as TLSSocket).encrypted) || req.headers['x-forwarded-proto'] === 'https';
}

/** The Set-Cookie value for a session id (or an expired one to sign out). */
export function sessionCookie(id: string | null, secure: boolean): string {
  const parts = [`${SESSION_COOKIE}=${id ?? ''}`, 'Path=/console', 'HttpOnly', 'SameSite=Strict'];
  if (id === null) parts.push('Max-Age=0');
  if (secure) parts.push('Secure');
  return parts.join('; ');
}

/** A random token of `bytes` bytes, URL-safe. */
export function randomToken(bytes = 32): string {
  return randomBytes(bytes).toString('base64url');
}

/** An in-memory session store; `now` is injectable for tests of expiry. */
export function memorySessions(options: { idleMs?: number; now?: () => number } = {}): SessionStore {
  const idleMs = options.idleMs ?? SESSION_IDLE_MS;
  const now = options.now ?? Date.now;
  const sessions = new Map<string, Session>();
  return {
    create(principal, person) {
      if (sessions.size >= MAX_SESSIONS) {
        const oldest = sessions.keys().next().value;
        if (oldest !== undefined) sessions.delete(oldest);
      }
      const session: Session = { id: randomToken(), principal, person, csrf: randomToken(), lastSeen: now() };
      sessions.set(session.id, session);
      return session;
    },
    of(req) {
      const id = cookiesOf(req)[SESSION_COOKIE];
      const session = id ? sessions.get(id) : undefined;
      if (!session) return undefined;
      if (now() - session.lastSeen > idleMs) {
        sessions.delete(session.id);
        return undefined;
      }
      session.lastSeen = now();
      // Re-inserted so the map's order is least recently used first.
      sessions.delete(session.id);
      sessions.set(session.id, session);
      return session;
    },
    end(id) {
      sessions.delete(id);
    },
  };
}
