import { parseArgs } from 'node:util';
import type { Config } from '../../config';
import { openDatabase, type Database } from '../../db/pool';
import { DisplayExpander } from '../../server/codec-expansion';
import { allowedOriginsFor, startCodecServer } from '../../server/codec-server';
import { customerKeysOf, openTranscriptLog } from '../../temporal/codec/body-codec';
import { codecFor, dataConverterFor, payloadStoreFor } from '../../temporal/data-converter';

type Out = (line: string) => void;

/**
 * `casework codec-server [--port N] [--host H]`: serves Temporal's codec protocol so the web UI
 * and `temporal --codec-endpoint` show decoded payloads, stored references included. Runs
 * until SIGINT or SIGTERM; logs one JSON line per request, never a payload.
 */
export async function codecServerCommand(args: string[], config: Config, out: Out): Promise<number> {
  const { values } = parseArgs({ args, options: { port: { type: 'string' }, host: { type: 'string' } } });
  const effective: Config = { ...config, ...(values.host ? { CASEWORK_CODEC_SERVER_HOST: values.host } : {}) };
  // The codec server reads the workers' database (DATABASE_URL), never writes it: stored blobs,
  // the transcript log (to show what references name) and customers' wrapped keys. An embedded
  // database would be its own, empty one, so without DATABASE_URL it decodes history alone.
  const store = payloadStoreFor(effective, effective.DATABASE_URL !== undefined);
  const db: Database | undefined = store === 'postgres' || effective.DATABASE_URL !== undefined ? await openDatabase(effective) : undefined;
  try {
    const codec = codecFor(effective);
    const converter = dataConverterFor(effective, store === 'postgres' ? db?.app : undefined, { codec });
    const server = await startCodecServer(effective, {
      codecs: converter.payloadCodecs ?? [],
      externalStorage: converter.externalStorage,
      ...(db ? { customerKeys: customerKeysOf(db.app, codec), expander: new DisplayExpander(openTranscriptLog(db.app, codec)) } : {}),
      port: values.port === undefined ? undefined : Number(values.port),
      pool: db?.app,
      onRequest: (event) => out(JSON.stringify({ ts: new Date().toISOString(), level: 'info', msg: 'codec request', ...event })),
      // One line per refusal, saying why, so an operator can tell a wrong origin from a missing token.
      onRefused: (event) => out(JSON.stringify({ ts: new Date().toISOString(), level: 'warn', msg: 'codec request refused', ...event })),
    });
    out(
      `codec server on ${server.url} (namespace ${effective.TEMPORAL_NAMESPACE}; token ${effective.CASEWORK_CODEC_SERVER_TOKEN ? 'required' : 'not required: loopback development only'}; ` +
        `browser origins ${allowedOriginsFor(effective).join(', ')})`,
    );
    out(
      `  CLI:    temporal workflow show -w <id> --codec-endpoint ${server.url}${effective.CASEWORK_CODEC_SERVER_TOKEN ? ' --codec-auth "Bearer $CASEWORK_CODEC_SERVER_TOKEN"' : ''}`,
    );
    out(`  web UI: temporal server start-dev --ui-codec-endpoint ${server.url}  (or the UI's Codec Server setting)`);
    if (effective.CASEWORK_CODEC_SERVER_TOKEN) {
      out(`          the UI sends no bearer token: sign in once at ${server.url}/sign-in and turn on "Include cross-origin credentials"`);
    }
    await new Promise<void>((resolve) => {
      process.once('SIGINT', resolve);
      process.once('SIGTERM', resolve);
    });
    const closed = server.close();
    out(JSON.stringify({ ts: new Date().toISOString(), level: 'info', msg: 'codec server stopped accepting connections; draining requests in flight' }));
    await closed;
    return 0;
  } finally {
    await db?.close();
  }
}
