import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { loadConfig } from '../src/config';
import { deskSettings } from '../src/desk/settings';

describe('desk configuration', () => {
  it('builds no routes and no clients when no desk is listed', () => {
    const settings = deskSettings(loadConfig({}));
    assert.equal(settings.clients.size, 0);
    assert.deepEqual(settings.inbound, {});
  });

  it('refuses a listed desk without its credentials, naming the variable', () => {
    assert.throws(
      () => deskSettings(loadConfig({ CASEWORK_DESKS: 'zendesk', CASEWORK_ZENDESK_BASE_URL: 'https://acme.zendesk.com', CASEWORK_ZENDESK_WEBHOOK_SECRET: 's' })),
      /CASEWORK_ZENDESK_EMAIL is required when CASEWORK_DESKS lists zendesk/,
    );
    assert.throws(() => deskSettings(loadConfig({ CASEWORK_DESKS: 'zendesk,slack' })), /"slack" is not one of/);
    assert.throws(() => deskSettings(loadConfig({ CASEWORK_DESK_CUSTOMERS: 'zendesk:1' })), /CASEWORK_DESK_CUSTOMERS/);
  });

  it('wires every listed desk from the environment', () => {
    const settings = deskSettings(
      loadConfig({
        CASEWORK_DESKS: 'zendesk,intercom,freshdesk,webhook',
        CASEWORK_ZENDESK_BASE_URL: 'https://acme.zendesk.com',
        CASEWORK_ZENDESK_EMAIL: 'bot@acme.com',
        CASEWORK_ZENDESK_API_TOKEN: 't',
        CASEWORK_ZENDESK_WEBHOOK_SECRET: 's',
        CASEWORK_INTERCOM_ACCESS_TOKEN: 't',
        CASEWORK_INTERCOM_CLIENT_SECRET: 's',
        CASEWORK_INTERCOM_ADMIN_ID: '814860',
        CASEWORK_FRESHDESK_BASE_URL: 'https://acme.freshdesk.com',
        CASEWORK_FRESHDESK_API_KEY: 'k',
        CASEWORK_FRESHDESK_WEBHOOK_TOKEN: 'w',
        CASEWORK_DESK_WEBHOOK_URL: 'https://hooks.example.com/casework',
        CASEWORK_DESK_WEBHOOK_SECRET: 's',
        CASEWORK_DESK_CUSTOMERS: 'zendesk:1=C-1',
        CASEWORK_DESK_REPLAY_WINDOW_SECONDS: '120',
      }),
    );
    assert.deepEqual([...settings.clients.keys()], ['zendesk', 'intercom', 'freshdesk', 'webhook']);
    assert.deepEqual(Object.keys(settings.inbound), ['zendesk', 'intercom', 'freshdesk']);
    assert.equal(settings.inbound.zendesk?.replayWindowSeconds, 120);
    assert.equal(settings.customers({ desk: 'zendesk', id: '1' }), 'C-1');
  });
});
