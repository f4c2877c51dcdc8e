/** A time's day as the API writes dates: YYYY-MM-DD, in UTC. */
export const dateOf = (time: Date) => time.toISOString().slice(0, 10);
