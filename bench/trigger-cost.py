#!/usr/bin/env python3
"""SQLite CPU that the triggers add to the mixed load's writes (bench/README.md, "Mixed reads and writes").

  python3 bench/trigger-cost.py --data-dir bench/.scale-data/demo-2000   # a dataset of `npm run bench:scale`
  python3 bench/trigger-cost.py --db copy.sqlite --without 'products_counts%'

Works on a copy of the D1 file, applies the migrations it lacks, optionally drops the triggers whose
names match --without (LIKE patterns; 'products_%' and 'bill_of_materials_%' together: none on the
written tables), then times, as the process's CPU, 300 rounds of the mixed load's writes: a create
of a base product with five components (one transaction), a patch of the base product's name and
weight, and a bill-of-materials entry. Statements are prepared once, as D1 keeps them. Prints the
best of three runs in ms per write. Python's own sqlite3 is used because Node 20 has none built in;
its SQLite version is printed, and D1's is another, so compare variants of one run, not machines.
"""
import argparse, glob, os, shutil, sqlite3, tempfile, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
parser = argparse.ArgumentParser()
parser.add_argument("--db")
parser.add_argument("--data-dir")
parser.add_argument("--without", action="append", default=[])
parser.add_argument("--rounds", type=int, default=300)
args = parser.parse_args()
source = args.db or next(f for f in glob.glob(os.path.join(args.data_dir, "**", "*.sqlite"), recursive=True) if not f.endswith("metadata.sqlite"))
work = tempfile.mkdtemp(prefix="trigger-cost-")
base_copy = os.path.join(work, "base.sqlite")
shutil.copy(source, base_copy)
c = sqlite3.connect(base_copy, isolation_level=None)
done = {name for (name,) in c.execute("SELECT name FROM d1_migrations")}
for path in sorted(glob.glob(os.path.join(ROOT, "migrations", "*.sql"))):
    if os.path.basename(path) not in done:
        c.executescript(open(path).read())
c.close()

INSERT = "INSERT INTO products (owner_id, name, brand, model, weight_g, depth, parent_id, amount_in_parent, product_type_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
best = None
for run in range(3):
    path = os.path.join(work, f"run{run}.sqlite")
    shutil.copy(base_copy, path)
    c = sqlite3.connect(path, isolation_level=None)
    for pattern in args.without:
        for (name,) in c.execute("SELECT name FROM sqlite_master WHERE type = 'trigger' AND name LIKE ?", (pattern,)).fetchall():
            c.execute(f"DROP TRIGGER {name}")
    owner = c.execute("SELECT id FROM users WHERE is_active = 1 LIMIT 1").fetchone()[0]
    material = c.execute("SELECT id FROM materials LIMIT 1").fetchone()[0]
    product_type = c.execute("SELECT id FROM product_types LIMIT 1").fetchone()[0]
    spent = [0.0, 0.0, 0.0]
    for k in range(args.rounds):
        t0 = time.process_time()
        c.execute("BEGIN")
        root = c.execute(INSERT, (owner, f"Kettle Pro {k}", "alba home", f"KT-{k}", 1200, 0, None, None, product_type)).lastrowid
        for i in range(5):
            c.execute(INSERT, (owner, f"Part {i}", None, None, 50, 1, root, 1, None))
        c.execute("COMMIT")
        t1 = time.process_time()
        c.execute("UPDATE products SET name = ?, weight_g = weight_g + 1, version = version + 1, updated_at = unixepoch() WHERE id = ?", (f"Kettle Max {k}", root))
        t2 = time.process_time()
        c.execute("INSERT INTO bill_of_materials (product_id, material_id, quantity, unit, created_at, updated_at) VALUES (?, ?, 10, 'g', unixepoch(), unixepoch())", (root, material))
        t3 = time.process_time()
        spent = [spent[0] + t1 - t0, spent[1] + t2 - t1, spent[2] + t3 - t2]
    c.close()
    per = [1000 * s / args.rounds for s in spent]
    best = per if best is None or sum(per) < sum(best) else best
shutil.rmtree(work)
label = "without " + ", ".join(args.without) if args.without else "all triggers"
print(f"SQLite {sqlite3.sqlite_version}, {label}: create of 6 records {best[0]:.2f} ms, patch {best[1]:.2f} ms, bill-of-materials entry {best[2]:.2f} ms")
