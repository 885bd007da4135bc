import type { LoadedDataConverter, Payload } from '@temporalio/common';
import type { temporal } from '@temporalio/proto';
import { decodeArrayFromPayloads, ExternalStorageRunner, isReferencePayload } from '@temporalio/common/lib/internal-non-workflow';
import { BadInputError } from '../errors';

/** The marker a local activity leaves in history (sdk-core's name): its details hold `data` (activity type, id) and `result`. */
export const LOCAL_ACTIVITY_MARKER = 'core_local_activity';

/** A history holds payloads stored by reference, and this process has no payload store to fetch them from. */
export class NoPayloadStoreError extends BadInputError {}

/**
 * The values of payloads read from a raw history (fetchHistory hands them back as the server
 * holds them): stored references fetched first, then decrypted and JSON-parsed, the inbound
 * order of the data converter. The SDK's decodeArrayFromPayloads alone skips the first step.
 */
export async function decodeHistoryPayloads(converter: LoadedDataConverter, payloads: Payload[] | null | undefined): Promise<unknown[]> {
  let resolved = payloads ?? [];
  if (resolved.some(isReferencePayload)) {
    if (!converter.externalStorage) {
      throw new NoPayloadStoreError(
        'this history holds payloads stored by reference, and this process has no payload store to read them from: ' +
          'give it the database the workers use (DATABASE_URL) or the same CASEWORK_PAYLOAD_STORE',
      );
    }
    resolved = await new ExternalStorageRunner(converter.externalStorage).retrieve(resolved);
  }
  return decodeArrayFromPayloads(converter, resolved);
}

/** The local activity a history event records as its marker (type and id, decoded), or undefined when the event is no such marker. */
export async function localActivityOf(
  converter: LoadedDataConverter,
  event: temporal.api.history.v1.IHistoryEvent,
): Promise<{ activity_type?: string; activity_id?: string } | undefined> {
  const marker = event.markerRecordedEventAttributes;
  if (marker?.markerName !== LOCAL_ACTIVITY_MARKER) return undefined;
  const [data] = (await decodeHistoryPayloads(converter, marker.details?.data?.payloads)) as ({ activity_type?: string; activity_id?: string } | undefined)[];
  return data;
}
