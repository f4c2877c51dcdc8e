/**
 * The bare-SQL baseline's event payloads (bench-scheduler-bare.ts): the documented webhook
 * payloads (openapi EventCharge, EventDebtAccount, EventPaymentPlan), built by the database from
 * the rows as they are, with jsonb_build_object and jsonb_agg, in SQL functions created once in
 * the scratch database. They follow server/event-payloads/payloads.ts and payment-payloads.ts key for
 * key (bench-scheduler.ts checks the key sets, recursively, against ours on every run): times as
 * `YYYY-MM-DD HH:MM:SS` UTC, `payment_date` as MM/DD/YYYY, amounts as numbers of cents and a
 * transaction's `amount` as dollars text. An event's account is built once and passed to what
 * embeds it, as ours builds it once per recording.
 *
 * What the bench's rows never have is not read, and shown as ours shows it when absent: an
 * account's documents, disputes, settlement offers and scheduled charges (empty, null), a
 * charge's settlement offer (null); a method's active offer or scheduled charge is looked up.
 */
import type { Knex } from 'knex';

const FUNCTIONS = `
CREATE OR REPLACE FUNCTION bare_time(t timestamptz) RETURNS text LANGUAGE sql STABLE AS
$$ SELECT to_char(t AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS') $$;

CREATE OR REPLACE FUNCTION bare_metadata(m jsonb, c timestamptz, u timestamptz) RETURNS jsonb LANGUAGE plpgsql STABLE SET plan_cache_mode = force_generic_plan AS $$ BEGIN RETURN (SELECT coalesce(jsonb_agg(jsonb_build_object('attribute', e.key, 'value', e.value, 'created_at', bare_time(c), 'updated_at', bare_time(u)) ORDER BY e.key COLLATE "C"), '[]')
    FROM jsonb_each_text(coalesce(m, '{}')) e); END $$;

CREATE OR REPLACE FUNCTION bare_names(name text) RETURNS jsonb LANGUAGE plpgsql IMMUTABLE SET plan_cache_mode = force_generic_plan AS $$ BEGIN RETURN (SELECT CASE WHEN cardinality(w) < 2 THEN jsonb_build_object('first_name', NULL, 'last_name', NULL)
              ELSE jsonb_build_object('first_name', w[1], 'last_name', array_to_string(w[2:], ' ')) END
    FROM (SELECT regexp_split_to_array(regexp_replace(name, '^\\s+|\\s+$', '', 'g'), '\\s+') AS w) x); END $$;

CREATE OR REPLACE FUNCTION bare_location(l locations) RETURNS jsonb LANGUAGE sql STABLE AS $$
  SELECT jsonb_build_object('id', l.id, 'name', l.name, 'type', l.type, 'external_id', l.external_id, 'card', l.card, 'ach', l.ach,
    'metadata', CASE WHEN l.metadata = '{}' THEN '[]'::jsonb ELSE bare_metadata(l.metadata, l.created_at, l.updated_at) END, 'created_at', bare_time(l.created_at), 'updated_at', bare_time(l.updated_at)) $$;

-- An account embedded (EventEmbeddedDebtAccount), its customer null; its children embedded alike.
CREATE OR REPLACE FUNCTION bare_account(a debt_accounts) RETURNS jsonb LANGUAGE plpgsql STABLE SET plan_cache_mode = force_generic_plan AS $$ BEGIN RETURN (SELECT jsonb_build_object(
    'id', a.id, 'is_parent', a.parent_id IS NULL,
    'has_siblings', a.parent_id IS NOT NULL AND EXISTS (SELECT 1 FROM debt_accounts s WHERE s.parent_id = a.parent_id AND s.id <> a.id),
    'has_children', EXISTS (SELECT 1 FROM debt_accounts c WHERE c.parent_id = a.id),
    'parent_external_id', (SELECT p.external_id FROM debt_accounts p WHERE p.id = a.parent_id),
    'external_id', a.external_id, 'external_account_number', a.external_account_number,
    'billing_type', (SELECT jsonb_agg(b ORDER BY o) FROM unnest(ARRAY['partial-payment', 'full-amount-payment', 'payment-plan']) WITH ORDINALITY x(b, o)
                      WHERE a.billing_type IS NULL OR b = ANY(a.billing_type)),
    'balance', a.balance, 'current_balance', a.current_balance, 'total_current_balance', a.current_balance,
    'status', a.status, 'external_status', a.external_status, 'paid_off_at', NULL,
    'rules', jsonb_build_object('minimum_payment_amount', a.rules->'min_payment_amount'),
    'resource_rules', CASE WHEN coalesce(a.rules->'min_payment_amount', 'null') = 'null' THEN '{}'::jsonb ELSE jsonb_build_object('minimum_payment_amount', a.rules->'min_payment_amount') END,
    'customer', NULL,
    'location', (SELECT bare_location(l) FROM locations l WHERE l.id = a.location_id),
    'metadata', CASE WHEN a.metadata = '{}' THEN '[]'::jsonb ELSE bare_metadata(a.metadata, a.created_at, a.updated_at) END,
    'children', (SELECT coalesce(jsonb_agg(bare_account(c) ORDER BY c.created_at, c.id), '[]') FROM debt_accounts c WHERE c.parent_id = a.id),
    'created_at', bare_time(a.created_at), 'updated_at', bare_time(a.updated_at))); END $$;

CREATE OR REPLACE FUNCTION bare_account_of(id uuid) RETURNS jsonb LANGUAGE plpgsql STABLE SET plan_cache_mode = force_generic_plan AS $$ BEGIN RETURN (SELECT bare_account(a) FROM debt_accounts a WHERE a.id = $1); END $$;

CREATE OR REPLACE FUNCTION bare_billing_address(customer uuid) RETURNS jsonb LANGUAGE plpgsql STABLE SET plan_cache_mode = force_generic_plan AS $$ BEGIN RETURN (SELECT CASE WHEN ad.line1 IS NULL OR ad.line1 = '' OR ad.city IS NULL OR ad.city = '' OR ad.state !~ '^[A-Z]{2}$' THEN NULL
    ELSE jsonb_build_object('name', ad.name, 'line1', ad.line1, 'line2', ad.line2, 'city', ad.city, 'state', ad.state, 'postal_code', ad.postal_code,
      'created_at', bare_time(ad.created_at), 'updated_at', bare_time(ad.updated_at)) END
    FROM (SELECT * FROM customer_addresses WHERE customer_id = customer AND is_primary ORDER BY created_at, id LIMIT 1) ad); END $$;

-- What a saved method charges (methodUses): an active plan or an accepted offer of its customer's accounts, a scheduled charge.
CREATE OR REPLACE FUNCTION bare_method_uses(m payment_methods) RETURNS jsonb LANGUAGE plpgsql STABLE SET plan_cache_mode = force_generic_plan AS $$ BEGIN RETURN (SELECT jsonb_build_object(
    'has_active_payment_plan', EXISTS (SELECT 1 FROM debt_accounts a JOIN payment_plans p ON p.debt_account_id = a.id
                                        WHERE a.customer_id = m.customer_id AND p.payment_method_id = m.id AND p.status = 'active'),
    'has_active_settlement_offer', EXISTS (SELECT 1 FROM debt_accounts a JOIN settlement_offers o ON o.debt_account_id = a.id
                                        WHERE a.customer_id = m.customer_id AND o.payment_method_id = m.id AND o.status = 'accepted'),
    'has_active_scheduled_charge', EXISTS (SELECT 1 FROM charges c WHERE c.payment_method_id = m.id AND c.status = 'scheduled'))); END $$;

-- A saved method (EventPaymentMethod) as a customer or a plan shows it.
CREATE OR REPLACE FUNCTION bare_method(m payment_methods) RETURNS jsonb LANGUAGE sql STABLE AS $$
  SELECT jsonb_build_object('id', m.id, 'type', m.type,
    'card_token', CASE WHEN m.type = 'card' THEN jsonb_build_object('card_holder', m.card_holder, 'card_number', m.card_last4, 'expiration_month', m.card_exp_month,
                    'expiration_year', m.card_exp_year, 'card_type', m.card_brand, 'card_zip', m.card_zip) END,
    'bank_account', CASE WHEN m.type = 'ach' THEN jsonb_build_object('account_holder', m.account_holder, 'account_type', m.account_type, 'ownership_type', 'personal',
                    'routing_number', m.routing_number_masked, 'account_number', m.account_number_masked, 'account_zip', m.account_zip, 'account_state', m.account_state) END,
    'is_primary', m.is_primary, 'billing_address', bare_billing_address(m.customer_id),
    'created_at', bare_time(m.created_at), 'updated_at', bare_time(m.updated_at)) || bare_method_uses(m) $$;

-- A transaction of a charge (EventTransaction), its account \`acct\` embedded, its customer's \`number\`.
-- Plain expressions, so PostgreSQL inlines these three where they are called.
CREATE OR REPLACE FUNCTION bare_transaction(t transactions, ch charges, number bigint, acct jsonb) RETURNS jsonb LANGUAGE sql STABLE AS $$
  SELECT jsonb_build_object(
    'id', t.number, 'gateway_name', ch.gateway, 'gateway_code', t.return_code, 'reference_number', t.gateway_reference, 'transaction_key', t.id,
    'type_id', array_position(ARRAY['charge', 'void', 'refund', 'ach_settlement', 'ach_return', 'external', 'external_reversal', 'settlement_write_off', 'settlement_write_off_reversal'], t.kind::text),
    'value_type_id', array_position(ARRAY['card', 'ach', 'external'], ch.payment_method_type::text), 'epay_status_id', NULL,
    'amount', CASE WHEN t.amount < 0 THEN '-' ELSE '' END || (abs(t.amount) / 100)::text || '.' || lpad((abs(t.amount) % 100)::text, 2, '0'),
    'amount_cents', t.amount, 'source', ch.source, 'customer_id', coalesce(number, 0), 'customer_uuid', ch.customer_id,
    'submitted_date', bare_time(t.submitted_at), 'account_holder', coalesce(ch.card->>'card_holder', ch.bank_account->>'account_holder'),
    'client_ip', NULL, 'server_ip', NULL, 'auth_code', NULL, 'avs_result', NULL, 'card_code_result', NULL,
    'status', t.status, 'status_code', t.return_code, 'debt_account', acct, 'chargeback', NULL, 'debt_account_settlement_offer', NULL,
    'payment_plan_uuid', ch.payment_plan_id, 'scheduled_charge_uuid', CASE WHEN ch.scheduled_at IS NOT NULL THEN ch.id END) $$;

-- The saved method a charge was made with, its card as the charge's; \`uses\` is bare_method_uses(m).
CREATE OR REPLACE FUNCTION bare_charge_method(m payment_methods, ch charges, uses jsonb) RETURNS jsonb LANGUAGE sql STABLE AS $$
  SELECT jsonb_build_object('id', m.id, 'type', m.type,
      'card_token', ch.card || jsonb_build_object('created_at', bare_time(ch.created_at), 'updated_at', bare_time(ch.updated_at)), 'bank_account', ch.bank_account,
      'is_primary', m.is_primary, 'billing_address', NULL, 'created_at', bare_time(m.created_at), 'updated_at', bare_time(m.updated_at))
    || uses || CASE WHEN ch.status = 'scheduled' THEN '{"has_active_scheduled_charge": true}'::jsonb ELSE '{}' END $$;

-- A charge (EventCharge): its account \`acct\` embedded, its method and first transaction as built above.
CREATE OR REPLACE FUNCTION bare_charge(ch charges, acct jsonb, method jsonb, transaction jsonb) RETURNS jsonb LANGUAGE sql STABLE AS $$
  SELECT jsonb_build_object(
    'id', ch.id, 'reference_number', ch.gateway_reference, 'payment_method_type', ch.payment_method_type, 'debt_account', acct,
    'card', ch.card || jsonb_build_object('created_at', bare_time(ch.created_at), 'updated_at', bare_time(ch.updated_at)), 'bank_account', ch.bank_account,
    'payment_method', method, 'billing_address', NULL, 'amount', ch.amount, 'total_amount', ch.amount + ch.fees,
    'payment_date', to_char(coalesce(ch.charged_at, ch.created_at) AT TIME ZONE 'UTC', 'MM/DD/YYYY'),
    'success', ch.status NOT IN ('failed', 'scheduled', 'canceled'), 'error', ch.error, 'error_code', ch.error_code,
    'source', ch.source, 'source_name', CASE ch.source WHEN 'api' THEN 'API' WHEN 'payment_plan' THEN 'Payment plan' WHEN 'autopay' THEN 'Autopay' ELSE 'Settlement offer' END,
    'fees', '[]'::jsonb, 'transaction', transaction, 'payment_plan_uuid', ch.payment_plan_id, 'payment_plan_charge_uuid', ch.payment_plan_charge_id,
    'scheduled_charge_uuid', CASE WHEN ch.scheduled_at IS NOT NULL THEN ch.id END, 'debt_account_settlement_offer', NULL,
    'created_at', bare_time(ch.created_at), 'updated_at', bare_time(ch.updated_at)) $$;

-- The latest charges (EventCharge) of an account, embedded as \`acct\`, newest first (or its charge
-- \`just\`): each one's method and first transaction joined row by row, by their indexes (the
-- plan is cached generic, so no join is left to guess from a parameter's rows).
CREATE OR REPLACE FUNCTION bare_charges(account uuid, just uuid, acct jsonb) RETURNS jsonb LANGUAGE plpgsql STABLE SET plan_cache_mode = force_generic_plan AS $$ BEGIN RETURN (
  SELECT coalesce(jsonb_agg(bare_charge(ch.r, acct,
           CASE WHEN (mm.r).id IS NOT NULL THEN bare_charge_method(mm.r, ch.r, mm.uses) END,
           CASE WHEN (ft.t).id IS NOT NULL THEN bare_transaction(ft.t, ch.r, cu.number,
             CASE WHEN (ft.t).debt_account_id::text = acct->>'id' THEN acct ELSE bare_account_of((ft.t).debt_account_id) END) END)
           ORDER BY (ch.r).created_at DESC, (ch.r).id DESC), '[]')
    FROM (SELECT c AS r FROM charges c WHERE c.debt_account_id = account AND (just IS NULL OR c.id = just) ORDER BY c.created_at DESC, c.id DESC LIMIT 10) ch
    LEFT JOIN LATERAL (SELECT m AS r, bare_method_uses(m) AS uses FROM payment_methods m WHERE m.id = (ch.r).payment_method_id) mm ON true
    LEFT JOIN LATERAL (SELECT c.number FROM customers c WHERE c.id = (ch.r).customer_id) cu ON true
    LEFT JOIN LATERAL (SELECT t FROM transactions t WHERE t.charge_id = (ch.r).id ORDER BY t.number LIMIT 1) ft ON true); END $$;

CREATE OR REPLACE FUNCTION bare_instalment(i payment_plan_charges) RETURNS jsonb LANGUAGE sql STABLE AS $$
  SELECT jsonb_build_object('id', i.id, 'charge_date', i.charge_date, 'amount', i.amount, 'status', i.status,
    'successfully_charged_at', bare_time(i.successfully_charged_at), 'attempts', i.attempts, 'scheduled', i.status = 'pending',
    'skipped', i.status IN ('canceled', 'skipped'), 'interest', 0, 'fees', '[]'::jsonb, 'total_fees_amount', 0, 'total_amount', i.amount,
    'settlement_offer', NULL, 'created_at', bare_time(i.created_at), 'updated_at', bare_time(i.updated_at)) $$;

-- A customer embedded whole (EventEmbeddedCustomer): its accounts, addresses and saved methods.
CREATE OR REPLACE FUNCTION bare_customer(c customers) RETURNS jsonb LANGUAGE plpgsql STABLE SET plan_cache_mode = force_generic_plan AS $$ BEGIN RETURN (SELECT jsonb_build_object('id', c.id, 'name', c.name, 'email', c.email, 'username', NULL, 'phone', c.phone, 'date_of_birth', c.date_of_birth,
    'last_activity_at', NULL, 'ssn_last4', c.ssn_last4, 'external_id', c.external_id, 'rules', '[]'::jsonb,
    'metadata', CASE WHEN c.metadata = '{}' THEN '[]'::jsonb ELSE bare_metadata(c.metadata, c.created_at, c.updated_at) END,
    'debt_accounts', (SELECT coalesce(jsonb_agg(bare_account(a) ORDER BY a.created_at, a.id), '[]') FROM debt_accounts a WHERE a.customer_id = c.id),
    'addresses', (SELECT coalesce(jsonb_agg(jsonb_build_object('id', ad.id, 'name', ad.name, 'city', ad.city, 'postal_code', ad.postal_code, 'country', ad.country,
        'line1', ad.line1, 'line2', ad.line2, 'state', ad.state, 'is_primary', ad.is_primary, 'created_at', bare_time(ad.created_at), 'updated_at', bare_time(ad.updated_at))
        ORDER BY ad.created_at, ad.id), '[]') FROM customer_addresses ad WHERE ad.customer_id = c.id),
    'payment_methods', (SELECT coalesce(jsonb_agg(bare_method(m) ORDER BY m.created_at, m.id), '[]') FROM payment_methods m WHERE m.customer_id = c.id),
    'registered_at', NULL, 'created_at', bare_time(c.created_at), 'updated_at', bare_time(c.updated_at),
    'must_accept_policies', false, 'must_verify_customer', false, 'must_verify_address', false) || bare_names(c.name)); END $$;

-- A plan (EventPaymentPlan) with its instalments; its account \`acct\` embedded, with its customer when \`with_customer\`.
CREATE OR REPLACE FUNCTION bare_plan(p payment_plans, a debt_accounts, acct jsonb, with_customer boolean) RETURNS jsonb LANGUAGE plpgsql STABLE SET plan_cache_mode = force_generic_plan AS $$ BEGIN RETURN (SELECT jsonb_build_object('id', p.id, 'frequency', p.frequency, 'start_date', p.start_date,
    'end_date', (SELECT i.charge_date FROM payment_plan_charges i WHERE i.payment_plan_id = p.id AND i.status <> 'canceled' ORDER BY i.charge_date DESC, i.seq DESC LIMIT 1),
    'amount', p.amount, 'status', p.status,
    'charges', (SELECT coalesce(jsonb_agg(bare_instalment(i) ORDER BY i.charge_date, i.seq), '[]') FROM payment_plan_charges i WHERE i.payment_plan_id = p.id),
    'charges_total_amount', (SELECT coalesce(sum(i.amount), 0) FROM payment_plan_charges i WHERE i.payment_plan_id = p.id AND i.status = 'succeeded'),
    'payment_method', (SELECT bare_method(m) FROM payment_methods m WHERE m.id = p.payment_method_id),
    'debt_account', acct || jsonb_build_object('fees', '[]'::jsonb, 'customer', CASE WHEN with_customer THEN (SELECT bare_customer(c) FROM customers c WHERE c.id = a.customer_id) END),
    'enrolled_at', bare_time(p.enrolled_at), 'canceled_at', bare_time(p.canceled_at),
    'recurring_day', CASE WHEN p.frequency = 'monthly' THEN extract(day FROM p.start_date)::int END,
    'source', 'api', 'source_name', 'API', 'fees', '[]'::jsonb, 'total_interest', 0, 'total_fees', 0,
    'latest_charge', (SELECT bare_instalment(i) FROM payment_plan_charges i WHERE i.payment_plan_id = p.id AND i.status = 'succeeded' ORDER BY i.charge_date DESC, i.seq DESC LIMIT 1),
    'next_charge', (SELECT bare_instalment(i) FROM payment_plan_charges i WHERE i.payment_plan_id = p.id AND i.status = 'pending' ORDER BY i.charge_date, i.seq LIMIT 1),
    'rules', jsonb_build_object('unscheduled_payment_plan_editable', p.status = 'pending_configuration'),
    'created_at', bare_time(p.created_at), 'updated_at', bare_time(p.updated_at))); END $$;

-- payment-plan.update, named by its account: the account's latest plan, its customer embedded.
CREATE OR REPLACE FUNCTION bare_plan_event(a debt_accounts) RETURNS jsonb LANGUAGE plpgsql STABLE SET plan_cache_mode = force_generic_plan AS $$ BEGIN RETURN (SELECT bare_plan(p, a, bare_account(a), true) FROM payment_plans p WHERE p.debt_account_id = a.id ORDER BY p.created_at DESC, p.id DESC LIMIT 1); END $$;

-- debt-account.update (EventDebtAccount): the account with its customer's summary, latest charges and transactions, plan, parent and first child.
CREATE OR REPLACE FUNCTION bare_account_event(a debt_accounts) RETURNS jsonb LANGUAGE plpgsql STABLE SET plan_cache_mode = force_generic_plan AS $$ BEGIN RETURN (SELECT acct || jsonb_build_object(
    'customer', jsonb_build_object('id', c.id, 'name', c.name, 'email', c.email, 'phone', c.phone, 'external_id', c.external_id,
        'created_at', bare_time(c.created_at), 'updated_at', bare_time(c.updated_at)) || bare_names(c.name),
    'charges', bare_charges(a.id, NULL, acct),
    'transactions', (SELECT coalesce(jsonb_agg(bare_transaction(x.t, ch.r, cu.number, acct) ORDER BY (x.t).created_at DESC, (x.t).id DESC), '[]')
                  FROM (SELECT t FROM transactions t WHERE t.debt_account_id = a.id ORDER BY t.created_at DESC, t.id DESC LIMIT 10) x
                  JOIN LATERAL (SELECT c AS r FROM charges c WHERE c.id = (x.t).charge_id) ch ON true
                  LEFT JOIN LATERAL (SELECT c.number FROM customers c WHERE c.id = (ch.r).customer_id) cu ON true),
    'payment_plan', (SELECT bare_plan(p, a, acct, false) FROM payment_plans p WHERE p.debt_account_id = a.id ORDER BY p.created_at DESC, p.id DESC LIMIT 1),
    'documents', '[]'::jsonb, 'disputes', '[]'::jsonb, 'fees', '[]'::jsonb,
    'first_child', (SELECT bare_account(k) FROM debt_accounts k WHERE k.parent_id = a.id ORDER BY k.created_at, k.id LIMIT 1),
    'parent', (SELECT bare_account(p) FROM debt_accounts p WHERE p.id = a.parent_id),
    'scheduled_charges', '[]'::jsonb, 'active_dispute', NULL, 'settlement_offer', NULL, 'accepted_debt_account_settlement_offer', NULL)
  FROM (SELECT bare_account(a) AS acct) x, customers c WHERE c.id = a.customer_id); END $$;

-- charge.succeeded (EventCharge).
CREATE OR REPLACE FUNCTION bare_charge_event(ch charges) RETURNS jsonb LANGUAGE sql STABLE AS $$ SELECT bare_charges(ch.debt_account_id, ch.id, bare_account_of(ch.debt_account_id)) -> 0 $$;
`;

/** Creates the payload functions in `db` (bare_account refers to itself: bodies are checked when called). */
export async function createBarePayloadFunctions(db: Knex): Promise<void> {
  await db.transaction(async (trx) => {
    await trx.raw('SET LOCAL check_function_bodies = off');
    await trx.raw(FUNCTIONS);
  });
}
