import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { InboundDeskName, RejectedWebhook, WebhookDelivery } from './types';
import { decodeEntities } from './html-entities';

// The checks every inbound adapter makes, in the order that keeps a forged request cheap:
// signature on the raw bytes first (nothing is parsed before it passes), then the replay
// window, then the bytes themselves, then the fields.

/** A header's value by case-insensitive name; the first when the header was repeated. */
export function header(delivery: WebhookDelivery, name: string): string | undefined {
  const lower = name.toLowerCase();
  for (const [key, value] of Object.entries(delivery.headers)) {
    if (key.toLowerCase() !== lower || value === undefined) continue;
    return Array.isArray(value) ? value[0] : value;
  }
  return undefined;
}

/** HMAC of the parts, concatenated, as a digest buffer. */
export function hmac(algorithm: 'sha1' | 'sha256', secret: string, ...parts: (string | Buffer)[]): Buffer {
  const mac = createHmac(algorithm, secret);
  for (const part of parts) mac.update(part);
  return mac.digest();
}

/**
 * Compares in constant time. Both sides are hashed first so buffers of different lengths
 * compare too, without the early exit that would tell a forger the expected length.
 */
export function safeEqual(a: Buffer | string, b: Buffer | string): boolean {
  const ha = createHash('sha256').update(a).digest();
  const hb = createHash('sha256').update(b).digest();
  return timingSafeEqual(ha, hb);
}

/** A rejection, with the status its reason always has. */
export function reject(desk: InboundDeskName, reason: RejectedWebhook['reason'], message: string): RejectedWebhook {
  return { outcome: 'rejected', desk, reason, status: reason === 'malformed' ? 202 : 401, message };
}

/** Seconds since the epoch from a signature timestamp: ISO 8601 (Zendesk) or whole seconds. */
export function timestampSeconds(value: string): number | undefined {
  const trimmed = value.trim();
  if (/^\d{9,11}$/.test(trimmed)) return Number(trimmed);
  if (!/^\d{4}-\d{2}-\d{2}T/.test(trimmed)) return undefined;
  const ms = Date.parse(trimmed);
  return Number.isFinite(ms) ? Math.floor(ms / 1000) : undefined;
}

/**
 * Undefined when `sentAt` (seconds) is within the window of `now`, else a message. Deliveries
 * from the future are refused beyond the same window (clock skew is allowed, not unbounded).
 */
export function outsideWindow(sentAt: number, now: Date, windowSeconds: number): string | undefined {
  const age = Math.floor(now.getTime() / 1000) - sentAt;
  if (Math.abs(age) <= windowSeconds) return undefined;
  return age > 0 ? `delivery is ${age} s old, older than the ${windowSeconds} s replay window` : `delivery is dated ${-age} s in the future`;
}

/**
 * The body as a JSON object, or the reason it is not one. NUL bytes and invalid UTF-8 are
 * refused before parsing: no desk sends them, and they break logs and Postgres text columns.
 */
export function parseBody(body: Buffer): { value: Record<string, unknown> } | { problem: string } {
  if (body.length === 0) return { problem: 'body: empty; expected a JSON object' };
  if (body.includes(0)) return { problem: 'body: contains a NUL byte' };
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(body);
  } catch {
    return { problem: 'body: not valid UTF-8' };
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { problem: 'body: not valid JSON' };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return { problem: 'body: expected a JSON object' };
  return { value: value as Record<string, unknown> };
}

/** Text a customer wrote, as casework stores it: HTML tags dropped, entities decoded, whitespace tidied. */
export function plainText(html: string): string {
  return decodeEntities(
    html
      .replace(/<br\s*\/?>/gi, '\n')
      .replace(/<\/(p|div|li|h[1-6])>/gi, '\n')
      .replace(/<[^>]*>/g, ''),
  )
    .replace(/[ \t]+\n/g, '\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

/** Zod problems as "prefix.field: problem; …", so a 400 names the field as it sits in the delivery. */
export function fieldProblems(error: { issues: { path: PropertyKey[]; message: string }[] }, prefix?: string): string {
  return error.issues
    .map((issue) => {
      const path = [prefix, ...issue.path.map(String)].filter((part) => part !== undefined && part !== '').join('.');
      return `${path || 'body'}: ${issue.message}`;
    })
    .join('; ');
}
