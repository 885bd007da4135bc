import { ExternalStorage, type DataConverter, type Payload, type StorageDriver, type StorageDriverSelectContext } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import type { Pool } from 'pg';
import type { Config } from '../config';
import { BadInputError } from '../errors';
import { CustomerInlineCodec } from './codec/customer-inline-codec';
import { EncryptionCodec } from './codec/encryption-codec';
import { loadKeyring, type Keyring } from './codec/keys';
import { customerKeysOf } from './codec/body-codec';
import { investigationId } from '../schemas/event';
import { CustomerPayloadDriver } from './storage/customer-driver';
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

/**
 * The history's payload codec: with CASEWORK_CUSTOMER_PAYLOADS=inline and a database, each
 * investigation's payloads under its customer's key in history itself (customer-inline-codec.ts),
 * the process's customer keys served stale while Postgres is unreachable; else the encryption codec.
 */
export function historyCodecFor(config: Config, pool: Pool | undefined): EncryptionCodec {
  const codec = codecFor(config);
  if (config.CASEWORK_CUSTOMER_PAYLOADS !== 'inline' || !pool) return codec;
  const keys = customerKeysOf(pool, codec);
  keys.serveStaleIfError();
  return new CustomerInlineCodec(codec.keyring, codec.nonceMode, keys);
}

/** The failure converter module (messages and stacks encoded, hence encrypted); a prebuilt workflow bundle must be built with it. */
export const FAILURE_CONVERTER_PATH = require.resolve('./failure-converter');

/**
 * The store of investigations' payloads under their customer's key (src/temporal/storage/customer-driver.ts),
 * or none: CASEWORK_CUSTOMER_PAYLOADS=false, a process without a database, or a codec that holds no master keys.
 */
export function customerDriverFor(config: Config, pool: Pool | undefined, codec: unknown): CustomerPayloadDriver | undefined {
  if (config.CASEWORK_CUSTOMER_PAYLOADS !== 'true' || !pool || !(codec instanceof EncryptionCodec)) return undefined;
  return new CustomerPayloadDriver(pool, customerKeysOf(pool, codec));
}

const INVESTIGATION_PREFIX = investigationId('');
const PayloadProto = temporal.api.common.v1.Payload;

/**
 * Which store a payload goes to: every payload of an investigation to its customer's store
 * (nothing a customer wrote, nor anything derived from it, stays in history), others to the
 * size-threshold store when they are at least the threshold, else inline.
 */
function selectorFor(customer: StorageDriver | undefined, bySize: StorageDriver | undefined, threshold: number) {
  return (context: StorageDriverSelectContext, payload: Payload): StorageDriver | null => {
    if (customer && context.target?.kind === 'workflow' && context.target.id?.startsWith(INVESTIGATION_PREFIX)) return customer;
    if (!bySize) return null;
    return PayloadProto.encode(payload).finish().byteLength >= threshold ? bySize : null;
  };
}

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
  const codec = options.codec ?? historyCodecFor(config, pool);
  const driver = options.driver ?? storageDriverFor(config, pool);
  const customer = customerDriverFor(config, pool, codec);
  const threshold = config.CASEWORK_PAYLOAD_STORE_THRESHOLD_BYTES;
  const drivers = [driver, customer].filter((d): d is StorageDriver => d !== undefined);
  return {
    failureConverterPath: FAILURE_CONVERTER_PATH,
    payloadCodecs: [codec],
    ...(customer
      ? { externalStorage: new ExternalStorage({ drivers, driverSelector: selectorFor(customer, driver, threshold), payloadSizeThreshold: 0 }) }
      : driver
        ? { externalStorage: new ExternalStorage({ drivers: [driver], payloadSizeThreshold: threshold }) }
        : {}),
  };
}
