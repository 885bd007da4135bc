import type { Pool } from 'pg';
import {
  customerKeyVersion,
  destroyCustomerKeys,
  insertCustomerKey,
  keysToRewrap,
  latestCustomerKey,
  replaceWrapping,
  ticketOwner,
  type StoredCustomerKey,
} from '../../db/customer-keys';
import { NotFoundError } from '../../errors';
import { ticketIdOf } from '../../schemas/event';
import { EncryptionCodec, UnknownKeyError, type NonceMode } from './encryption-codec';
import { customerKeyId, newDataKey, parseCustomerKeyId, unwrapKey, wrapKey, type CustomerKeyName } from './key-wrap';
import { keyringOf, type CodecKey, type Keyring } from './keys';

// Each customer's data key, unwrapped on first use and cached in this process (bounded), so a
// decode costs what a decode under the deployment key costs. An erasure in this process evicts
// at once; another process notices within `recheckMs`: a cached key older than that is looked
// up again (one indexed row), and a destroyed one is never served again.

/** How long a cached key is served before its row is read again: the bound on how long another process can still decrypt after an erasure. */
export const CUSTOMER_KEY_RECHECK_MS = 10_000;
/** Most unwrapped keys (and workflow owners) one process keeps. */
export const CUSTOMER_KEY_CACHE_SIZE = 10_000;

/** The customer's data key was destroyed by an erasure: what it encrypted can no longer be read by anyone. */
export class CustomerErasedError extends NotFoundError {
  constructor(
    readonly customerId: string,
    readonly erasedAt: string,
  ) {
    super(`customer ${customerId} was erased on ${erasedAt.slice(0, 10)}: their data key is destroyed and this content cannot be decrypted`);
  }
}

interface Cached {
  keyId: string;
  codec: EncryptionCodec;
  checkedAt: number;
}

/** A bounded map that forgets the least recently used entry first. */
class Lru<V> {
  private readonly map = new Map<string, V>();
  constructor(private readonly max: number) {}
  get(key: string): V | undefined {
    const value = this.map.get(key);
    if (value === undefined) return undefined;
    this.map.delete(key);
    this.map.set(key, value);
    return value;
  }
  /** The entry without marking it used: for the hot path, where a periodic recheck re-marks it. */
  peek(key: string): V | undefined {
    return this.map.get(key);
  }
  set(key: string, value: V): void {
    this.map.delete(key);
    this.map.set(key, value);
    if (this.map.size > this.max) this.map.delete(this.map.keys().next().value as string);
  }
  delete(key: string): void {
    this.map.delete(key);
  }
  keys(): string[] {
    return [...this.map.keys()];
  }
}

/** The customers' data keys of one database, wrapped by one master keyring. */
export class CustomerKeys {
  private readonly byKeyId: Lru<Cached>;
  private readonly current: Lru<Cached>;
  private readonly owners: Lru<string>;
  private readonly destroyed = new Map<string, string>();
  private readonly recheckMs: number;
  private readonly now: () => number;

  constructor(
    private readonly pool: Pool,
    private readonly master: Keyring,
    options: { nonceMode?: NonceMode; recheckMs?: number; cacheSize?: number; now?: () => number; staleIfError?: boolean } = {},
  ) {
    this.staleIfError = options.staleIfError ?? false;

    const size = options.cacheSize ?? CUSTOMER_KEY_CACHE_SIZE;
    this.byKeyId = new Lru(size);
    this.current = new Lru(size);
    this.owners = new Lru(size);
    this.recheckMs = options.recheckMs ?? CUSTOMER_KEY_RECHECK_MS;
    this.now = options.now ?? Date.now;
    this.nonceMode = options.nonceMode ?? 'derived';
  }

  private readonly nonceMode: NonceMode;
  /** Serve a cached key past its recheck when the recheck itself fails (Postgres unreachable): the inline history codec's outage mode. */
  private staleIfError: boolean;

  /** From now on, serve a cached key past its recheck while the recheck fails (a process whose histories are under customer keys inline). */
  serveStaleIfError(): void {
    this.staleIfError = true;
  }

  /** `lookup`, or, when it fails for any reason but an erasure and a key was cached (however long ago), that key. */
  private async orStale(cached: Cached | undefined, lookup: () => Promise<EncryptionCodec>): Promise<EncryptionCodec> {
    if (!cached || !this.staleIfError) return lookup();
    try {
      return await lookup();
    } catch (error) {
      if (error instanceof CustomerErasedError) throw error;
      // Checked again after another recheck interval, not on every payload of the outage.
      cached.checkedAt = this.now();
      return cached.codec;
    }
  }

  /** The customer whose investigation `workflowId` is (the ticket's owner), or undefined for none recorded. */
  async customerOfWorkflow(workflowId: string): Promise<string | undefined> {
    const cached = this.owners.get(workflowId);
    if (cached !== undefined) return cached;
    const ticketId = ticketIdOf(workflowId);
    if (ticketId === undefined) return undefined;
    const owner = await ticketOwner(this.pool, ticketId);
    // A ticket's owner never changes (first event wins), so it is cached; "no owner yet" is not.
    if (owner !== undefined) this.owners.set(workflowId, owner);
    return owner;
  }

  /** The owner of `workflowId` when this process has it cached, else undefined: the encode path's synchronous check before customerOfWorkflow. */
  cachedOwner(workflowId: string): string | undefined {
    return this.owners.peek(workflowId);
  }

