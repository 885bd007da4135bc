import { ExternalStorage, type DataConverter, type StorageDriver } from '@temporalio/common';
import type { Pool } from 'pg';
import type { Config } from '../config';
import { BadInputError } from '../errors';
import { EncryptionCodec } from './codec/encryption-codec';
import { loadKeyring, type Keyring } from './codec/keys';
import { PostgresStorageDriver } from './storage/postgres-driver';
import { awsObjectStore, S3StorageDriver } from './storage/s3-driver';

/** Where large payloads go: CASEWORK_PAYLOAD_STORE when set, else Postgres in a process that has a database, else nowhere (inline). */
export function payloadStoreFor(config: Pick<Config, 'CASEWORK_PAYLOAD_STORE'>, hasDatabase: boolean): 'postgres' | 's3' | 'off' {
  return config.CASEWORK_PAYLOAD_STORE ?? (hasDatabase ? 'postgres' : 'off');
}

/** The storage driver the payload store names, or none when payloads stay inline. */
export function storageDriverFor(config: Config, pool: Pool | undefined): StorageDriver | undefined {
  switch (payloadStoreFor(config, pool !== undefined)) {
    case 'postgres':
      if (!pool) throw new BadInputError('CASEWORK_PAYLOAD_STORE=postgres needs a database pool');
      return new PostgresStorageDriver(pool);
    case 's3':
      return new S3StorageDriver(awsObjectStore(config), config.CASEWORK_S3_PREFIX);
    case 'off':
      return undefined;
  }
}

/** The encryption codec from the configured keys (a generated dev key outside production mode). */
export function codecFor(config: Config, keyring: Keyring = loadKeyring(config)): EncryptionCodec {
  return new EncryptionCodec(keyring, config.CASEWORK_CODEC_NONCE);
}

/** The failure converter module (messages and stacks encoded, hence encrypted); a prebuilt workflow bundle must be built with it. */
export const FAILURE_CONVERTER_PATH = require.resolve('./failure-converter');

/**
 * The data converter the worker, every client and the replay test share. The SDK runs its
 * stages in a fixed order: payload converter (JSON, in the workflow sandbox) → payload codecs
 * (encryption, outside it) → External Storage (payloads of at least the threshold replaced by a
 * reference), and the reverse on the way in. So what storage holds is already ciphertext, and
 * the threshold is measured on the encrypted payload. Failure messages and stacks are encoded
 * into payloads first (FAILURE_CONVERTER_PATH), so the codec encrypts them too.
 */
export function dataConverterFor(
  config: Config,
  pool: Pool | undefined,
  options: { codec?: Pick<EncryptionCodec, 'encode' | 'decode'>; driver?: StorageDriver } = {},
): DataConverter {
  const codec = options.codec ?? codecFor(config);
  const driver = options.driver ?? storageDriverFor(config, pool);
  return {
    failureConverterPath: FAILURE_CONVERTER_PATH,
    payloadCodecs: [codec],
    ...(driver ? { externalStorage: new ExternalStorage({ drivers: [driver], payloadSizeThreshold: config.CASEWORK_PAYLOAD_STORE_THRESHOLD_BYTES }) } : {}),
  };
}
