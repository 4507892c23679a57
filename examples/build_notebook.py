"""Writes relab_quickstart.ipynb from relab_quickstart.py, whose `# %%` markers delimit the cells
(`# %% [markdown]` for text), so the script and the notebook hold the same steps.

    python3 examples/build_notebook.py           # write the notebook
    python3 examples/build_notebook.py --check   # exit 1 when the notebook is out of date
"""
import json
import pathlib
import sys

HERE = pathlib.Path(__file__).resolve().parent
SCRIPT = HERE / "relab_quickstart.py"
NOTEBOOK = HERE / "relab_quickstart.ipynb"


def cells(text):
    found, kind, lines = [], None, []

    def close():
        while lines and not lines[-1].strip():
            lines.pop()
        if kind is not None:
            found.append((kind, list(lines)))

    for line in text.splitlines():
        if line.startswith("# %%"):
            close()
            kind, lines = ("markdown" if "[markdown]" in line else "code"), []
        elif kind == "markdown":
            lines.append(line[2:] if line.startswith("# ") else line.lstrip("#"))
        elif kind == "code" and (lines or line.strip()):
            lines.append(line)
    close()
    return found


def notebook(text):
    def cell(index, kind, lines):
        source = [line + "\n" for line in lines]
        if source:
            source[-1] = source[-1].rstrip("\n")
        base = {"cell_type": kind, "id": f"cell-{index}", "metadata": {}, "source": source}
        return {**base, "execution_count": None, "outputs": []} if kind == "code" else base

    return {
        "cells": [cell(i, kind, lines) for i, (kind, lines) in enumerate(cells(text), start=1)],
        "metadata": {
            "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
            "language_info": {"name": "python"},
        },
        "nbformat": 4,
        "nbformat_minor": 5,
    }


if __name__ == "__main__":
    wanted = json.dumps(notebook(SCRIPT.read_text(encoding="utf-8")), indent=1, ensure_ascii=False) + "\n"
    if "--check" in sys.argv[1:]:
        current = NOTEBOOK.read_text(encoding="utf-8") if NOTEBOOK.exists() else ""
        if current != wanted:
            sys.exit(f"{NOTEBOOK.name} is out of date: run python3 examples/build_notebook.py")
        print(f"{NOTEBOOK.name} matches {SCRIPT.name}")
    else:
        NOTEBOOK.write_text(wanted, encoding="utf-8")
        print(f"wrote {NOTEBOOK.name}")