  /** The cached encoder of `customerId` while it is fresh, else undefined: the encode path's synchronous check before encoderFor. */
  cachedEncoder(customerId: string): EncryptionCodec | undefined {
    const cached = this.current.peek(customerId);
    return cached && this.fresh(cached) ? cached.codec : undefined;
  }

  /** The codec that encrypts new content of `customerId`: their newest live key, created on first use. */
  async encoderFor(customerId: string): Promise<EncryptionCodec> {
    const cached = this.current.get(customerId);
    if (cached && this.fresh(cached)) return cached.codec;
    return this.orStale(cached, () => this.lookUpEncoder(customerId));
  }

  private async lookUpEncoder(customerId: string): Promise<EncryptionCodec> {
    let latest = await latestCustomerKey(this.pool, customerId);
    if (!latest || latest.destroyedAt) {
      // First use, or the customer came back after an erasure: a new version. Concurrent
      // creators insert the same version; ON CONFLICT keeps one and every one of them reads it.
      const name = { customerId, version: (latest?.version ?? 0) + 1 };
      latest = await insertCustomerKey(this.pool, { ...name, wrappedKey: wrapKey(newDataKey(), name, this.master.current), wrappingKeyId: this.master.current.id });
      if (latest.destroyedAt) throw new CustomerErasedError(customerId, latest.destroyedAt);
    }
    const entry = this.cache(latest);
    this.current.set(customerId, entry);
    return entry.codec;
  }

  /**
   * The cached codec for `keyId` while it is fresh, else undefined: the decode path's fast,
   * synchronous check (no promise, no reordering of the cache) before decoderFor's lookup.
   */
  cachedDecoder(keyId: string): EncryptionCodec | undefined {
    const cached = this.byKeyId.peek(keyId);
    return cached && this.fresh(cached) ? cached.codec : undefined;
  }

  /** The codec that decrypts content under the customer key `keyId`; CustomerErasedError once it is destroyed. */
  async decoderFor(keyId: string): Promise<EncryptionCodec> {
    const gone = this.destroyed.get(keyId);
    if (gone) throw new CustomerErasedError(parseCustomerKeyId(keyId)!.customerId, gone);
    const cached = this.byKeyId.get(keyId);
    if (cached && this.fresh(cached)) return cached.codec;
    return this.orStale(cached, async () => {
      const name = parseCustomerKeyId(keyId);
      if (!name) throw new UnknownKeyError(`"${keyId}" is not a customer key id`);
      const stored = await customerKeyVersion(this.pool, name.customerId, name.version);
      if (!stored) throw new UnknownKeyError(`customer key "${keyId}" is not in customer_keys: the content was written against another database`);
      return this.cache(stored).codec;
    });
  }

  /** Destroys every live version of the customer's key and forgets them in this process; returns the versions destroyed. */
  async destroy(customerId: string): Promise<number[]> {
    const versions = await destroyCustomerKeys(this.pool, customerId);
    this.forget(customerId);
    return versions;
  }

  /** Forgets the customer's cached keys in this process (after an erasure elsewhere is known). */
  forget(customerId: string): void {
    this.current.delete(customerId);
    for (const keyId of this.byKeyId.keys()) if (parseCustomerKeyId(keyId)?.customerId === customerId) this.byKeyId.delete(keyId);
  }

  /**
   * Re-wraps every live customer key under the keyring's current master key, in batches; the
   * data they encrypt is untouched. Returns how many were re-wrapped. Run after appending a new
   * master key, before removing the old one from the ring.
   */
  async rewrapAll(options: { batch?: number } = {}): Promise<{ rewrapped: number }> {
    const target = this.master.current;
    let rewrapped = 0;
    for (;;) {
      const batch = await keysToRewrap(this.pool, target.id, options.batch ?? 500);
      if (batch.length === 0) return { rewrapped };
      let progressed = false;
      for (const stored of batch) {
        const name = { customerId: stored.customerId, version: stored.version };
        const dataKey = this.unwrap(stored, name);
        if (await replaceWrapping(this.pool, { ...name, fromKeyId: stored.wrappingKeyId!, wrappedKey: wrapKey(dataKey, name, target), wrappingKeyId: target.id })) rewrapped++;
        progressed = true;
      }
      if (!progressed) return { rewrapped };
    }
  }

  private fresh(entry: Cached): boolean {
    return this.now() - entry.checkedAt < this.recheckMs;
  }

  private cache(stored: StoredCustomerKey): Cached {
    const name = { customerId: stored.customerId, version: stored.version };
    const keyId = customerKeyId(name);
    if (stored.destroyedAt) {
      this.destroyed.set(keyId, stored.destroyedAt);
      this.byKeyId.delete(keyId);
      this.current.delete(stored.customerId);
      throw new CustomerErasedError(stored.customerId, stored.destroyedAt);
    }
    const previous = this.byKeyId.get(keyId);
    const codec = previous?.codec ?? new EncryptionCodec(keyringOf([{ id: keyId, key: this.unwrap(stored, name) }], 'environment'), this.nonceMode);
    const entry = { keyId, codec, checkedAt: this.now() };
    this.byKeyId.set(keyId, entry);
    return entry;
  }

  private unwrap(stored: StoredCustomerKey, name: CustomerKeyName): Buffer {
    const master: CodecKey | undefined = this.master.byId.get(stored.wrappingKeyId ?? '');
    if (!master) {
      throw new UnknownKeyError(
        `customer key ${customerKeyId(name)} is wrapped under master key "${stored.wrappingKeyId}", which this process does not have; keep it in CASEWORK_CODEC_KEYS until \`casework keys rewrap\` has run`,
      );
    }
    return unwrapKey(stored.wrappedKey!, name, master);
  }
}
