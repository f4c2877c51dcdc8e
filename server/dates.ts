/** Today's date in UTC, `YYYY-MM-DD`: what "not in the future" and "today or later" compare with. */
export function todayUtc(): string {
  return new Date().toISOString().slice(0, 10);
}
