import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { defaultPayloadConverter, type LoadedDataConverter } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import { decodeHistoryPayloads } from '../../src/temporal/history-payloads';

// Committed histories (test/fixtures/*-history.json) for the replay tests. A recorded history is
// encrypted and its large payloads are stored by reference under the recording test's own keys
// and database, gone after it; so a fixture is written decoded, every payload as plain JSON, and
// payloads without the codec's metadata pass through the worker's decode unchanged on replay.
// Written and read with @temporalio/proto's own codec, the one the client and worker use.

const History = temporal.api.history.v1.History;
type History = temporal.api.history.v1.IHistory;
type Json = string | number | boolean | null | Json[] | { [key: string]: Json };

/** The path of the committed fixture `name` (e.g. "dispute-history.json"). */
export const fixturePath = (name: string): string => join(__dirname, '..', 'fixtures', name);

/** True when `CASEWORK_RECORD_HISTORY=1` asks the replay tests to rewrite their fixtures. */
export const recording = (): boolean => process.env.CASEWORK_RECORD_HISTORY === '1';

/** True when the fixture has been recorded. */
export const hasFixture = (name: string): boolean => existsSync(fixturePath(name));

/** The committed history `name`. */
export function readFixture(name: string): History {
  return History.fromObject(JSON.parse(readFileSync(fixturePath(name), 'utf8')));
}

/** The history object with every encrypted or stored payload replaced by its plain JSON payload. */
async function decoded(converter: LoadedDataConverter, value: Json): Promise<Json> {
  if (Array.isArray(value)) return Promise.all(value.map((v) => decoded(converter, v)));
  if (value === null || typeof value !== 'object') return value;
  const metadata = value.metadata as Record<string, string> | undefined;
  if (metadata?.encoding && typeof value.data === 'string' && Buffer.from(metadata.encoding, 'base64').toString() !== 'json/plain') {
    const payload = temporal.api.common.v1.Payload.fromObject(value);
    const [plain] = await decodeHistoryPayloads(converter, [payload]);
    return temporal.api.common.v1.Payload.toObject(temporal.api.common.v1.Payload.create(defaultPayloadConverter.toPayload(plain)), { bytes: String });
  }
  const out: { [key: string]: Json } = {};
  for (const [key, inner] of Object.entries(value)) out[key] = await decoded(converter, inner);
  return out;
}

/** Writes `history`, decoded with `converter`, as the committed fixture `name`. */
export async function writeFixture(converter: LoadedDataConverter, name: string, history: History): Promise<void> {
  const plain = await decoded(converter, History.toObject(History.create(history), { longs: String, enums: String, bytes: String }));
  writeFileSync(fixturePath(name), JSON.stringify(plain, null, 1) + '\n');
}
