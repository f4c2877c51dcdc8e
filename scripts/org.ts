/**
 * Organization commands, on the same database as the server (also while the server runs on
 * the embedded one):
 *   npm run --silent org:create -- --name <name> [--email <addr>]
 *     prints {"organization_id","production_token","sandbox_token"}
 *   npm run --silent org:rotate-token -- --organization <uuid> --environment production|sandbox
 *     revokes that environment's tokens and prints {"organization_id","environment","token"}
 * Each also says on stderr which database it wrote to: a token works only on a server that runs
 * on that same database (the same DATA_DIR, or the same DATABASE_URL).
 */
import { parseArgs } from 'node:util';
import { loadConfig, type Config } from '../server/kernel/config';
import { migrate, openDatabase } from '../server/db/database';
import { createOrganization, rotateToken } from '../server/organizations/organization-repo';

const usage = `usage:
  org:create -- --name <name> [--email <addr>]
  org:rotate-token -- --organization <uuid> --environment production|sandbox`;

function fail(message: string): never {
  console.error(`${message}\n${usage}`);
  process.exit(2);
}

/** Which database the command wrote to, without the password a DATABASE_URL may carry. */
function databaseNamed(config: Config): string {
  if (!config.databaseUrl) return `the embedded PostgreSQL in ${config.dataDir} (DATA_DIR)`;
  const url = new URL(config.databaseUrl);
  return `${url.hostname || url.searchParams.get('host')}${url.port ? `:${url.port}` : ''}${url.pathname} (DATABASE_URL)`;
}

async function main(): Promise<void> {
  const [command, ...args] = process.argv.slice(2);
  const { values } = parseArgs({
    args,
    options: { name: { type: 'string' }, email: { type: 'string' }, organization: { type: 'string' }, environment: { type: 'string' } },
  });
  if (command === 'create') {
    const name = values.name?.trim();
    if (!name || name.length > 255) fail('--name is required, at most 255 characters');
    if (values.email !== undefined && !/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(values.email)) fail('--email is not an e-mail address');
  } else if (command === 'rotate-token') {
    if (!values.organization || !/^[0-9a-f-]{36}$/i.test(values.organization)) fail('--organization must be a UUID');
    if (values.environment !== 'production' && values.environment !== 'sandbox') fail('--environment must be production or sandbox');
  } else {
    fail(`unknown command ${command ?? ''}`);
  }

  const config = loadConfig();
  const database = await openDatabase(config);
  try {
    await migrate(database.knex);
    console.error(`Writing to ${databaseNamed(config)}; the server must run on this same database to accept these tokens.`);
    if (command === 'create') {
      console.log(JSON.stringify(await createOrganization(database.knex, values.name!.trim(), values.email)));
    } else {
      const environment = values.environment as 'production' | 'sandbox';
      const token = await rotateToken(database.knex, values.organization!, environment);
      if (!token) throw new Error(`no organization ${values.organization}`);
      console.log(JSON.stringify({ organization_id: values.organization, environment, token }));
    }
  } finally {
    await database.close();
  }
}

main().catch((error: Error) => {
  console.error(error.message);
  process.exit(1);
});
