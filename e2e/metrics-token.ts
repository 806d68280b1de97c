/** The metrics token the e2e servers run with (playwright.config.ts) and specs scrape with. */
export const E2E_METRICS_TOKEN = "e2e-metrics-token-not-for-production";
