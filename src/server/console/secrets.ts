import { hkdfSync } from 'node:crypto';
import type { Keyring } from '../../temporal/codec/keys';

// The console's keys, derived from the payload keyring (CASEWORK_CODEC_KEYS) that every replica
// already holds, so any replica checks a form's CSRF token or opens a customer reference another
// one made, and no second secret has to be distributed. Each is an HKDF of a payload key under
// its own label: knowing a console key reveals nothing of the payload key, and rotating the
// payload keys (newest last) rotates these with them, the older ones still accepted.

/** One generation of console keys, named by the payload key they come from. */
export interface ConsoleKey {
  id: string;
  /** HMAC-SHA256 key of CSRF tokens. */
  csrf: Buffer;
  /** AES-256-GCM key of customer references. */
  refs: Buffer;
}

/** The console keys of every payload key; `current` makes new tokens and references. */
export interface ConsoleSecrets {
  current: ConsoleKey;
  byId: ReadonlyMap<string, ConsoleKey>;
}

function derive(key: Buffer, label: string): Buffer {
  return Buffer.from(hkdfSync('sha256', key, Buffer.alloc(0), `casework console ${label} v1`, 32));
}

/** The console keys derived from a payload keyring. */
export function consoleSecrets(keyring: Keyring): ConsoleSecrets {
  const byId = new Map<string, ConsoleKey>();
  for (const { id, key } of keyring.byId.values()) byId.set(id, { id, csrf: derive(key, 'csrf'), refs: derive(key, 'customer refs') });
  const current = byId.get(keyring.current.id);
  if (!current) throw new Error('the keyring has no current key');
  return { current, byId };
}
