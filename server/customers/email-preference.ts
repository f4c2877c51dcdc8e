/** A change of a customer's e-mail preference (opt-out), by whoever made it, at the tenant's time. */
import type { CustomerRow } from '../customer-store/customer-repo';

export function emailPreferenceChange(
  email: CustomerRow['email_preference'],
  by: NonNullable<CustomerRow['email_preference_changed_by']>,
  now: Date,
): Pick<CustomerRow, 'email_preference' | 'email_preference_changed_at' | 'email_preference_changed_by'> {
  return { email_preference: email, email_preference_changed_at: now, email_preference_changed_by: by };
}
