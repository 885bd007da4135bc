import type { Pool } from 'pg';
import { demoCommerce } from '../../commerce/demo';
import type { Commerce } from '../../commerce/shop';
import { failuresForTemporal } from '../failures';
import { createOrderTools } from './orders';
import { createPaymentTools } from './payments';
import { createPolicyTools } from './policies';
import { createRefundTools } from './refunds';
import { createTicketTools } from './tickets';
import { createTrackingTools } from './tracking';

/**
 * The investigation tools that read and write the shop's records, each an activity named after
 * its tool, plus recordRefundDecision (the workflow's, not the model's). Every read goes through
 * the commerce port (the demo shop over `pool` unless another is wired) for the customer in the
 * call's context, never one named in the input; casework's own trail is read and written under
 * row-level security for that customer.
 */
export function createToolActivities(deps: { pool: Pool; commerce?: Commerce }) {
  const wired = { pool: deps.pool, commerce: deps.commerce ?? demoCommerce(deps.pool) };
  return failuresForTemporal({
    ...createOrderTools(wired),
    ...createTrackingTools(wired),
    ...createTicketTools(wired),
    ...createPaymentTools(wired),
    ...createPolicyTools(wired),
    ...createRefundTools(wired),
  });
}
