/**
 * Example parts: a value of an Example Object (`components/examples/*.yaml`) may put a record
 * in by `$ref` to a file of `components/examples/parts/` (`{$ref: ./parts/Customer.yaml}`),
 * with sibling keys replacing the part's own (`{$ref: ./parts/Customer.yaml, name: Maria G.}`),
 * so one customer, account, charge... is written once and every payload that embeds it says so.
 * OpenAPI treats an example's value as plain data, where `$ref` means nothing, and Redocly
 * leaves it there; this preprocessor puts each part in before the lint checks the example
 * against its schema and before the bundle is written, so generated/*.json (what Prism, the
 * validator and the tests read) holds whole examples.
 */
const { readFileSync } = require('node:fs');
const { dirname, resolve } = require('node:path');
const { parseYaml } = require('@redocly/openapi-core');

function inline(value, dir, chain) {
  if (Array.isArray(value)) return value.map((item) => inline(item, dir, chain));
  if (!value || typeof value !== 'object') return value;
  if (typeof value.$ref === 'string' && !value.$ref.startsWith('#')) {
    const file = resolve(dir, value.$ref);
    if (chain.includes(file)) throw new Error(`Example parts refer to each other: ${[...chain, file].join(' -> ')}`);
    const { $ref: _ref, ...overrides } = value;
    const part = inline(parseYaml(readFileSync(file, 'utf8')), dirname(file), [...chain, file]);
    return { ...part, ...inline(overrides, dir, chain) };
  }
  return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, inline(inner, dir, chain)]));
}

module.exports = function examplePartsPlugin() {
  return {
    id: 'examples',
    preprocessors: {
      oas3: {
        'inline-parts': () => ({
          Example: {
            enter(node, ctx) {
              if (node.value !== undefined) node.value = inline(node.value, dirname(ctx.location.source.absoluteRef), []);
            },
          },
        }),
      },
    },
  };
};
