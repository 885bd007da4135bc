import { parseArgs } from 'node:util';
import type { Config } from '../../config';
import { mapRequesterAndDeliver } from '../../client/parked-deliveries';
import { discardParked, isParkingDesk, listParked, PARKING_DESKS } from '../../db/parked-deliveries';
import { investigationSettings } from '../../settings';
import { bodyCodecOf } from '../../temporal/codec/body-codec';
import { connectClient } from '../../temporal/client';
import { codecFor } from '../../temporal/data-converter';
import { withDatabase } from '../database';
import { UsageError } from '../usage';

// `casework desk …`: the desk deliveries a person must look at. A delivery from a requester
// nobody mapped, or one the ticket gate refused, is parked (answered 2xx to the desk) until a
// person maps the requester (it then reaches its investigation) or discards it.

/** `casework desk …` usage, shown on a usage error. */
export const DESK_USAGE = [
  'usage: casework desk parked [--all] [--json]                        deliveries waiting for a person',
  '       casework desk map --desk <zendesk|intercom|freshdesk> --requester <id or email> --customer <id> --by <name>',
  '       casework desk discard --id <n> --by <name> --reason <text>',
].join('\n');

type Out = (line: string) => void;

function need(value: string | undefined, flag: string): string {
  if (value === undefined || !value.trim()) throw new UsageError(`${flag} is required\n${DESK_USAGE}`);
  return value.trim();
}

/** Runs `casework desk parked|map|discard`. */
export async function deskCommand(args: string[], config: Config, out: Out): Promise<number> {
  const [sub, ...rest] = args;
  const { values } = parseArgs({
    args: rest,
    strict: true,
    options: {
      all: { type: 'boolean' },
      json: { type: 'boolean' },
      desk: { type: 'string' },
      requester: { type: 'string' },
      customer: { type: 'string' },
      by: { type: 'string' },
      id: { type: 'string' },
      reason: { type: 'string' },
    },
  });
  if (sub === 'parked') {
    return withDatabase(config, async (db) => {
      const parked = await listParked(db.app, { waiting: !values.all });
      if (values.json) out(JSON.stringify(parked, null, 2));
      else if (!parked.length) out(values.all ? 'no deliveries were ever parked' : 'no deliveries wait for a person');
      else
        for (const p of parked) {
          const state = p.deliveredAt ? `delivered ${p.deliveredAt}` : p.discardedAt ? `discarded ${p.discardedAt}` : 'waiting';
          out(`${p.id}  ${p.parkedAt}  ${p.desk} requester ${p.requester}  ticket ${p.ticketId}  event ${p.eventId}  ${p.reason}  ${state}`);
        }
      return 0;
    });
  }
  if (sub === 'map') {
    const desk = need(values.desk, '--desk');
    if (!isParkingDesk(desk)) throw new UsageError(`--desk must be one of ${PARKING_DESKS.join(', ')}, not "${desk}"`);
    const input = { desk, requester: need(values.requester, '--requester'), customerId: need(values.customer, '--customer'), by: need(values.by, '--by') };
    return withDatabase(config, async (db) => {
      const { client, close } = await connectClient(config, { pool: db.app });
      try {
        const result = await mapRequesterAndDeliver({ client, pool: db.app, codec: bodyCodecOf(codecFor(config)) }, input, {
          taskQueue: config.TEMPORAL_TASK_QUEUE,
          settings: investigationSettings(config),
        });
        if (values.json) out(JSON.stringify(result, null, 2));
        else {
          out(`${input.desk} requester ${input.requester} ${result.mapping === 'mapped' ? 'is now mapped' : 'was already mapped'} to customer ${input.customerId}`);
          out(
            `delivered ${result.delivered.length} parked deliver${result.delivered.length === 1 ? 'y' : 'ies'}${result.delivered.length ? `: ${result.delivered.join(', ')}` : ''}`,
          );
          for (const still of result.stillParked) out(`still parked: ${still.id} (${still.eventId}): ${still.why}`);
        }
        return result.stillParked.length ? 1 : 0;
      } finally {
        await close();
      }
    });
  }
  if (sub === 'discard') {
    const id = Number(need(values.id, '--id'));
    if (!Number.isSafeInteger(id) || id <= 0) throw new UsageError(`--id must be a parked delivery's number, not "${values.id}"`);
    const input = { id, by: need(values.by, '--by'), reason: need(values.reason, '--reason') };
    return withDatabase(config, async (db) => {
      const discarded = await discardParked(db.app, input);
      out(`discarded parked delivery ${discarded.id} (${discarded.desk} event ${discarded.eventId}); the audit records ${input.by}`);
      return 0;
    });
  }
  throw new UsageError(sub ? `unknown desk command "${sub}"\n${DESK_USAGE}` : DESK_USAGE);
}
