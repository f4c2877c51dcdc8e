/**
 * The fact the payment terms read (payment-terms.ts, rule `disputed`): whether an open dispute
 * holds this account, or, on a parent, which of its children and so how much of its balance.
 * A dispute on a parent holds the parent and every child; one on a child holds that child and
 * its share of the parent. Which open disputes hold is the organization's `dispute_hold`.
 */
import type { Knex } from 'knex';
import type { Tenant } from '../kernel/tenant';
import { disputeRepo } from '../dispute-store/dispute-repo';
import { holds } from '../dispute-store/dispute-holds';
import { readSettings } from '../settings/settings-service';

export interface HoldFact {
  in_dispute: boolean;
  disputed_share: number;
  /** The children an open dispute holds (skipped when a payment to the parent is spread). */
  heldChildren: Set<string>;
}

export async function disputeHoldOf(
  db: Knex,
  tenant: Tenant,
  account: { id: string; parent_id: string | null },
  children: { id: string; current_balance: string | number }[],
): Promise<HoldFact> {
  const ids = [account.id, ...(account.parent_id ? [account.parent_id] : []), ...children.map((child) => child.id)];
  const open = await disputeRepo(db, tenant).openOf(ids);
  if (open.length === 0) return { in_dispute: false, disputed_share: 0, heldChildren: new Set() };
  const policy = (await readSettings(db, tenant)).dispute_hold;
  const held = new Set(open.filter((dispute) => holds(dispute, policy)).map((dispute) => dispute.debt_account_id));
  const heldChildren = new Set(children.filter((child) => held.has(child.id)).map((child) => child.id));
  return {
    in_dispute: held.has(account.id) || (account.parent_id !== null && held.has(account.parent_id)),
    disputed_share: children.filter((child) => heldChildren.has(child.id)).reduce((sum, child) => sum + Number(child.current_balance), 0),
    heldChildren,
  };
}
