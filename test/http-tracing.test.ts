import assert from 'node:assert/strict';
import { test } from 'node:test';
import { routeOf } from '../src/observability/http-tracing';

// HTTP span names are routes, not paths: ids are folded so names stay few and name no customer.

test('span routes fold ids and keep route words', () => {
  assert.equal(routeOf('/events'), '/events');
  assert.equal(routeOf('/webhooks/zendesk'), '/webhooks/zendesk');
  assert.equal(routeOf('/console/sign-in'), '/console/sign-in');
  assert.equal(routeOf('/investigations/investigation-T-1042/approve'), '/investigations/{id}/approve');
  assert.equal(routeOf('/memory/cust_dana/notes'), '/memory/{id}/notes');
  assert.equal(routeOf('/customers/dana/memory'), '/customers/{id}/memory', 'an id without digits is folded where the route has one');
  assert.equal(routeOf('/investigations/a%20b'), '/investigations/{id}');
});
