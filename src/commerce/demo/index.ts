import type { Pool } from 'pg';
import type { Commerce } from '../shop';
import { demoOrders } from './orders';
import { demoPayments } from './payments';
import { demoPolicies, demoTickets } from './tickets';
import { demoTracking } from './tracking';

export { demoOrders } from './orders';
export { demoPayments } from './payments';
export { demoPolicies, demoTickets } from './tickets';
export { demoTracking } from './tracking';

/** The demo shop whole: every source and the payment provider over casework's own tables. */
export function demoCommerce(pool: Pool): Commerce {
  return { orders: demoOrders(pool), tracking: demoTracking(pool), tickets: demoTickets(pool), policies: demoPolicies(pool), payments: demoPayments(pool) };
}
