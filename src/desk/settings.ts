import { ConfigError, type Config } from '../config';
import type { DeskClient } from './client';
import { configuredCustomerLookup, parseDeskCustomers, type CustomerLookup } from './customers';
import { createFreshdeskClient } from './freshdesk-client';
import type { FreshdeskInboundConfig } from './freshdesk-inbound';
import { createIntercomClient } from './intercom-client';
import {
  FRESHDESK_LIFECYCLE,
  INTERCOM_LIFECYCLE,
  INTERCOM_STATES,
  parseFreshdeskStatus,
  parseIntercomState,
  parseZendeskStatus,
  statusTable,
  ZENDESK_LIFECYCLE,
  ZENDESK_STATUSES,
  type StatusTable,
} from './lifecycle';
import type { IntercomInboundConfig } from './intercom-inbound';
import { DESK_NAMES, type DeskName } from './types';
import { createWebhookClient } from './webhook-client';
import { createZendeskClient } from './zendesk-client';
import type { ZendeskInboundConfig } from './zendesk-inbound';

/** Everything the desk layer needs, built once from configuration at start. */
export interface DeskSettings {
  enabled: ReadonlySet<DeskName>;
  customers: CustomerLookup;
  /** Per desk that receives webhooks: what its adapter verifies with. A desk absent here has no route. */
  inbound: { zendesk?: ZendeskInboundConfig; intercom?: IntercomInboundConfig; freshdesk?: FreshdeskInboundConfig };
  /** Per desk casework posts to. "webhook" serves tickets that came in through POST /events. */
  clients: ReadonlyMap<DeskName, DeskClient>;
}

/**
 * Reads the desk block of the configuration. Throws ConfigError naming the variable when a
 * listed desk lacks what it needs: a desk half-configured would accept webhooks it cannot
 * answer, or answer tickets it cannot verify.
 */
