// The shape of a device API answer, shared by the allow-list and the capture upload, which
// answers a relayed command with the server's own refusal.
export const ok = (data, status = 200) => ({ status, data });
export const fail = (status, detail) => ({ status, data: { detail } });
export const isObject = (value) => typeof value === "object" && value !== null && !Array.isArray(value);
