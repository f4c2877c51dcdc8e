/**
 * The moves of a dispute's status (the document's DisputeStatus): pending → under_review or a
 * final status; under_review → a final status; a final status never changes.
 */
import type { components } from '../../generated/schema';

type Status = components['schemas']['DisputeStatus'];

export const FINAL_STATUSES: Status[] = ['verified', 'resolved', 'withdrawn'];

const MOVES: Record<Status, Status[]> = {
  pending: ['under_review', ...FINAL_STATUSES],
  under_review: FINAL_STATUSES,
  verified: [],
  resolved: [],
  withdrawn: [],
};

export function canMove(from: Status, to: Status): boolean {
  return MOVES[from].includes(to);
}