export function deskSettings(config: Config, options: { fetch?: typeof fetch } = {}): DeskSettings {
  const names = config.CASEWORK_DESKS.split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  for (const name of names) {
    if (!(DESK_NAMES as readonly string[]).includes(name)) throw new ConfigError(`CASEWORK_DESKS: "${name}" is not one of ${DESK_NAMES.join(', ')}`);
  }
  const enabled = new Set(names as DeskName[]);
  let customers: CustomerLookup;
  try {
    customers = configuredCustomerLookup({ customers: parseDeskCustomers(config.CASEWORK_DESK_CUSTOMERS), trustExternalId: config.CASEWORK_DESK_TRUST_EXTERNAL_ID === 'true' });
  } catch (error) {
    throw new ConfigError((error as Error).message);
  }
  const need = (desk: DeskName, variable: keyof Config): string => {
    const value = config[variable];
    if (typeof value !== 'string' || value === '') throw new ConfigError(`${variable} is required when CASEWORK_DESKS lists ${desk}`);
    return value;
  };
  // A lifecycle or group that cannot be used fails at start, naming the variable, rather than at the first post.
  const table = <S>(defaults: StatusTable<S>, variable: keyof Config, parse: (v: string) => S | undefined, allowed: string): StatusTable<S> => {
    try {
      return statusTable(defaults, String(config[variable] ?? ''), variable, parse, allowed);
    } catch (error) {
      throw new ConfigError((error as Error).message);
    }
  };
  const positiveId = (variable: keyof Config, what: string): number | undefined => {
    const value = config[variable];
    if (value === undefined || value === '') return undefined;
    if (typeof value !== 'string' || !/^\d{1,18}$/.test(value.trim()) || Number(value) <= 0)
      throw new ConfigError(`${variable}: "${String(value)}" is not ${what} (a positive number)`);
    return Number(value);
  };
  const groupId = (variable: keyof Config) => positiveId(variable, 'a group id');
  // Freshdesk names a custom field "cf_" and the label in lower case with underscores.
  const freshdeskField = (value: string): string => {
    if (!/^cf_[a-z0-9_]{1,100}$/.test(value)) throw new ConfigError(`CASEWORK_FRESHDESK_ORDER_FIELD: "${value}" is not a Freshdesk custom field name (cf_…)`);
    return value;
  };
  const window = config.CASEWORK_DESK_REPLAY_WINDOW_SECONDS;
  const timeoutMs = config.CASEWORK_DESK_TIMEOUT_MS;
  const inbound: DeskSettings['inbound'] = {};
  const clients = new Map<DeskName, DeskClient>();
  if (enabled.has('zendesk')) {
    inbound.zendesk = { signingSecret: need('zendesk', 'CASEWORK_ZENDESK_WEBHOOK_SECRET'), replayWindowSeconds: window, customers };
    clients.set(
      'zendesk',
      createZendeskClient({
        baseUrl: need('zendesk', 'CASEWORK_ZENDESK_BASE_URL'),
        email: need('zendesk', 'CASEWORK_ZENDESK_EMAIL'),
        apiToken: need('zendesk', 'CASEWORK_ZENDESK_API_TOKEN'),
        statuses: table(ZENDESK_LIFECYCLE, 'CASEWORK_ZENDESK_STATUSES', parseZendeskStatus, `a Zendesk status casework may set (${ZENDESK_STATUSES.join(', ')})`),
        handOffGroupId: groupId('CASEWORK_ZENDESK_HANDOFF_GROUP_ID'),
        orderFieldId: positiveId('CASEWORK_ZENDESK_ORDER_FIELD_ID', 'a ticket field id'),
        timeoutMs,
        fetch: options.fetch,
      }),
    );
  }
  if (enabled.has('intercom')) {
    inbound.intercom = { clientSecret: need('intercom', 'CASEWORK_INTERCOM_CLIENT_SECRET'), replayWindowSeconds: window, customers };
    clients.set(
      'intercom',
      createIntercomClient({
        baseUrl: need('intercom', 'CASEWORK_INTERCOM_BASE_URL'),
        accessToken: need('intercom', 'CASEWORK_INTERCOM_ACCESS_TOKEN'),
        adminId: need('intercom', 'CASEWORK_INTERCOM_ADMIN_ID'),
        states: table(INTERCOM_LIFECYCLE, 'CASEWORK_INTERCOM_STATES', parseIntercomState, `an Intercom conversation state (${INTERCOM_STATES.join(', ')})`),
        snoozeSeconds: config.CASEWORK_INTERCOM_SNOOZE_SECONDS,
        ...(config.CASEWORK_INTERCOM_HANDOFF_ADMIN_ID ? { handOffAdminId: config.CASEWORK_INTERCOM_HANDOFF_ADMIN_ID } : {}),
        ...(config.CASEWORK_INTERCOM_ORDER_ATTRIBUTE?.trim() ? { orderAttribute: config.CASEWORK_INTERCOM_ORDER_ATTRIBUTE.trim() } : {}),
        timeoutMs,
        fetch: options.fetch,
      }),
    );
  }
  if (enabled.has('freshdesk')) {
    inbound.freshdesk = { token: need('freshdesk', 'CASEWORK_FRESHDESK_WEBHOOK_TOKEN'), customers };
    clients.set(
      'freshdesk',
      createFreshdeskClient({
        baseUrl: need('freshdesk', 'CASEWORK_FRESHDESK_BASE_URL'),
        apiKey: need('freshdesk', 'CASEWORK_FRESHDESK_API_KEY'),
        statuses: table(FRESHDESK_LIFECYCLE, 'CASEWORK_FRESHDESK_STATUSES', parseFreshdeskStatus, 'a Freshdesk status id (2 to 5, or a custom status from 6)'),
        handOffGroupId: groupId('CASEWORK_FRESHDESK_HANDOFF_GROUP_ID'),
        ...(config.CASEWORK_FRESHDESK_ORDER_FIELD?.trim() ? { orderField: freshdeskField(config.CASEWORK_FRESHDESK_ORDER_FIELD.trim()) } : {}),
        timeoutMs,
        fetch: options.fetch,
      }),
    );
  }
  if (enabled.has('webhook')) {
    clients.set(
      'webhook',
      createWebhookClient({ url: need('webhook', 'CASEWORK_DESK_WEBHOOK_URL'), secret: need('webhook', 'CASEWORK_DESK_WEBHOOK_SECRET'), timeoutMs, fetch: options.fetch }),
    );
  }
  return { enabled, customers, inbound, clients };
}
