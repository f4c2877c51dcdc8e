/** Scraping a server's GET /metrics and reading one sample of it, as Prometheus would. */

export async function scrape(origin: string, token?: string): Promise<string> {
  const answer = await fetch(`${origin}/metrics`, { headers: token ? { authorization: `Bearer ${token}` } : {} });
  if (answer.status !== 200) throw new Error(`GET /metrics answered ${answer.status}: ${await answer.text()}`);
  return answer.text();
}

/**
 * The value of the sample `name` whose labels include `labels` (the sum when several match:
 * a counter split by a label the caller does not name); undefined when none matches.
 */
export function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  let total: number | undefined;
  for (const line of text.split('\n')) {
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const found = Object.fromEntries([...(match[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)].map((pair) => [pair[1], pair[2]]));
    if (Object.entries(labels).every(([key, value]) => found[key] === value)) total = (total ?? 0) + Number(match[3]);
  }
  return total;
}
