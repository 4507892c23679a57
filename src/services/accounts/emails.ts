import type { EmailMessage } from "../../container";

// The texts of the account emails the spec's Events section lists. Tokens travel only in the
// URL fragment of a link, which browsers never send to a server or put in a Referer.

export function verificationEmail(to: string, appUrl: string, token: string): EmailMessage {
  return {
    to,
    subject: "Confirm your email address for relab",
    text:
      `Confirm that this address belongs to your relab account by opening this link within 24 hours:\n\n` +
      `${appUrl}/verify#token=${token}\n\n` +
      `If you did not ask for this, ignore this email.`,
  };
}

export function passwordResetEmail(to: string, appUrl: string, token: string): EmailMessage {
  return {
    to,
    subject: "Reset your relab password",
    text:
      `Someone asked to reset the password of the relab account of this address. To choose a new ` +
      `password, open this link within one hour:\n\n${appUrl}/reset-password#token=${token}\n\n` +
      `If it was not you, ignore this email; your password stays as it is.`,
  };
}

export function passwordResetDoneEmail(to: string): EmailMessage {
  return {
    to,
    subject: "Your relab password was reset",
    text:
      "The password of your relab account was reset, and every device was signed out. " +
      "If you did not do this, reset your password again at once and contact us.",
  };
}

export function passwordChangedEmail(to: string): EmailMessage {
  return {
    to,
    subject: "Your relab password was changed",
    text:
      "The password of your relab account was changed, and every device was signed out. " +
      "If you did not do this, reset your password at once and contact us.",
  };
}

export function emailChangedEmail(to: string, newAddress: string): EmailMessage {
  return {
    to,
    subject: "Your relab email address was changed",
    text:
      `The email address of your relab account was changed from this address to ${maskAddress(newAddress)}, ` +
      "and every device was signed out. If you did not do this, contact us at once.",
  };
}

// The old mailbox may no longer be the owner's: it learns that a change happened, not where to.
function maskAddress(address: string): string {
  const at = address.lastIndexOf("@");
  return at > 0 ? `${address[0]}***${address.slice(at)}` : "***";
}

export function accountDeletedEmail(to: string, byAdministrator: boolean): EmailMessage {
  return {
    to,
    subject: "Your relab account was deleted",
    text:
      (byAdministrator
        ? "An administrator deleted the relab account of this address. "
        : "The relab account of this address was deleted at your request. ") +
      "Its email address, username, linked sign-ins and cameras are erased and every device was signed out. " +
      "Research data it contributed stays public without your name, unless it was deleted with the account.",
  };
}
