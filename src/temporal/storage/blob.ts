import { createHash } from 'node:crypto';
import type { Payload } from '@temporalio/common';
import { temporal } from '@temporalio/proto';

const PayloadProto = temporal.api.common.v1.Payload;

/** The claim-data key holding a stored payload's SHA-256 (hex). */
export const SHA256_CLAIM = 'sha256';

/** A payload as stored bytes, named by their SHA-256. */
export interface Blob {
  sha256: string;
  bytes: Buffer;
}

/** Serializes a payload and names it by the SHA-256 of those bytes. */
export function toBlob(payload: Payload): Blob {
  const encoded = PayloadProto.encode(payload).finish();
  const bytes = Buffer.from(encoded.buffer, encoded.byteOffset, encoded.byteLength);
  return { sha256: createHash('sha256').update(bytes).digest('hex'), bytes };
}

/** The payload back from stored bytes, after checking they still hash to their name. */
export function fromBlob(sha256: string, bytes: Uint8Array, where: string): Payload {
  const actual = createHash('sha256').update(bytes).digest('hex');
  if (actual !== sha256) throw new Error(`stored payload ${sha256} in ${where} is corrupt: its bytes hash to ${actual}`);
  return PayloadProto.decode(bytes);
}

/** The hash a claim names, checked to be one. */
export function claimedHash(claimData: Record<string, string>, driver: string): string {
  const hash = claimData[SHA256_CLAIM];
  if (!hash || !/^[0-9a-f]{64}$/.test(hash)) throw new Error(`a ${driver} claim has no valid ${SHA256_CLAIM}`);
  return hash;
}
