import { defaultPayloadConverter, type PayloadCodec } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import type { BodyCodec } from '../../schemas/transcript-log';

const PayloadProto = temporal.api.common.v1.Payload;

/**
 * Transcript-log bodies through the payload codec: JSON as a Temporal payload, encoded by the
 * codec (encrypted, the key id in its metadata), stored as the payload's bytes. So the log is
 * encrypted with the same keys as history and stored references, and rotates with them.
 */
export function bodyCodecOf(codec: PayloadCodec): BodyCodec {
  return {
    async encode(value) {
      const [encoded] = await codec.encode([defaultPayloadConverter.toPayload(value ?? null)]);
      const bytes = PayloadProto.encode(encoded!).finish();
      return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    },
    async decode(bytes) {
      const [decoded] = await codec.decode([PayloadProto.decode(bytes)]);
      return defaultPayloadConverter.fromPayload(decoded!);
    },
  };
}
