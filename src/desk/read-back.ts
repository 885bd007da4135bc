import { markerLine } from './client';
import { decodeEntities } from './html-entities';

// Exactly once on desks that take no idempotency key and have no private field on a reply
// (Intercom, Freshdesk). A public reply must not carry casework's key, so the key goes into an
// internal note posted just before the reply ("reply 3 follows"), and the reply is recognised on
// a retry by reading the thread back: after that note, before the next note of casework's, a
// public post by casework with the reply's words. The note first, then the reply: a retry that
// finds the note but no reply posts the reply alone; one that finds neither posts both.

/** One post of a desk thread, as the read-back needs it. */
export interface ThreadEntry {
  /** The post's text (HTML is fine: compared as text). */
  body: string;
  /** Whether casework's own agent or admin wrote it. */
  byCasework: boolean;
  /** Whether the customer sees it. */
  isPublic: boolean;
}

/** What the thread already holds of a post. */
export type ReadBack = 'posted' | 'note_only' | 'absent';

const ANY_MARKER = /ref: cw[0-9a-f]{24}/;

/** The internal note that announces a reply and carries its key. */
export function replyMarkerNote(sequence: number, key: string): string {
  return `casework: reply ${sequence} to the customer follows.\n${markerLine(key)}`;
}

/** Text of an HTML body for comparison: tags dropped, the usual entities read, whitespace collapsed. */
export function textOf(html: string): string {
  return decodeEntities(html.replace(/<br\s*\/?>|<\/p>|<\/div>/gi, ' ').replace(/<[^>]*>/g, ''))
    .replace(/\s+/g, ' ')
    .trim();
}

/**
 * Whether the thread holds the post with `key`. A note carries its key itself; a reply is
 * "posted" when its marker note is followed (before any later marker) by casework's public post
 * with the same words, "note_only" when only the note made it.
 */
export function readBack(entries: readonly ThreadEntry[], kind: 'reply' | 'note', key: string, body: string): ReadBack {
  const at = entries.findIndex((e) => e.body.includes(key));
  if (at < 0) return 'absent';
  if (kind === 'note') return 'posted';
  const words = textOf(body);
  for (const entry of entries.slice(at + 1)) {
    if (ANY_MARKER.test(entry.body)) break;
    if (entry.byCasework && entry.isPublic && textOf(entry.body) === words) return 'posted';
  }
  return 'note_only';
}
