// Shared by the fake upstream (Node side) and the tests (workerd side); imports nothing, so the
// Worker runtime never loads the fake's Node dependencies.

/** API key the fake email provider accepts. */
export const FAKE_EMAIL_API_KEY = "test-email-provider-key";
