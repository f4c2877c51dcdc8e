import { Router } from 'express';
import type { AppDeps } from '../app';
import { tenantOf } from '../http/auth';
import { parseInclude } from '../http/include';
import { envelope, pageRequest, paginate } from '../http/pagination';
import { DEBT_ACCOUNT_INCLUDES, loadDebtAccounts } from './debt-account-loader';
import { DEBT_ACCOUNT_COLUMNS, DEBT_ACCOUNTS, debtAccountRepo, type DebtAccountRow } from './debt-account-repo';
import { createDebtAccount, deleteDebtAccount, findDebtAccount, updateDebtAccount } from './debt-account-service';
import { lookupDebtAccounts } from './lookup';

const include = (raw: unknown) => parseInclude(raw, DEBT_ACCOUNT_INCLUDES, DEBT_ACCOUNT_INCLUDES);

export function debtAccountRouter({ db, boss }: AppDeps): Router {
  const router = Router();

  router.post('/debt-accounts', async (req, res) => {
    res.status(201).json({ data: await createDebtAccount(db, boss, tenantOf(res), req.body, include(req.query.include)) });
  });

  router.get('/debt-accounts', async (req, res) => {
    const tenant = tenantOf(res);
    const page = pageRequest(req);
    const { total, rows } = await paginate<DebtAccountRow>(debtAccountRepo(db, tenant).query(), page, DEBT_ACCOUNT_COLUMNS, DEBT_ACCOUNTS);
    res.json(envelope(req, page, total, rows, await loadDebtAccounts(db, tenant, rows, include(req.query.include))));
  });

  // Before /debt-accounts/:id, which would otherwise take "lookup" for an id.
  router.get('/debt-accounts/lookup', async (req, res) => {
    res.json(await lookupDebtAccounts(db, tenantOf(res), req, include(req.query.include)));
  });

  router.get('/debt-accounts/:id', async (req, res) => {
    res.json({ data: await findDebtAccount(db, tenantOf(res), req.params.id!, include(req.query.include)) });
  });

  router.put('/debt-accounts/:id', async (req, res) => {
    res.json({ data: await updateDebtAccount(db, boss, tenantOf(res), req.params.id!, req.body, include(req.query.include)) });
  });

  router.delete('/debt-accounts/:id', async (req, res) => {
    await deleteDebtAccount(db, boss, tenantOf(res), req.params.id!);
    res.json({ success: true });
  });

  return router;
}
