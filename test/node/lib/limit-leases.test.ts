import { describe, expect, it } from "vitest";
import { LeaseBook, type LeasedReading } from "../../../src/rate-limits/leases";

// Units of a request-rate counter taken ahead of use (src/rate-limits/leases.ts). The store below
// is a plain model of the counter object's answer to `consume(specs, units)`
// (src/rate-limits/object.ts): it grants as many of the asked units as the counter has left.

const WINDOW_START = 1_000_000;
const MINUTE = 60;

function store(amount: number, name = "read-ip") {
  let used = 0;
  let calls = 0;
  return {
    get calls() {
      return calls;
    },
    consume(units: number): { granted: number; counters: LeasedReading[] } {
      calls += 1;
      const granted = Math.min(units, amount - used);
      used += granted;
      const counter = {
        name,
        amount,
        windowSeconds: MINUTE,
        used,
        remaining: amount - used,
        resetSeconds: 60,
        windowStart: WINDOW_START,
        exhausted: granted === 0,
      };
      return { granted, counters: [counter] };
    },
  };
}

/** One request as the limiter makes it: a held unit, else a store call; null when refused. */
function request(book: LeaseBook, counter: ReturnType<typeof store>, now: number, cap = 15, key = "ip:1 read-ip") {
  const held = book.take(key, now);
  if (held) return held;
  const answer = counter.consume(book.units(key, now, cap));
  if (answer.granted === 0) return book.take(key, now);
  return book.add(key, answer.counters, answer.granted, now, cap);
}

describe("LeaseBook", () => {
  it("serves exactly the limit to one client, counting down one by one, with far fewer store calls", () => {
    const book = new LeaseBook();
    const counter = store(300);
    const remaining: number[] = [];
    for (let i = 0; i < 301; i++) {
      const readings = request(book, counter, WINDOW_START + 10);
      if (readings) remaining.push(readings[0]!.remaining);
    }
    expect(remaining).toEqual(Array.from({ length: 300 }, (_, i) => 299 - i));
    // 1, 2, 4, 8, then 15 at a time: 23 calls for 300 units, and one refused call.
    expect(counter.calls).toBe(24);
  });

  it("asks for one unit first, then doubles up to the cap", () => {
    const book = new LeaseBook();
    const counter = store(10_000);
    const asked: number[] = [];
    for (let i = 0; i < 60; i++) {
      const key = "ip:1 read-ip";
      if (book.take(key, WINDOW_START)) continue;
      const units = book.units(key, WINDOW_START, 16);
      asked.push(units);
      const answer = counter.consume(units);
      book.add(key, answer.counters, answer.granted, WINDOW_START, 16);
    }
    expect(asked).toEqual([1, 2, 4, 8, 16, 16, 16]);
  });

  it("hands out the earliest units first when answers of concurrent calls arrive out of order", () => {
    const book = new LeaseBook();
    const counter = store(300);
    const key = "ip:1 read-ip";
    const first = counter.consume(4);
    const second = counter.consume(4);
    // The later answer is recorded first; its own request takes unit 5.
    expect(book.add(key, second.counters, 4, WINDOW_START, 15)[0]!.remaining).toBe(295);
    expect(book.add(key, first.counters, 4, WINDOW_START, 15)[0]!.remaining).toBe(299);
    const rest = Array.from({ length: 6 }, () => book.take(key, WINDOW_START)![0]!.remaining);
    expect(rest).toEqual([298, 297, 296, 294, 293, 292]);
    expect(book.take(key, WINDOW_START)).toBeNull();
  });

  it("voids held units when their window ends, and halves the next grants if units were left", () => {
    const book = new LeaseBook();
    const counter = store(300);
    const key = "ip:1 read-ip";
    for (let i = 0; i < 8; i++) request(book, counter, WINDOW_START);
    // Grants of 1, 2 and 4 spent; a grant of 8 with 7 units left, and the next call would ask 15.
    expect(book.units(key, WINDOW_START, 15)).toBe(15);
    expect(book.take(key, WINDOW_START + MINUTE * 1000)).toBeNull();
    expect(book.units(key, WINDOW_START + MINUTE * 1000, 15)).toBe(7);
  });

  it("keeps clients and counter sets apart, and reports each counter's own reset", () => {
    const book = new LeaseBook();
    const a = store(300);
    const b = store(300);
    for (let i = 0; i < 3; i++) request(book, a, WINDOW_START, 15, "ip:1 read-ip");
    const other = request(book, b, WINDOW_START + 30_500, 15, "ip:2 read-ip")!;
    expect(other[0]!.remaining).toBe(299);
    expect(other[0]!.resetSeconds).toBe(30);
    expect(request(book, a, WINDOW_START, 15, "ip:1 read-ip")![0]!.remaining).toBe(296);
  });
});
