/** The metrics token the e2e servers run with (playwright.config.ts) and specs scrape with. */
export const E2E_METRICS_TOKEN = "e2e-metrics-token-not-for-production";
/** The e2e server's GITHUB_WEBHOOK_SECRET: specs sign deliveries as GitHub does. */
export const E2E_WEBHOOK_SECRET = "e2e-webhook-secret-not-for-production";
