/**
 * Every operation of the API lists the error statuses any operation can give, through the
 * shared responses (components/responses): 400 (a body or a request line that cannot be read),
 * 401 and 429 (unless the operation is public, `security: []`: the rate limit is per token),
 * 404 where the path names something, 413 and 415 where it takes a body, 422 and 500. The server answers each of these from
 * one place (server/http/error-handler.ts), whatever the operation, so an operation that omits
 * one is a document that lies about what a client can meet (and the response validator would
 * have nothing to check the answer against).
 */
function sharedErrorStatuses() {
  let path = '';
  let rootSecurity;
  const operation = {
    enter(op, ctx) {
      const needed = ['400', '422', '500'];
      const security = op.security ?? rootSecurity;
      // The rate limit is per token: an operation without one has neither 401 nor 429.
      if (!(Array.isArray(security) && security.length === 0)) needed.push('401', '429');
      if (path.includes('{')) needed.push('404');
      if (op.requestBody) needed.push('413', '415');
      const listed = Object.keys(op.responses ?? {});
      const missing = needed.filter((status) => !listed.includes(status)).sort();
      if (missing.length === 0) return;
      ctx.report({
        message: `${op.operationId ?? `${String(ctx.key).toUpperCase()} ${path}`} does not list ${missing.join(', ')}: refer to the shared responses (components/responses).`,
        location: ctx.location.child(['responses']),
      });
    },
  };
  return {
    Root: { enter: (root) => void (rootSecurity = root.security) },
    // Under `paths` only: a webhook is an operation the receiver answers, not ours.
    Paths: { PathItem: { enter: (_item, ctx) => void (path = String(ctx.key)), Operation: operation } },
  };
}

module.exports = function errorStatusesPlugin() {
  return { id: 'errors', rules: { oas3: { 'shared-error-statuses': sharedErrorStatuses } } };
};
