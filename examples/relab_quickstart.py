# %% [markdown]
# # relab for researchers: sign in, page through products, load the export, find what needs work, open a release
#
# Needs Python 3.9+ with `requests` and `pandas` (and `pyarrow` to read a release's Parquet
# files; without it the CSV files are read). Run it as a script (`python3 relab_quickstart.py`)
# or open `relab_quickstart.ipynb`, which has the same cells.
#
# Settings come from the environment: `RELAB_API` (the deployment's origin, default
# `http://localhost:8787`; the paths below add `/v1`), `RELAB_EMAIL` and `RELAB_PASSWORD` (asked
# for when unset), and optionally `RELAB_RELEASE` to pin a dataset release by its version.

# %%
import getpass
import hashlib
import importlib.util
import io
import os
import time

import pandas as pd
import requests

BASE_URL = os.environ.get("RELAB_API", "http://localhost:8787").rstrip("/")

try:
    show = display  # a rich table in Jupyter
except NameError:
    show = print


class Relab:
    """A session on the relab API: bearer tokens (renewed when they expire, after 15 minutes),
    waits when a rate limit says so, and errors raised with their Problem Details."""

    def __init__(self, base_url):
        self.api = f"{base_url}/v1"
        self.http = requests.Session()
        self.refresh_token = None

    def sign_in(self, username, password):
        answer = self.http.post(f"{self.api}/auth/bearer/login", data={"username": username, "password": password}, timeout=30)
        if answer.status_code == 202:  # the account has two-step verification
            code = input("Authenticator code (or a recovery code): ")
            answer = self.http.post(f"{self.api}/auth/mfa/challenge", json={"mfa_token": answer.json()["mfa_token"], "code": code}, timeout=30)
        self._use(self._checked(answer))

    def get(self, path, allow=(), **kwargs):
        for _ in range(5):
            answer = self.http.get(f"{self.api}{path}", timeout=120, **kwargs)
            if answer.status_code == 401 and self.refresh_token:
                refreshed = self.http.post(f"{self.api}/auth/bearer/refresh", json={"refresh_token": self.refresh_token}, timeout=30)
                self._use(self._checked(refreshed))
            elif answer.status_code == 429:
                time.sleep(int(answer.headers.get("Retry-After", "1")))
            else:
                return answer if answer.status_code in allow else self._checked(answer)
        return self._checked(answer)

    def _use(self, answer):
        tokens = answer.json()
        self.refresh_token = tokens["refresh_token"]
        self.http.headers["Authorization"] = f"Bearer {tokens['access_token']}"

    @staticmethod
    def _checked(answer):
        if answer.ok:
            return answer
        try:
            problem = answer.json()
        except ValueError:
            answer.raise_for_status()
        raise RuntimeError(f"{answer.status_code} {problem.get('code')}: {problem.get('detail')} (request {problem.get('request_id')})")


# %% [markdown]
# ## 1. Sign in with a bearer token
#
# Public data needs no account, but a signed-in caller reads with a larger rate limit (1,500
# requests a minute instead of 300 per address) and may ask for its own products (`owner=me`).

# %%
relab = Relab(BASE_URL)
relab.sign_in(os.environ.get("RELAB_EMAIL") or input("Email: "), os.environ.get("RELAB_PASSWORD") or getpass.getpass("Password: "))
me = relab.get("/users/me").json()
print(f"Signed in as {me['username']} at {BASE_URL}")

# %% [markdown]
# ## 2. Page through products
#
# Lists answer `{items, total, page, size, pages}`, at most 100 items a page. The filters are those
# of the API's reference (`/v1/docs`), e.g. `search`, `brand[in]`, `created_at[ge]`.

# %%
def all_items(path, **params):
    page = 1
    while True:
        body = relab.get(path, params={**params, "page": page, "size": 100}).json()
        yield from body["items"]
        if page >= body["pages"]:
            return
        page += 1


products = pd.json_normalize(list(all_items("/products", order_by="created_at")))
print(f"{len(products)} base products")
show(products.head())

# %% [markdown]
# ## 3. Load the CSV export into a DataFrame
#
# The export holds every matching base product with all its components, one row per record
# (`parent_id` links a component to the record it was taken out of). It takes the list's filters.
# Text cells that a spreadsheet would run as a formula (starting with `=`, `+`, `-`, `@`) carry a
# leading `'`; `unguard` takes it off again (docs/exports.md).

