import type { EventRecorder } from '../events/events';
import type { GatewayDeps } from '../gateway/gateways';
import type { Boss } from '../jobs/queue';

/** What the payment services need: the gateway's dependencies, the job queue, the events port and the clock. */
export interface PaymentDeps extends GatewayDeps {
  boss: Boss;
  events: EventRecorder;
  clock: () => Date;
}
