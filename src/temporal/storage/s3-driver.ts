import { StorageDriverClaim, type Payload, type StorageDriver, type StorageDriverRetrieveContext, type StorageDriverStoreContext } from '@temporalio/common';
import type { Config } from '../../config';
import { BadInputError, UnavailableError } from '../../errors';
import { claimedHash, fromBlob, SHA256_CLAIM, toBlob } from './blob';
import { MissingPayloadError } from './postgres-driver';

/** The driver name written into every S3 reference. */
export const S3_DRIVER_NAME = 'casework-s3';

/** The two object operations the driver needs, so it can run against any S3-compatible store. */
export interface ObjectStore {
  /** Writes the object unless one exists under the key; never overwrites. */
  putIfAbsent(key: string, bytes: Buffer, signal?: AbortSignal): Promise<'created' | 'exists'>;
  /** The object's bytes, or undefined when there is none. */
  get(key: string, signal?: AbortSignal): Promise<Uint8Array | undefined>;
}

/**
 * External Storage in an S3-compatible bucket (AWS S3, MinIO): one object per distinct payload,
 * named prefix + SHA-256 of its bytes, written with If-None-Match: * so a retry writes nothing.
 */
export class S3StorageDriver implements StorageDriver {
  readonly name = S3_DRIVER_NAME;
  readonly type = 'casework.s3';

  constructor(
    private readonly objects: ObjectStore,
    private readonly prefix = '',
  ) {}

  async store(context: StorageDriverStoreContext, payloads: Payload[]): Promise<StorageDriverClaim[]> {
    const blobs = payloads.map(toBlob);
    const distinct = [...new Map(blobs.map((b) => [b.sha256, b])).values()];
    await Promise.all(distinct.map((b) => this.objects.putIfAbsent(this.prefix + b.sha256, b.bytes, context.abortSignal)));
    return blobs.map((b) => new StorageDriverClaim({ [SHA256_CLAIM]: b.sha256 }));
  }

  async retrieve(context: StorageDriverRetrieveContext, claims: StorageDriverClaim[]): Promise<Payload[]> {
    return Promise.all(
      claims.map(async (claim) => {
        const hash = claimedHash(claim.claimData, this.name);
        const bytes = await this.objects.get(this.prefix + hash, context.abortSignal);
        if (!bytes) throw new MissingPayloadError(`stored payload ${hash} is not in the bucket (key ${this.prefix}${hash})`);
        return fromBlob(hash, bytes, 'S3');
      }),
    );
  }
}

// eslint-disable-next-line @typescript-eslint/consistent-type-imports -- the optional module's type, without loading it
type S3Module = typeof import('@aws-sdk/client-s3');

/** Loads the optional AWS SDK, saying how to install it when it is absent. */
function loadS3Module(): S3Module {
  try {
    // Optional dependency: only deployments that choose S3 need it installed.
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded only when S3 is configured
    return require('@aws-sdk/client-s3') as S3Module;
  } catch {
    throw new BadInputError('CASEWORK_PAYLOAD_STORE=s3 needs the optional package @aws-sdk/client-s3: npm install @aws-sdk/client-s3');
  }
}

function statusOf(error: unknown): number | undefined {
  return (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
}

/** An ObjectStore over the AWS SDK's S3 client (AWS S3 or MinIO, per CASEWORK_S3_*); `client` overrides the one built from config. */
export function awsObjectStore(
  config: Pick<Config, 'CASEWORK_S3_BUCKET' | 'CASEWORK_S3_ENDPOINT' | 'CASEWORK_S3_REGION' | 'CASEWORK_S3_FORCE_PATH_STYLE'>,
  client?: InstanceType<S3Module['S3Client']>,
): ObjectStore {
  const s3 = loadS3Module();
  const bucket = config.CASEWORK_S3_BUCKET;
  if (!bucket) throw new BadInputError('CASEWORK_PAYLOAD_STORE=s3 needs CASEWORK_S3_BUCKET');
  const s3Client =
    client ??
    new s3.S3Client({
      region: config.CASEWORK_S3_REGION,
      ...(config.CASEWORK_S3_ENDPOINT ? { endpoint: config.CASEWORK_S3_ENDPOINT } : {}),
      forcePathStyle: config.CASEWORK_S3_FORCE_PATH_STYLE === 'true',
      // Temporal retries the task; the SDK's own retries would only stack on top of it.
      maxAttempts: 1,
    });
  return {
    async putIfAbsent(key, bytes, signal) {
      try {
        await s3Client.send(new s3.PutObjectCommand({ Bucket: bucket, Key: key, Body: bytes, IfNoneMatch: '*', ContentType: 'application/x-protobuf' }), { abortSignal: signal });
        return 'created';
      } catch (error) {
        // 412: the object is already there (content-addressed, so it holds these very bytes). 409: a concurrent write of it.
        const status = statusOf(error);
        if (status === 412 || status === 409) return 'exists';
        throw new UnavailableError(`cannot write payload ${key} to S3 bucket ${bucket}: ${(error as Error).message}`, { cause: error });
      }
    },
    async get(key, signal) {
      try {
        const out = await s3Client.send(new s3.GetObjectCommand({ Bucket: bucket, Key: key }), { abortSignal: signal });
        return out.Body ? await out.Body.transformToByteArray() : new Uint8Array();
      } catch (error) {
        if (statusOf(error) === 404 || (error as Error).name === 'NoSuchKey') return undefined;
        throw new UnavailableError(`cannot read payload ${key} from S3 bucket ${bucket}: ${(error as Error).message}`, { cause: error });
      }
    },
  };
}