# %%
def unguard(frame):
    # Text columns are `object` in pandas 1 and 2 and `str` in pandas 3; "string" selects the latter.
    text = frame.select_dtypes(include=["object", "string"]).columns
    frame[text] = frame[text].apply(lambda column: column.str.replace(r"^'(?=[=+\-@\t\r])", "", regex=True))
    return frame


export = relab.get("/products/export", params={"order_by": "created_at"})
records = unguard(pd.read_csv(io.BytesIO(export.content), encoding="utf-8-sig", parse_dates=["created_at", "updated_at"]))
base = records[records["parent_id"].isna()]
print(f"{len(records)} records: {len(base)} base products and {len(records) - len(base)} components")
show(base.groupby("brand")["weight_g"].describe())

# %% [markdown]
# ## 4. Records that need work
#
# Every record carries nine quality checks, each `pass`, `fail` or `not_applicable` (has a weight,
# dimensions, a clean photo, components or a bill of materials; do the components and the
# materials add up to the weight within 10 %; is the density plausible; ...), and a
# `quality_score`: the share of its applicable checks that pass, current with every write
# (docs/quality.md). Lists take `quality_score[lt]`, `quality_score[ge]` and
# `quality_fail[in]=<code>,...`. Here: your own products with a failing check, lowest score
# first, with what fails and the numbers, then how the whole dataset fares.

# %%
mine = pd.json_normalize(list(all_items("/products", owner="me", **{"quality_score[lt]": 1})))
print(f"{len(mine)} of your base products need work")
worst = mine.sort_values("quality_score").head(20).to_dict("records") if len(mine) else []
failing = []
for product in worst:
    quality = relab.get(f"/products/{product['id']}/quality").json()
    for check in quality["checks"]:
        if check["status"] == "fail":
            failing.append({"id": product["id"], "name": product["name"], "score": quality["score"], "check": check["code"], "detail": check["detail"]})
if failing:
    show(pd.DataFrame(failing))

dataset = relab.get("/stats/quality").json()
checks = pd.DataFrame(dataset["base_products"]).T
checks["passing"] = checks["pass"] / (checks["pass"] + checks["fail"]).where(lambda checked: checked > 0)
show(checks)

# %% [markdown]
# ## 5. Open a dataset release (needs a published release)
#
# **This cell needs a published release.** Releases are frozen, citable snapshots with a licence
# and checksums, served at `GET /v1/releases/latest`, `GET /v1/releases/{version}` and
# `GET /v1/releases/{version}/files/{path}` (`records.csv` / `records.parquet`,
# `record_materials.*`, `images.*`, `quality.*`, `reference/*`, `datapackage.json`, `SHA256SUMS`). Until a
# deployment has published one (or when it does not serve releases yet) the cell says so and
# stops. Set `RELAB_RELEASE` to pin an analysis to one version. The Parquet file holds the exact
# text; the CSV file (read when `pyarrow` is missing) carries the export's formula guard, which
# `unguard` takes off again (docs/releases.md).

# %%
version = os.environ.get("RELAB_RELEASE")
answer = relab.get(f"/releases/{version}" if version else "/releases/latest", allow=(404,))
if answer.status_code == 404:
    print(f"No published release {version} here: skipping this step." if version else "No published release here yet: skipping this step.")
else:
    release = answer.json()
    print(f"Release {release['version']}: {release['title']} ({release['licence']}), {release['counts']['records']} records")
    files = {file["path"]: file for file in release["files"]}
    name = "records.parquet" if importlib.util.find_spec("pyarrow") else "records.csv"
    data = relab.get(f"/releases/{release['version']}/files/{name}").content
    if hashlib.sha256(data).hexdigest() != files[name]["sha256"]:
        raise RuntimeError(f"{name}: checksum does not match the release's")
    if name.endswith(".parquet"):
        released = pd.read_parquet(io.BytesIO(data))
    else:
        released = unguard(pd.read_csv(io.BytesIO(data), encoding="utf-8-sig", parse_dates=["created_at", "updated_at"]))
    print(f"{name}: {len(released)} records")
