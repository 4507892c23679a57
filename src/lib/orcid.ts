/**
 * ORCID iDs: sixteen characters in four groups (`0000-0002-1825-0097`), the last a check character
 * computed over the other fifteen digits by ISO 7064 MOD 11-2 (`X` stands for 10).
 */

const ORCID_FORM = /^\d{4}-\d{4}-\d{4}-\d{3}[\dX]$/;

/** The ISO 7064 MOD 11-2 check character of a string of digits. */
export function orcidCheckCharacter(digits: string): string {
  let total = 0;
  for (const digit of digits) total = (total + Number(digit)) * 2;
  const result = (12 - (total % 11)) % 11;
  return result === 10 ? "X" : String(result);
}

/** Whether `value` is an ORCID iD in its `0000-0000-0000-000X` form with a correct check character. */
export function isValidOrcid(value: string): boolean {
  if (!ORCID_FORM.test(value)) return false;
  const digits = value.replace(/-/g, "");
  return orcidCheckCharacter(digits.slice(0, 15)) === digits[15];
}

/** The iD as the URL ORCID asks everyone to show it as. */
export const orcidUrl = (orcid: string): string => `https://orcid.org/${orcid}`;
