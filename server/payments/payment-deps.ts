import type { EventRecorder } from '../events/events';
import type { GatewayDeps } from '../gateway/gateways';
import type { Boss } from '../jobs/queue';
import type { Logger } from 'pino';

/** What the payment services need: the gateway's dependencies, the job queue, the events port and the clock. */
export interface PaymentDeps extends GatewayDeps {
  boss: Boss;
  events: EventRecorder;
  clock: () => Date;
  /** Where a late gateway answer that could not be recorded is told (recovery records it). */
  logger?: Pick<Logger, 'warn'>;
}
