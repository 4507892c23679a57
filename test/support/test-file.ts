// The workerd projects run many test files in one runtime, one after another, and wipe storage
// before each (test/setup/fresh-storage.ts). What a helper remembers for "this database" must be
// forgotten with it: this counter says which file is running.
let current = 0;

/** Called by the setup file before each test file. */
export function beginTestFile(): void {
  current += 1;
}

/** `make()` once per test file: the value stays for the file's tests and is made anew for the next file. */
export function oncePerFile<T>(make: () => T): () => T {
  let memo: { file: number; value: T } | undefined;
  return () => {
    if (memo?.file !== current) memo = { file: current, value: make() };
    return memo.value;
  };
}
