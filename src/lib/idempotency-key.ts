/**
 * A key this request holds. `claim` (random, one per claim) fences it: once the lease ran out and
 * another request took the key over, a late write of this one matches nothing.
 */
export interface HeldKey {
  userId: number;
  scope: string;
  key: string;
  claim: string;
}
