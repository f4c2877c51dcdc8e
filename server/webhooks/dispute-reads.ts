/** A dispute as its payload reads it: the row, its thread and its files (loaded by payload-reads.ts). */
import type { DisputeCommentRow, DisputeFileRow, DisputeRow } from '../dispute-store/dispute-repo';

export interface DisputeRows {
  dispute: DisputeRow;
  comments: DisputeCommentRow[];
  files: DisputeFileRow[];
}
