/** A licence as Data Package `licenses[]` holds it: an SPDX id, where to read it, its title. */
export interface Licence {
  /** SPDX identifier, e.g. `CC-BY-4.0`. */
  readonly name: string;
  readonly path: string;
  readonly title: string;
}

const SPDX_ID = /^[A-Za-z0-9][A-Za-z0-9.+-]*$/;

// The open data licences a release is likely to carry; another id needs its path and title given.
const KNOWN: Readonly<Record<string, Omit<Licence, "name">>> = {
  "CC-BY-4.0": {
    path: "https://creativecommons.org/licenses/by/4.0/",
    title: "Creative Commons Attribution 4.0 International",
  },
  "CC-BY-SA-4.0": {
    path: "https://creativecommons.org/licenses/by-sa/4.0/",
    title: "Creative Commons Attribution Share Alike 4.0 International",
  },
  "CC0-1.0": {
    path: "https://creativecommons.org/publicdomain/zero/1.0/",
    title: "Creative Commons Zero v1.0 Universal",
  },
  "ODbL-1.0": {
    path: "https://opendatacommons.org/licenses/odbl/1-0/",
    title: "Open Data Commons Open Database License v1.0",
  },
  "ODC-By-1.0": {
    path: "https://opendatacommons.org/licenses/by/1-0/",
    title: "Open Data Commons Attribution License v1.0",
  },
  "PDDL-1.0": {
    path: "https://opendatacommons.org/licenses/pddl/1-0/",
    title: "Open Data Commons Public Domain Dedication & License 1.0",
  },
};

/** The SPDX ids this service knows (a release may carry any of them). */
export const LICENCE_IDS = [
  "CC-BY-4.0",
  "CC-BY-SA-4.0",
  "CC0-1.0",
  "ODbL-1.0",
  "ODC-By-1.0",
  "PDDL-1.0",
] as const satisfies readonly (keyof typeof KNOWN)[];

/** The licence for an SPDX id; `path` and `title` may be given, and must be for an unknown id. */
export function licence(id: string, details: Partial<Omit<Licence, "name">> = {}): Licence {
  if (!SPDX_ID.test(id)) throw new Error(`"${id}" is not an SPDX licence identifier`);
  const known = KNOWN[id];
  const path = details.path ?? known?.path;
  const title = details.title ?? known?.title;
  if (path === undefined || title === undefined) {
    throw new Error(`licence ${id} is not one this service knows: give its path and title`);
  }
  return { name: id, path, title };
}
