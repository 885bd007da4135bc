import { defaultPayloadConverter, type PayloadCodec } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import type { Pool } from 'pg';
import { TranscriptLog } from '../../db/transcript-log';
import type { BodyCodec } from '../../schemas/transcript-log';
import { EncryptionCodec, KEY_ID_METADATA } from './encryption-codec';
import { CustomerKeys } from './customer-keys';
import { CUSTOMER_KEY_PREFIX } from './key-wrap';

const PayloadProto = temporal.api.common.v1.Payload;

async function encodeWith(codec: PayloadCodec, value: unknown): Promise<Buffer> {
  const [encoded] = await codec.encode([defaultPayloadConverter.toPayload(value ?? null)]);
  const bytes = PayloadProto.encode(encoded!).finish();
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

async function decodeWith(codec: PayloadCodec, payload: temporal.api.common.v1.IPayload): Promise<unknown> {
  const [decoded] = await codec.decode([payload]);
  return defaultPayloadConverter.fromPayload(decoded!);
}

/**
 * Transcript-log bodies through the payload codec: JSON as a Temporal payload, encoded by the
 * codec (encrypted, the key id in its metadata), stored as the payload's bytes. So the log is
 * encrypted with the same keys as history and stored references, and rotates with them.
 */
export function bodyCodecOf(codec: PayloadCodec): BodyCodec {
  return {
    encode: (value) => encodeWith(codec, value),
    decode: (bytes) => decodeWith(codec, PayloadProto.decode(bytes)),
    // The encryption codec holds the master keys, so a log opened on a database encrypts each
    // customer's content under that customer's data key, kept wrapped in that database.
    ...(codec instanceof EncryptionCodec ? { forPool: (pool: Pool) => customerBodyCodec(codec, customerKeysOf(pool, codec)) } : {}),
  };
}

const PREFIX_BYTES = Buffer.from(CUSTOMER_KEY_PREFIX);

/** The customer key id a payload's key-id metadata names, or undefined for a master key id: compared as bytes, so the common case allocates nothing. */
function customerKeyIdOf(raw: Uint8Array | null | undefined): string | undefined {
  if (!raw || raw.length <= PREFIX_BYTES.length) return undefined;
  for (let i = 0; i < PREFIX_BYTES.length; i++) if (raw[i] !== PREFIX_BYTES[i]) return undefined;
  return Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength).toString();
}

/**
 * Bodies under per-customer data keys (envelope encryption): a body whose scope names a
 * customer, or an investigation whose ticket has an owner, is encrypted under that customer's
 * key (key id `cust:<customerId>:<n>` in its metadata); any other stays under the deployment
 * key. Decoding follows the key id in the metadata, so bodies written before per-customer keys
 * (a master key id) still decode, and a destroyed customer key is a CustomerErasedError.
 */
export function customerBodyCodec(deployment: PayloadCodec, keys: CustomerKeys): BodyCodec {
  return {
    async encode(value, scope) {
      const customerId = scope?.customerId ?? (scope?.workflowId ? await keys.customerOfWorkflow(scope.workflowId) : undefined);
      return encodeWith(customerId ? await keys.encoderFor(customerId) : deployment, value);
    },
    // Not async: a cached key decodes with no more promise hops than the deployment key does.
    decode(bytes) {
      const payload = PayloadProto.decode(bytes);
      const keyId = customerKeyIdOf(payload.metadata?.[KEY_ID_METADATA]);
      if (keyId === undefined) return decodeWith(deployment, payload);
      const cached = keys.cachedDecoder(keyId);
      return cached ? decodeWith(cached, payload) : keys.decoderFor(keyId).then((codec) => decodeWith(codec, payload));
    },
  };
}

// One key cache per database pool and keyring in a process, so every log opened on it shares
// the unwrapped keys and an erasure run here evicts them for all.
const keysByPool = new WeakMap<Pool, Map<string, CustomerKeys>>();

/** The process's CustomerKeys for `pool`, its master keys those of `codec`. */
export function customerKeysOf(pool: Pool, codec: EncryptionCodec): CustomerKeys {
  let forPool = keysByPool.get(pool);
  if (!forPool) keysByPool.set(pool, (forPool = new Map<string, CustomerKeys>()));
  const ring = codec.keyring;
  const id = [...ring.byId.keys()].join(',');
  let keys = forPool.get(id);
  if (!keys) forPool.set(id, (keys = new CustomerKeys(pool, ring, { nonceMode: codec.nonceMode })));
  return keys;
}

/** The transcript log of `pool`, each customer's entries and kept replies under their own data key. */
export function openTranscriptLog(pool: Pool, codec: EncryptionCodec): TranscriptLog {
  return new TranscriptLog(pool, customerBodyCodec(codec, customerKeysOf(pool, codec)));
}
