/**
 * The sandbox clock as a test reads and moves it, through the API: its time, its day, a day
 * some days away, and a move of whole days that must have carried out everything due.
 */
import type { ApiClient } from '../../client';
import { dateOf } from './dates';

export const DAY = 86_400_000;

export async function sandboxNow(api: ApiClient): Promise<Date> {
  return new Date((await api.GET('/sandbox/clock')).data!.data.now);
}

/** The sandbox's day (YYYY-MM-DD, UTC). */
export const sandboxToday = async (api: ApiClient) => dateOf(await sandboxNow(api));

/** The day `days` after the sandbox's day (negative: before it). */
export const sandboxDayAfter = async (api: ApiClient, days: number) =>
  dateOf(new Date(Date.parse(`${await sandboxToday(api)}T00:00:00Z`) + days * DAY));

/** Moves the sandbox clock `days` on and expects the work due by then done (`ready`). */
export async function advanceSandbox(api: ApiClient, days: number): Promise<void> {
  const { data, response } = await api.POST('/sandbox/clock', { body: { advance_to: new Date((await sandboxNow(api)).getTime() + days * DAY).toISOString() } });
  expect(response.status).toBe(200);
  expect(data!.data.status).toBe('ready');
}
