/**
 * Whether looking for cached copies still pays, from the share of lookups that found a current
 * copy lately. A lookup that misses costs more than no lookup (the copy's validator in the read's
 * batch, the Workers cache lookup, and a copy of the answer kept for a next time that a write may
 * make stale first): under a steady flow of writes, copies of catalogue reads are stale before
 * anyone reads them again, and the mixed load of bench/README.md ("Mixed reads and writes") paid
 * 15-20 % more CPU per request for lookups that found nothing.
 *
 * After `window` lookups, when fewer than one in `minShare` served a copy, only every `probeEvery`-th
 * request looks (and stores its answer); the others read as if uncached. Probes keep the tally
 * current, so caching resumes once copies are found again. Counts halve when they reach twice the
 * window, so the tally follows the recent past. Skipping a lookup never serves anything stale: it
 * only forgoes a copy.
 */
export class HitTally {
  private lookups = 0;
  private hits = 0;
  private skipped = 0;

  constructor(
    private readonly window = 256,
    private readonly minShare = 16,
    private readonly probeEvery = 16,
  ) {}

  /** Whether this request should look for a copy (and keep its answer). */
  worthLooking(): boolean {
    if (this.lookups < this.window || this.hits * this.minShare >= this.lookups) return true;
    this.skipped += 1;
    return this.skipped % this.probeEvery === 0;
  }

  /** Counts a lookup and whether it served a copy. */
  record(hit: boolean): void {
    this.lookups += 1;
    if (hit) this.hits += 1;
    if (this.lookups >= 2 * this.window) {
      this.lookups /= 2;
      this.hits /= 2;
    }
  }
}
