/**
 * The communications log's due work, as the scheduler's due work takes it (beside instalments
 * and scheduled charges, at real time and on a sandbox clock's advance): payment reminders, and
 * messages held by quiet hours.
 */
import type { Tenant } from '../kernel/tenant';
import { dueHeldMessages, dueHeldMessagesOf, releaseHeld } from './held-messages';
import { dueReminders, dueRemindersOf, runReminder, type ReminderDeps } from './reminders';

interface DueItem {
  id: string;
  organization_id: string;
  environment: Tenant['environment'];
  due_at: Date;
}

export interface MessageDueSource {
  kind: string;
  due: (realNow: Date) => Promise<DueItem[]>;
  dueOf: (tenant: Tenant, upTo: Date) => Promise<DueItem[]>;
  run: (tenant: Tenant, id: string, now: Date) => Promise<boolean>;
}

export function messageDueSources(deps: ReminderDeps): MessageDueSource[] {
  return [
    {
      kind: 'payment-reminder',
      due: (realNow) => dueReminders(deps.db, realNow),
      dueOf: (tenant, upTo) => dueRemindersOf(deps.db, tenant, upTo, 1),
      run: (tenant, id, now) => runReminder(deps, tenant, id, now),
    },
    {
      kind: 'held-message',
      due: (realNow) => dueHeldMessages(deps.db, realNow),
      dueOf: (tenant, upTo) => dueHeldMessagesOf(deps.db, tenant, upTo, 1),
      run: (tenant, id, now) => releaseHeld(deps, tenant, id, now),
    },
  ];
}
