// The console's pages, in navigation order (DESIGN.md "Contracts").
export const consoleNav = [
  { href: "/runs", label: "Runs" },
  { href: "/approvals", label: "Approvals" },
  { href: "/stacks", label: "Stacks" },
  { href: "/triggers", label: "Triggers" },
  { href: "/policies", label: "Policies" },
  { href: "/metrics", label: "Metrics" },
  { href: "/audit", label: "Audit" },
  { href: "/settings", label: "Settings" },
] as const;
